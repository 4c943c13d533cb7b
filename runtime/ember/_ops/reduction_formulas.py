"""Derivative formulas of the reductions, written in ember ops.

`node.ctx` carries the input's shape and the reduced dims in keepdim form; a gradient
without keepdim is first reshaped to that form, then broadcast against the input. The
formulas avoid `where` and indexing ops: masks enter as multiplications by 0/1 tensors,
so that every formula is differentiable again through ops whose derivatives are defined
in this package. Reverse cumulative sums are their own recorded op (its derivative is
cumsum), so cumsum has derivatives of every order too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember import _dtype, _upper
from ember._ops import _launch, names
from ember._ops._composites_index import index_select_into
from ember._tensor import Tensor, empty_tensor
from ember.autograd._graph import needs_grad, record

__all__ = [
    "cumsum_backward", "extreme_backward", "prod_backward", "reverse_cumsum", "sum_backward",
    "value_at_index_backward",
]  # fmt: skip

Shape = tuple[int, ...]


def _keep(g: Tensor, keep_shape: Shape) -> Tensor:
    """The gradient of a reduction in keepdim form (its dims of size 1 restored)."""
    if g._shape == keep_shape:
        return g

    return _upper.ops.shape.reshape(g, keep_shape)


def sum_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """ctx: (input shape, keepdim shape)."""
    input_shape, keep_shape = node.ctx
    return (_upper.ops.shape.expand(_keep(g, keep_shape), input_shape),)


def prod_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """ctx: (dims, keepdim shape); saved: the input.

    d(prod)/dx_i is the product of the other elements. With `safe` (x with its zeros
    replaced by ones) and P = prod(safe): P / x_i when nothing is zero; P at the one zero
    and 0 elsewhere when one element is zero; 0 everywhere with two or more zeros. The
    zero-valued terms are written as products with the zero elements themselves (`spare`)
    so that the second derivatives come out right at zeros too.
    """
    ops = _upper.ops
    conv, ew, red = ops.conversion, ops.elementwise, ops.reduction
    (x,) = node.saved
    dims, keep_shape = node.ctx
    dt = x._dtype
    is_zero = ew.eq(x, 0)
    zero = conv.cast(is_zero, dt)
    safe = ew.add(x, zero)
    product = red.prod(safe, dims, keepdim=True)
    # Sum of the zero elements: 0 in value, with derivative 1 with respect to each of them.
    spare = red.sum(ew.mul(x, zero), dims, keepdim=True)
    count = red.sum(is_zero, dims, keepdim=True)
    one, two = (conv.cast(ew.eq(count, n), dt) for n in (1, 2))
    none = conv.cast(ew.eq(count, 0), dt)
    quotient = ew.div(product, safe)
    # One zero: P at it; P / x_i times the zero elsewhere (zero-valued, right derivative).
    single = ew.mul(quotient, ew.add(zero, ew.mul(ew.sub(1.0, zero), spare)))
    # Two zeros: at each zero, P times the other zero (zero-valued, right derivative).
    double = ew.mul(ew.mul(product, zero), ew.sub(spare, x))
    others = ew.add(ew.add(ew.mul(quotient, none), ew.mul(single, one)), ew.mul(double, two))
    return (ew.mul(_keep(g, keep_shape), others),)


def extreme_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """amax/amin and full max()/min(): ctx (dims, keepdim shape); saved: input, output.

    The gradient is shared evenly among the elements equal to the extreme (PyTorch's rule).
    """
    ops = _upper.ops
    conv, ew, red = ops.conversion, ops.elementwise, ops.reduction
    x, y = node.saved
    dims, keep_shape = node.ctx
    mask = conv.cast(ew.eq(x, _keep(y, keep_shape)), x._dtype)
    count = red.sum(mask, dims, keepdim=True)
    return (ew.mul(ew.div(_keep(g, keep_shape), count), mask),)


def value_at_index_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """max/min along a dim: the gradient goes to the position of `indices` (saved).

    ctx: (input shape, dim, keepdim shape).
    """

    ops = _upper.ops
    conv, ew = ops.conversion, ops.elementwise
    (indices,) = node.saved
    input_shape, d, keep_shape = node.ctx
    if not input_shape:
        return (g,)
    n = input_shape[d]
    positions = _upper.ops.shape.reshape(
        _upper.ops.creation.arange(n, dtype=_dtype.int64, device=g._device),
        tuple(n if i == d else 1 for i in range(len(input_shape))),
    )
    one_hot = conv.cast(ew.eq(positions, _keep(indices, keep_shape)), g._dtype)
    return (ew.mul(_keep(g, keep_shape), one_hot),)


def cumsum_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """ctx: the dim. The gradient of a cumulative sum is the reversed cumulative sum."""
    return (reverse_cumsum(g, node.ctx),)


def reverse_cumsum(g: Tensor, d: int) -> Tensor:
    """out[i] = sum of g[j] for j >= i along `d` (flip, cumsum, flip; no cancellation)."""
    if not g._shape or g._shape[d] <= 1:
        return g

    dev, dt = g._device, g._dtype
    n = g._shape[d]
    backwards = _upper.ops.creation.arange(n - 1, -1, -1, dtype=_dtype.int64, device=dev)
    flipped = empty_tensor(g._shape, dt, dev)
    summed = empty_tensor(g._shape, dt, dev)
    out = empty_tensor(g._shape, dt, dev)
    if out.numel():
        index_select_into(flipped, g, d, backwards)
        _launch.launch_scan(names.CUMSUM, summed, flipped, d)
        index_select_into(out, summed, d, backwards)
    if g._autograd is not None and needs_grad(g):
        record("CumsumBackwardBackward", _reverse_cumsum_backward, (g,), out, ctx=d)
    return out


def _reverse_cumsum_backward(node: Any, g: Tensor) -> Sequence[Any]:

    return (_upper.ops.reduction.cumsum(g, node.ctx),)
