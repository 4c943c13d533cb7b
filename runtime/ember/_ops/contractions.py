"""tensordot, chain_matmul, adjoint, as_strided_scatter, the deprecated out-of-place
`resize`, and the in-place forms of the scaled products (addmm_, addmv_, addr_, baddbmm_,
addbmm_).

All are composites: tensordot is permute + reshape + mm, so it gets autograd from its
parts; the in-place products compute the out-of-place op and write it back through the
autograd write-back helper, as the in-place pointwise ops do.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from ember import _dtype
from ember._ops import creation, indexing, linalg_products, unary
from ember._ops import elementwise as ew
from ember._ops import shape as sh
from ember._ops._meta import wrap_dim
from ember._ops._view_geometry import as_strided
from ember._ops.conversion import clone
from ember._ops.linalg import mm
from ember._ops.memory_formats import contiguous_format
from ember._ops.pointwise_inplace import apply_inplace
from ember._tensor import Tensor

__all__ = [
    "addbmm_", "addmm_", "addmv_", "addr_", "adjoint", "as_strided_scatter", "baddbmm_",
    "chain_matmul", "resize", "resize_as", "tensordot",
]  # fmt: skip


def _dim_lists(a: Tensor, b: Tensor, dims: Any) -> tuple[list[int], list[int]]:
    if isinstance(dims, Tensor):
        dims = dims.item() if dims.numel() == 1 and dims.ndim == 0 else dims.tolist()
    if isinstance(dims, int) and not isinstance(dims, bool):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(a.ndim - dims, a.ndim)), list(range(dims))
    if not isinstance(dims, (list, tuple)) or len(dims) != 2:
        raise TypeError(f"tensordot(): dims must be an int or a pair of lists, got {dims!r}")
    first, second = dims
    first = [first] if isinstance(first, int) else list(first)
    second = [second] if isinstance(second, int) else list(second)
    if len(first) != len(second):
        raise RuntimeError("both dimension lists should have same length")
    return first, second


def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Tensor | None = None) -> Tensor:
    """Sum the products of `a` and `b` over the paired dims (torch.tensordot)."""
    if a._dtype is not b._dtype:
        raise RuntimeError("both inputs should have same dtype")
    first, second = _dim_lists(a, b, dims)
    da = [wrap_dim(d, a.ndim, "tensordot") for d in first]
    db = [wrap_dim(d, b.ndim, "tensordot") for d in second]
    contracted = 1
    for x, y, raw in zip(da, db, first, strict=True):
        if a._shape[x] != b._shape[y]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {a._shape[x]} in "
                f"dim {raw} and second has size {b._shape[y]} in dim {y}"
            )
        contracted *= a._shape[x]
    free_a = [d for d in range(a.ndim) if d not in da]
    free_b = [d for d in range(b.ndim) if d not in db]
    rows = 1
    for d in free_a:
        rows *= a._shape[d]
    cols = 1
    for d in free_b:
        cols *= b._shape[d]
    left = sh.reshape(sh.permute(a, [*free_a, *da]), (rows, contracted))
    right = sh.reshape(sh.permute(b, [*db, *free_b]), (contracted, cols))
    result = sh.reshape(
        mm(left, right), tuple(a._shape[d] for d in free_a) + tuple(b._shape[d] for d in free_b)
    )
    if out is not None:
        out.copy_(result)
        return out
    return result


def chain_matmul(*matrices: Tensor, out: Tensor | None = None) -> Tensor:
    """Deprecated: the product of 2-D matrices, as linalg.multi_dot (torch.chain_matmul)."""
    warnings.warn(
        "ember.chain_matmul is deprecated and will be removed in a future PyTorch release. "
        "Use ember.linalg.multi_dot instead, which accepts a list of two or more tensors "
        "rather than multiple parameters.",
        UserWarning,
        stacklevel=2,
    )
    if len(matrices) == 1:
        if matrices[0].ndim != 2:
            raise RuntimeError(
                f"chain_matmul(): Tensor dimension is {matrices[0].ndim}, expected 2 instead."
            )
        result = matrices[0].clone()
    else:
        for m in matrices:
            if m.ndim != 2:
                raise RuntimeError(
                    f"chain_matmul(): Tensor dimension is {m.ndim}, expected 2 instead."
                )
        result = linalg_products.multi_dot(matrices)
    if out is not None:
        out.copy_(result)
        return out
    return result


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims, as a view (torch.adjoint)."""
    if input.ndim < 2:
        raise RuntimeError(
            "tensor.adjoint() is only supported on matrices or batches of matrices. "
            f"Got {input.ndim}-D tensor."
        )
    return sh.transpose(input, -2, -1)


def as_strided_scatter(
    input: Tensor,
    src: Tensor,
    size: Sequence[int],
    stride: Sequence[int],
    storage_offset: int | None = None,
) -> Tensor:
    """A copy of `input` with `src` written where `input.as_strided(size, stride, offset)`
    reads. As torch: the write goes to a copy of input's whole storage, which is then read
    back through input's own geometry (so a non-contiguous input sees only the written
    elements that fall inside it)."""
    shape = tuple(operator.index(n) for n in size)
    strides = tuple(operator.index(n) for n in stride)
    if tuple(src._shape) != shape:
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(src._shape)}, slice size = {list(shape)}"
        )
    offset = input._offset if storage_offset is None else operator.index(storage_offset)
    itemsize = input._dtype.itemsize
    slots = input._storage.nbytes // itemsize
    needed = (
        0
        if 0 in shape
        else offset + 1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=True))
    )
    if needed > slots:
        raise RuntimeError(
            f"setStorage: sizes {list(shape)}, strides {list(strides)}, storage offset {offset}, "
            f"and itemsize {itemsize} requiring a storage size of {needed * itemsize} are out of "
            f"bounds for storage of size {slots * itemsize}"
        )
    # Storage slot numbers, viewed with each geometry: where src goes, where input reads.
    slot = creation.arange(slots, dtype=_dtype.int64, device=input._device)
    targets = sh.reshape(as_strided(slot, shape, strides, offset), (-1,))
    reads = sh.reshape(as_strided(slot, input._shape, input._strides, input._offset), (-1,))
    # Which src element (or -1) each slot holds, then which each input element reads.
    count = targets.numel()
    holder = creation.full((slots,), -1, dtype=_dtype.int64, device=input._device)
    order = creation.arange(count, dtype=_dtype.int64, device=input._device)
    holder = indexing.scatter(holder, 0, targets, order)
    found = indexing.index_select(holder, 0, reads)
    flat_src = sh.reshape(src.to(input._dtype), (-1,))
    if count == 0:
        return unary.where(ew.ge(sh.reshape(found, input._shape), 0), input, input)
    picked = indexing.index_select(flat_src, 0, unary.clamp(found, 0))
    written = ew.ge(found, 0)
    return sh.reshape(unary.where(written, picked, sh.reshape(input, (-1,))), input._shape)


def resize(t: Tensor, *sizes: Any) -> Tensor:
    """Deprecated out-of-place resize: a reshaped copy with the same number of elements."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return _resized(t, creation.normalize_shape("resize", sizes))


def resize_as(t: Tensor, other: Tensor) -> Tensor:
    """Deprecated out-of-place resize_as."""
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return _resized(t, tuple(other._shape))


def _resized(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    count = 1
    for n in shape:
        count *= n
    if count != t.numel():
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, shape))} ({count} elements in total), "
            f"but the given tensor has a size of {'x'.join(map(str, t._shape))} "
            f"({t.numel()} elements). autograd's resize can only change the shape of a given "
            "tensor, while preserving the number of elements. "
        )
    return sh.reshape(clone(t, memory_format=contiguous_format), shape)


def _inplace_product(name: str, op: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def function(input: Tensor, a: Tensor, b: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return apply_inplace(f"{name}_", input, lambda t: op(t, a, b, beta=beta, alpha=alpha), a, b)

    function.__name__ = function.__qualname__ = f"{name}_"
    function.__doc__ = f"In-place `{name}`: input = beta * input + alpha * (product)."
    return function


addmm_ = _inplace_product("addmm", linalg_products.addmm)
addmv_ = _inplace_product("addmv", linalg_products.addmv)
addr_ = _inplace_product("addr", linalg_products.addr)
baddbmm_ = _inplace_product("baddbmm", linalg_products.baddbmm)
addbmm_ = _inplace_product("addbmm", linalg_products.addbmm)
