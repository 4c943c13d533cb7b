"""embedding_bag: sums, means or maxima of bags of embedding rows, without materialising
the per-index rows of a (B, N, D) lookup.

Bags are laid out on the host from the offsets (their boundaries decide the shapes).
sum/mean gather the rows (through embedding, which owns scale_grad_by_freq's gradient),
weight them (per_sample_weights, and zero for padding_idx) and scatter-add them into their
bags; max pads every bag to the longest with -inf rows and reduces. Empty bags give zeros,
as in PyTorch. Autograd comes from the parts.
"""

from __future__ import annotations

import numpy as np

from ember import _dtype
from ember._ops import creation, indexing, reduction, shape, unary
from ember._tensor import Tensor
from ember.nn.functional._embedding import _renorm_rows, embedding

__all__ = ["embedding_bag", "embedding_bag_with_aux"]

_MODES = {"sum": 0, "mean": 1, "max": 2}
_INDEX_DTYPES = (_dtype.int64, _dtype.int32)


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """One reduced row per bag: bags are input's rows (2-d input) or the runs of 1-d input
    that start at each offset."""
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
            f"then it must have the same shape as the input ({input.shape})"
        )
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets)}"
            )
        offsets = creation.arange(0, input.numel(), input.shape[1], dtype=input._dtype,
                                  device=input._device)  # fmt: skip
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}"
        )
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if sparse:
        raise NotImplementedError("embedding_bag(): sparse gradients are not supported by Ember")
    if max_norm is not None:
        _renorm_rows(weight, input.long(), max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub."
        )
    out, *_ = _bags(
        weight, input, offsets, scale_grad_by_freq, mode, per_sample_weights,
        include_last_offset, padding_idx,
    )  # fmt: skip
    return out


def embedding_bag_with_aux(
    weight: Tensor,
    indices: Tensor,
    offsets: Tensor,
    scale_grad_by_freq: bool = False,
    mode: int = 0,
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """torch.embedding_bag: (output, offset2bag, bag_size, max_indices), mode 0/1/2 for
    sum/mean/max. The last three are bookkeeping: each index's bag, each bag's count of
    non-padding indices (mean and max modes), and (max mode) the weight row behind each
    maximum."""
    if sparse:
        raise NotImplementedError("embedding_bag(): sparse gradients are not supported by Ember")
    names = {v: k for k, v in _MODES.items()}
    if mode not in names:
        raise RuntimeError(f"embedding_bag(): unknown mode {mode}")
    return _bags(
        weight, indices, offsets, scale_grad_by_freq, names[mode], per_sample_weights,
        include_last_offset, padding_idx,
    )  # fmt: skip


def _padding(padding_idx: int | None, count: int) -> int:
    if padding_idx is None:
        return -1
    if not -count <= padding_idx < count:
        raise RuntimeError(
            f"padding_idx must be within the number of embeddings, {-count} through "
            f"{count - 1}, but got {padding_idx}"
        )
    return padding_idx + count if padding_idx < 0 else padding_idx


def _bags(
    weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool, mode: str,
    per_sample_weights: Tensor | None, include_last_offset: bool, padding_idx: int | None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:  # fmt: skip
    if indices._dtype not in _INDEX_DTYPES or offsets._dtype not in _INDEX_DTYPES:
        raise RuntimeError(
            "embedding_bag(): expected indices and offsets of one of the following scalar "
            f"types: Long, Int; but got {indices._dtype.name} and {offsets._dtype.name}"
        )
    count, width = weight.shape
    padding = _padding(padding_idx, count)
    rows = indices.long()
    length = rows.shape[0]
    starts = offsets.numpy(force=True).astype(np.int64)
    if starts.size and starts[0] != 0:
        raise RuntimeError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
            f"from position 0. However, got {starts[0]}"
        )
    if starts.size and starts[-1] > length:
        raise RuntimeError(
            f"offsets[-1] can not be greater than input's length ({length}), but got "
            f"offsets[-1] of {starts[-1]}"
        )
    # With include_last_offset the last offset only closes the list: the last bag runs to
    # the end of the input either way (as PyTorch's kernels read it).
    bags = max(len(starts) - 1, 0) if include_last_offset else len(starts)
    bounds = np.append(starts[:bags], length)
    host_rows = rows.numpy(force=True)
    bag_of = np.repeat(np.arange(bags), np.diff(bounds))
    kept = host_rows != padding
    sizes = np.bincount(bag_of[kept], minlength=bags)[:bags]
    device = weight._device
    offset2bag = creation.tensor(bag_of, dtype=_dtype.int64, device=device)
    bag_size = creation.tensor(sizes, dtype=_dtype.int64, device=device)
    picked = embedding(rows, weight, None, None, 2.0, scale_grad_by_freq)  # (L, D)
    if mode == "max":
        out, max_indices = _max_bags(picked, host_rows, bag_of, kept, bags, sizes)
        return out, offset2bag, bag_size, max_indices
    scale = kept.astype(np.float64)
    if mode == "mean":
        scale = scale / np.maximum(sizes, 1)[bag_of]
    factors = creation.tensor(scale, dtype=weight._dtype, device=device)
    if per_sample_weights is not None:
        factors = factors * per_sample_weights
    weighted = picked * factors.unsqueeze(1)
    target = shape.expand(offset2bag.unsqueeze(1), (length, width))
    zeros = creation.zeros((bags, width), dtype=weight._dtype, device=device)
    out = indexing.scatter_add(zeros, 0, target, weighted)
    if mode == "mean":  # PyTorch's CPU kernels return the bag sizes in both slots here
        return out, offset2bag, bag_size, bag_size.clone()
    nothing = creation.zeros(bags, dtype=_dtype.int64, device=device)
    return out, offset2bag, nothing, nothing.clone()


def _max_bags(
    picked: Tensor, host_rows: np.ndarray, bag_of: np.ndarray, kept: np.ndarray, bags: int,
    sizes: np.ndarray,
) -> tuple[Tensor, Tensor]:  # fmt: skip
    """Each bag's elementwise max: bags padded to the longest with a -inf row."""
    length, width = picked.shape
    longest = max(int(sizes.max()) if sizes.size else 0, 1)
    table = np.full((bags, longest), length, dtype=np.int64)  # `length` names the -inf row
    fill = np.zeros(bags, dtype=np.int64)
    for i in np.nonzero(kept)[0]:
        b = bag_of[i]
        table[b, fill[b]] = i
        fill[b] += 1
    device = picked._device
    filler = creation.full((1, width), -float("inf"), dtype=picked._dtype, device=device)
    extended = shape.cat([picked, filler], 0)
    index = creation.tensor(table.reshape(-1), dtype=_dtype.int64, device=device)
    windows = indexing.index_select(extended, 0, index).reshape(bags, longest, width)
    values, which = reduction.max(windows, 1)
    empty = creation.tensor(sizes == 0, device=device).unsqueeze(1)
    values = unary.where(empty, 0.0, values)
    row_of = np.append(host_rows, -1)[table]  # (bags, longest): weight rows, -1 for filler
    rows = creation.tensor(row_of, dtype=_dtype.int64, device=device)
    max_indices = indexing.gather(rows, 1, which)
    return values, unary.where(empty, 0, max_indices)
