"""The indexing composites: take, index_select, scatter_ and scatter_add_ on the gather
and index_put_ primitives.

Each composite has its op's kernel signature (ember._ops.names), so the ops' meta steps
and derivative formulas stay as they are; `take_into`, `index_select_into` and
`scatter_into` call a device's own kernel when it registered one (cpu and opencl do, for
speed) and the composite otherwise. Indices reach here range-checked and non-negative.
"""

from __future__ import annotations

from ember._dispatch import Kernel, Op, kernel_for
from ember._ops import _launch, names
from ember._ops._index_tensors import flat, int64_arange, int64_binary
from ember._tensor import Tensor, contiguous_strides, empty_tensor, make_view

__all__ = ["index_select_into", "scatter_into", "take_into"]


def _kernel(op: Op, t: Tensor, composite: Kernel) -> Kernel:
    fn = op.kernels.get(t._device.type)
    return composite if fn is None else fn


def take_into(out: Tensor, a: Tensor, index: Tensor) -> None:
    """out[i] = a.flatten()[index[i]] (out and index 1-d of equal length)."""
    _kernel(names.TAKE, a, take)(out, a, index)


def index_select_into(out: Tensor, a: Tensor, dim: int, index: Tensor) -> None:
    """out = a re-indexed along `dim` by the 1-d `index` (a at least 1-d)."""
    _kernel(names.INDEX_SELECT, a, index_select)(out, a, dim, index)


def scatter_into(op: Op, target: Tensor, dim: int, index: Tensor, src: Tensor) -> None:
    """scatter_ or scatter_add_ (`op`) of `src` (cut to index's shape) into `target`."""
    composite = scatter_add_ if op is names.SCATTER_ADD else scatter_
    _kernel(op, target, composite)(target, dim, index, src)


# -- the composites ----------------------------------------------------------------------------


def take(out: Tensor, a: Tensor, index: Tensor) -> None:
    """take as a gather along the one dim of a's row-major elements (a view when a is
    contiguous); out and index may have any shape, the same."""
    n = index.numel()
    dest = out if out._contiguous else empty_tensor(out._shape, out._dtype, out._device)
    kernel_for(names.GATHER, a._device, a._dtype)(
        make_view(dest, dest._offset, (n,), (1,)), flat(a), 0, flat(index)
    )
    if dest is not out:
        _launch.copy(out, dest)


def index_select(out: Tensor, a: Tensor, dim: int, index: Tensor) -> None:
    """index_select as a gather whose index is the 1-d index broadcast to out's shape
    (zero strides everywhere but along `dim`: no copy)."""
    step = index._strides[0] if index._shape else 0
    strides = tuple(step if d == dim else 0 for d in range(len(out._shape)))
    spread = make_view(index, index._offset, out._shape, strides)
    kernel_for(names.GATHER, a._device, a._dtype)(out, a, dim, spread)


def scatter_(target: Tensor, dim: int, index: Tensor, src: Tensor) -> None:
    """scatter_ as an index_put_ at the row-major positions, within target, that index
    names (the last write wins among duplicates, in index's row-major order)."""
    _put(target, dim, index, src, False)


def scatter_add_(target: Tensor, dim: int, index: Tensor, src: Tensor) -> None:
    """scatter_add_ as an accumulating index_put_ (duplicates add up)."""
    _put(target, dim, index, src, True)


def _put(target: Tensor, dim: int, index: Tensor, src: Tensor, accumulate: bool) -> None:
    positions = flat(_positions(target._shape, dim, index))
    values = flat(src)
    kernel_for(names.INDEX_PUT, target._device, target._dtype)(
        target, positions, values, accumulate
    )


def _positions(shape: tuple[int, ...], dim: int, index: Tensor) -> Tensor:
    """The row-major number within `shape` of every element that scatter writes: index's
    own coordinates, with the one along `dim` replaced by the index value."""
    row_major = contiguous_strides(shape)
    ndim = len(shape)
    total = index
    if row_major[dim] != 1:
        total = int64_binary("mul", index, row_major[dim])
    for d, size in enumerate(index._shape):
        if d == dim or size == 1:
            continue
        steps = int64_arange(size, row_major[d], index._device)
        along = tuple(size if i == d else 1 for i in range(ndim))
        total = int64_binary("add", total, make_view(steps, 0, along, contiguous_strides(along)))
    return total
