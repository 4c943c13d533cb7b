"""Launching planned kernels: the plan of a call, then one kernel call with storages.

Every op of the memory, elementwise, reduction and scan families reaches its device
through these functions, which build the call's plan (`ember._plan`) from the tensors
the meta step prepared, skip empty calls, and pass storages and converted scalars.
"""

from __future__ import annotations

from typing import Any, Final

from ember._dispatch import Op, kernel_for
from ember._dtype import ALL_DTYPES
from ember._ops import names
from ember._ops._meta import broadcast_strides
from ember._plan import (
    ElementwisePlan,
    ReductionPlan,
    contiguous_plan,
    elementwise_plan,
    reduction_plan,
)
from ember._tensor import Tensor

__all__ = [
    "CONTIGUOUS_FULL_PLANS",
    "copy",
    "fill",
    "full_reduction_plan",
    "launch_binary",
    "launch_reduction",
    "launch_scan",
    "launch_unary",
    "launch_where",
    "plan_for",
    "reduction_plan_for",
]


def plan_for(out: Tensor, operands: tuple[Any, ...]) -> ElementwisePlan:
    """The plan of writing `out` from `operands` (tensors broadcastable to out's shape,
    or Python scalars already converted to the computation dtype)."""
    shape = out._shape
    flat = out._contiguous
    scalar_at = -1
    dtypes = [out._dtype]
    offsets = [out._offset]
    for i, x in enumerate(operands, 1):
        if type(x) is Tensor or isinstance(x, Tensor):
            dtypes.append(x._dtype)
            offsets.append(x._offset)
            if flat and not (x._contiguous and x._shape == shape):
                flat = False
        else:
            # A scalar has the computation dtype: that of the tensor inputs.
            dtypes.append(out._dtype)
            offsets.append(0)
            scalar_at = i
    if scalar_at > 0 and len(operands) > 1:
        dtypes[scalar_at] = dtypes[3 - scalar_at]
    if flat:
        if not any(offsets):
            return contiguous_plan(shape, tuple(dtypes), scalar_at)
        numel = 1
        for size in shape:
            numel *= size
        flat_strides = tuple((0,) if i == scalar_at else (1,) for i in range(len(dtypes)))
        return ElementwisePlan((numel,), flat_strides, tuple(offsets), tuple(dtypes), True)
    strides: list[tuple[int, ...] | None] = [out._strides]
    for x in operands:
        if isinstance(x, Tensor):
            strides.append(
                x._strides if x._shape == shape else broadcast_strides(x._shape, x._strides, shape)
            )
        else:
            strides.append(None)
    key = (shape, *strides, *offsets, *dtypes)
    plan = _STRIDED.get(key)
    if plan is None:
        plan = elementwise_plan(shape, tuple(strides), tuple(offsets), tuple(dtypes))
        if len(_STRIDED) < _CACHE_LIMIT:
            _STRIDED[key] = plan
    return plan


# Plans of the layouts a program repeats (strided, broadcast, reductions), by layout: a
# key costs a fraction of coalescing again. Bounded: a program that never repeats a layout
# just builds its plans.
_CACHE_LIMIT: Final = 4096
_STRIDED: dict[tuple[object, ...], ElementwisePlan] = {}
_REDUCTIONS: dict[tuple[object, ...], ReductionPlan] = {}


def _storage(x: Any) -> Any:
    return x._storage if isinstance(x, Tensor) else x


def _empty(t: Tensor) -> bool:
    return 0 in t._shape


def copy(dst: Tensor, src: Tensor) -> None:
    """dst[...] = src[...] (src broadcast to dst's shape, converted to dst's dtype)."""
    if _empty(dst):
        return
    kernel_for(names.COPY, dst._device, dst._dtype)(
        dst._storage, src._storage, plan_for(dst, (src,))
    )


def fill(dst: Tensor, value: Any) -> None:
    """Every element of dst becomes `value` (already converted to dst's dtype)."""
    if _empty(dst):
        return
    plan = plan_for(dst, ())
    kernel_for(names.FILL, dst._device, dst._dtype)(dst._storage, value, plan)


def launch_unary(op: Op, out: Tensor, a: Tensor) -> None:
    """out = op(a)."""
    if _empty(out):
        return
    kernel_for(op, out._device, a._dtype)(out._storage, a._storage, plan_for(out, (a,)))


def launch_binary(op: Op, out: Tensor, a: Any, b: Any, compute: Any) -> None:
    """out = op(a, b) for operands of the computation dtype `compute`."""
    if _empty(out):
        return
    kernel_for(op, out._device, compute)(
        out._storage, _storage(a), _storage(b), plan_for(out, (a, b))
    )


def launch_where(out: Tensor, condition: Tensor, a: Tensor, b: Tensor) -> None:
    """out = condition ? a : b."""
    if _empty(out):
        return
    plan = plan_for(out, (condition, a, b))
    kernel_for(names.WHERE, out._device, out._dtype)(
        out._storage, condition._storage, a._storage, b._storage, plan
    )


def reduction_plan_for(out: Tensor, a: Tensor, dims: tuple[int, ...]) -> ReductionPlan:
    """The plan of reducing `dims` of `a` into `out` (keepdim form: a's ndim)."""
    key = (a._shape, a._strides, out._strides, dims, out._offset, a._offset, out._dtype, a._dtype)
    plan = _REDUCTIONS.get(key)
    if plan is None:
        out_strides = tuple(0 if d in dims else s for d, s in enumerate(out._strides))
        plan = reduction_plan(
            a._shape,
            a._strides,
            out_strides,
            dims,
            (out._offset, a._offset),
            (out._dtype, a._dtype),
        )
        if len(_REDUCTIONS) < _CACHE_LIMIT:
            _REDUCTIONS[key] = plan
    return plan


_FULL: dict[tuple[object, ...], ReductionPlan] = {}


def full_reduction_plan(a: Tensor, out_dtype: Any) -> ReductionPlan:
    """The plan of reducing every dim of `a` into a 0-d output (cached per layout)."""
    key = (a._shape, a._strides, a._offset, a._dtype, out_dtype)
    plan = _FULL.get(key)
    if plan is None:
        ndim = len(a._shape)
        plan = reduction_plan(
            a._shape, a._strides, (0,) * ndim, tuple(range(ndim)), (0, a._offset),
            (out_dtype, a._dtype),
        )  # fmt: skip
        if len(_FULL) < 4096:
            _FULL[key] = plan
    return plan


class _ContiguousFullPlans(dict[tuple[int, ...], ReductionPlan]):
    """Full-reduction plans of contiguous inputs at offset 0 of one dtype, by shape."""

    __slots__ = ("dtype",)

    def __init__(self, dt: Any) -> None:
        super().__init__()
        self.dtype = dt

    def __missing__(self, shape: tuple[int, ...]) -> ReductionPlan:
        ndim = len(shape)
        strides = []
        step = 1
        for size in reversed(shape):
            strides.append(step)
            step *= size if size > 1 else 1
        plan = reduction_plan(
            shape, tuple(reversed(strides)), (0,) * ndim, tuple(range(ndim)), (0, 0),
            (self.dtype, self.dtype),
        )  # fmt: skip
        if len(self) < 1024:
            self[shape] = plan
        return plan


#: Per dtype: the plans of `t.sum()`'s fast path (a contiguous float input at offset 0).
CONTIGUOUS_FULL_PLANS: Final = {dt: _ContiguousFullPlans(dt) for dt in ALL_DTYPES}


def launch_reduction(op: Op, out: Tensor, a: Tensor, dims: tuple[int, ...]) -> None:
    """out (keepdim form) = op over `dims` of a; an empty reduction gives the identity,
    which the kernel writes when plan.numel_reduced is 0."""
    if _empty(out):
        return
    kernel_for(op, a._device, a._dtype)(out._storage, a._storage, reduction_plan_for(out, a, dims))


def launch_scan(op: Op, out: Tensor, a: Tensor, dim: int) -> None:
    """argmax/argmin (out in keepdim form) or cumsum (out of a's shape) along `dim`."""
    if _empty(out) or _empty(a):
        return
    key = (a._shape, a._strides, out._shape, out._strides, -1 - dim, out._offset, a._offset,
           out._dtype, a._dtype)  # fmt: skip
    plan = _REDUCTIONS.get(key)
    if plan is None:
        plan = _scan_plan(out, a, dim)
        if len(_REDUCTIONS) < _CACHE_LIMIT:
            _REDUCTIONS[key] = plan
    kernel_for(op, a._device, a._dtype)(out._storage, a._storage, plan)


def _scan_plan(out: Tensor, a: Tensor, dim: int) -> ReductionPlan:
    if a._shape:
        out_strides = (
            out._strides
            if out._shape == a._shape
            else tuple(0 if d == dim else s for d, s in enumerate(out._strides))
        )
        shape, in_strides, reduced = a._shape, a._strides, (dim,)
    else:
        shape, in_strides, out_strides, reduced = (1,), (0,), (0,), (0,)
    return reduction_plan(
        shape,
        in_strides,
        out_strides,
        reduced,
        (out._offset, a._offset),
        (out._dtype, a._dtype),
        merge_reduced=False,
    )
