"""Multi-tensor ops over a list of tensors (PyTorch's `_foreach_norm` and `_foreach_mul_`).

Per tensor, a norm is three ops (square, sum, sqrt) and a scale one more, each a Python
call and a kernel launch; clipping a model's gradients pays that for every parameter. A
device's `foreach_norm` and `foreach_mul_` kernels (`ember.plugins.ops`) take the whole
list in one call; without them, or for lists they do not take (mixed dtypes or devices,
strided tensors), the per-tensor composites below run, on any device.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ember._ops import elementwise as ew
from ember._ops import names, shape, unary
from ember._ops import reduction as reduce_ops
from ember._tensor import Tensor, empty_tensor

__all__ = ["mul_", "norms", "vector_norm"]

# The orders a foreach_norm kernel computes; others run the composite.
_KERNEL_ORDS = (1.0, 2.0, math.inf)


def vector_norm(t: Tensor, norm_type: float) -> Tensor:
    """The p-norm of all of t's elements, as a 0-d tensor (the per-tensor composite)."""
    if norm_type == math.inf:
        return reduce_ops.amax(unary.abs(t))
    if norm_type == -math.inf:
        return reduce_ops.amin(unary.abs(t))
    if norm_type == 0:
        return reduce_ops.sum(ew.ne(t, 0), dtype=t._dtype)
    if norm_type == 1:
        return reduce_ops.sum(unary.abs(t))
    if norm_type == 2:
        return unary.sqrt(reduce_ops.sum(ew.mul(t, t)))
    return ew.pow(reduce_ops.sum(ew.pow(unary.abs(t), norm_type)), 1.0 / norm_type)


def _one_kind(tensors: Sequence[Tensor]) -> bool:
    """Dense tensors of one floating dtype on one device: what the kernels take."""
    first = tensors[0]
    dt, dev = first._dtype, first._device
    return dt.is_floating_point and all(
        t._dtype is dt and t._device is dev and t._contiguous for t in tensors
    )


def norms(tensors: Sequence[Tensor], norm_type: float, *, foreach: bool = True) -> Tensor:
    """The `norm_type`-norm of each tensor, stacked (len(tensors),); no autograd.

    One `foreach_norm` call when `foreach` and the device has the kernel; otherwise one
    norm per tensor, converted to the first one's dtype (as clip_grad_norm_ stacks them).
    """
    first = tensors[0]
    if foreach and norm_type in _KERNEL_ORDS and _one_kind(tensors):
        kernel = names.FOREACH_NORM.kernels.get(first._device.type)
        if kernel is not None:
            out = empty_tensor((len(tensors),), first._dtype, first._device)
            kernel(out, list(tensors), norm_type)
            return out
    each = [vector_norm(t, norm_type) for t in tensors]
    return shape.stack([n if n._dtype is first._dtype else n.to(first._dtype) for n in each])


def mul_(tensors: Sequence[Tensor], scalar: Tensor, *, foreach: bool = True) -> None:
    """Multiply every tensor by the one-element `scalar` in place (no autograd).

    One `foreach_mul_` call when `foreach` and the device has the kernel (scalar converted
    to the tensors' dtype and device once); otherwise one mul_ per tensor.
    """
    if not tensors:
        return
    first = tensors[0]
    if foreach and _one_kind(tensors):
        kernel = names.FOREACH_MUL_.kernels.get(first._device.type)
        if kernel is not None:
            value = scalar.to(first._device, first._dtype).reshape(1).contiguous()
            kernel(list(tensors), value)
            for t in tensors:  # written in place: whatever saved them must see it
                t._storage.version += 1
            return
    converted: dict[tuple[object, object], Tensor] = {}
    for t in tensors:
        key = (t._dtype, t._device)
        factor = converted.get(key)
        if factor is None:
            factor = converted[key] = scalar.to(t._device, t._dtype)
        ew.mul_(t, factor)
