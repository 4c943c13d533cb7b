"""Embedding lookups and one-hot encoding."""

from __future__ import annotations

from ember import _dtype
from ember._ops import conversion, creation, indexing, reduction, unary
from ember._ops import elementwise as ew
from ember._ops import shape as shape_ops
from ember._ops._index_tensors import bounds
from ember._tensor import Tensor
from ember.autograd._graph import needs_grad, record
from ember.autograd._mode import no_grad
from ember.autograd._node import FormulaNode

__all__ = ["embedding", "one_hot"]

_INDEX_DTYPES = (_dtype.int64, _dtype.int32)


def _padding_index(padding_idx: int | None, count: int) -> int:
    """padding_idx made non-negative, or -1 for none."""
    if padding_idx is None:
        return -1
    if padding_idx >= count or padding_idx < -count:
        raise AssertionError("Padding_idx must be within num_embeddings")
    return padding_idx + count if padding_idx < 0 else padding_idx


def _renorm_rows(weight: Tensor, rows: Tensor, max_norm: float, norm_type: float) -> None:
    """Scale the referenced rows of `weight` in place so their norm is at most max_norm."""
    with no_grad():
        picked = indexing.index_select(weight, 0, rows)
        size = unary.abs(picked)
        norms = ew.pow(reduction.sum(ew.pow(size, norm_type), 1, keepdim=True), 1.0 / norm_type)
        # PyTorch's renorm: rows above max_norm are scaled by max_norm / (norm + 1e-7).
        scale = unary.where(ew.gt(norms, max_norm), ew.div(max_norm, ew.add(norms, 1e-7)), 1.0)
        expanded = shape_ops.expand(shape_ops.unsqueeze(rows, 1), picked._shape)
        indexing.scatter_(weight, 0, expanded, ew.mul(picked, scale))


def _embedding_backward(node: FormulaNode, grad: Tensor) -> tuple[None, Tensor]:
    (rows,) = node.saved
    count, padding, scale_by_frequency = node.ctx
    width = grad._shape[-1]
    g = shape_ops.reshape(grad, (-1, width))
    if padding >= 0:
        g = ew.mul(g, shape_ops.unsqueeze(conversion.cast(ew.ne(rows, padding), g._dtype), 1))
    if scale_by_frequency:
        ones = creation.ones(rows._shape, dtype=g._dtype, device=g._device)
        zeros = creation.zeros((count,), dtype=g._dtype, device=g._device)
        frequency = indexing.index_select(indexing.scatter_add(zeros, 0, rows, ones), 0, rows)
        g = ew.div(g, shape_ops.unsqueeze(frequency, 1))
    positions = shape_ops.expand(shape_ops.unsqueeze(rows, 1), g._shape)
    zeros = creation.zeros((count, width), dtype=g._dtype, device=g._device)
    return None, indexing.scatter_add(zeros, 0, positions, g)


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of `weight` (num_embeddings, embedding_dim) at the indices in `input`."""
    if sparse:
        raise NotImplementedError("embedding(): sparse gradients are not supported by Ember")
    if input._dtype not in _INDEX_DTYPES:
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {input._dtype.name} instead (while checking arguments "
            "for embedding)"
        )
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    count = weight._shape[0]
    padding = _padding_index(padding_idx, count)
    rows = shape_ops.reshape(conversion.cast(input, _dtype.int64), (-1,))
    if rows.numel():
        low, high = bounds(rows)
        if low < 0 or high >= count:
            raise IndexError("index out of range in self")
    if max_norm is not None:
        _renorm_rows(weight, rows, max_norm, norm_type)
    grad = needs_grad(weight)
    out = indexing.index_select(weight.detach() if grad else weight, 0, rows)
    out = shape_ops.reshape(out, (*input._shape, weight._shape[1]))
    if not grad:
        return out
    ctx = (count, padding, scale_grad_by_freq)
    return record("EmbeddingBackward0", _embedding_backward, (input, weight), out, (rows,), ctx=ctx)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding with a new last dimension of size num_classes."""
    if tensor._dtype is not _dtype.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel():
        low, high = bounds(tensor)
        if low < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = high + 1
        elif high >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    elif num_classes == -1:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    out = creation.zeros((*tensor._shape, num_classes), dtype=_dtype.int64, device=tensor._device)
    if tensor.numel():
        indexing.scatter_(out, -1, shape_ops.unsqueeze(tensor, -1), 1)
    return out
