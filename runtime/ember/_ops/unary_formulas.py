"""Derivative formulas of the unary elementwise ops, written in ember ops.

`FORMULAS[name] = (formula, saves)`: `saves` is "input" (the formula reads x from
`node.saved`), "output" (it reads y, the result) or "nothing".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ember import _upper
from ember._ops import pointwise_formulas
from ember._ops.special_formulas import SPECIAL_FORMULAS
from ember._tensor import Tensor, empty_tensor
from ember.autograd._graph import needs_grad

__all__ = ["FORMULAS", "clamp_backward", "where_backward"]

Formula = Callable[[Any, Tensor], Sequence[Any]]


def _ew() -> Any:
    return _upper.ops.elementwise


def _un() -> Any:
    return _upper.ops.unary


def _neg(node: Any, g: Tensor) -> Sequence[Any]:
    return (_un().neg(g),)


def _abs(node: Any, g: Tensor) -> Sequence[Any]:
    (x,) = node.saved
    return (_ew().mul(g, _un().sign(x)),)


def _exp(node: Any, g: Tensor) -> Sequence[Any]:
    (y,) = node.saved
    return (_ew().mul(g, y),)


def _log(node: Any, g: Tensor) -> Sequence[Any]:
    (x,) = node.saved
    return (_ew().div(g, x),)


def _log1p(node: Any, g: Tensor) -> Sequence[Any]:
    (x,) = node.saved
    return (_ew().div(g, _ew().add(x, 1.0)),)


def _expm1(node: Any, g: Tensor) -> Sequence[Any]:
    (y,) = node.saved
    return (_ew().mul(g, _ew().add(y, 1.0)),)


def _sqrt(node: Any, g: Tensor) -> Sequence[Any]:
    (y,) = node.saved
    return (_ew().div(g, _ew().mul(y, 2.0)),)


def _rsqrt(node: Any, g: Tensor) -> Sequence[Any]:
    (y,) = node.saved
    ew = _ew()
    return (ew.mul(ew.mul(g, -0.5), ew.mul(y, ew.mul(y, y))),)


def _reciprocal(node: Any, g: Tensor) -> Sequence[Any]:
    (y,) = node.saved
    ew = _ew()
    return (ew.mul(_un().neg(g), ew.mul(y, y)),)


def _sin(node: Any, g: Tensor) -> Sequence[Any]:
    (x,) = node.saved
    return (_ew().mul(g, _un().cos(x)),)


def _cos(node: Any, g: Tensor) -> Sequence[Any]:
    (x,) = node.saved
    return (_ew().mul(g, _un().neg(_un().sin(x))),)


def _tanh(node: Any, g: Tensor) -> Sequence[Any]:
    (y,) = node.saved
    ew = _ew()
    return (ew.mul(g, ew.sub(1.0, ew.mul(y, y))),)


def _sigmoid(node: Any, g: Tensor) -> Sequence[Any]:
    (y,) = node.saved
    ew = _ew()
    return (ew.mul(g, ew.mul(y, ew.sub(1.0, y))),)


def _erf(node: Any, g: Tensor) -> Sequence[Any]:
    (x,) = node.saved
    ew = _ew()
    return (ew.mul(g, ew.mul(_un().exp(_un().neg(ew.mul(x, x))), 2.0 / math.sqrt(math.pi))),)


def _relu(node: Any, g: Tensor) -> Sequence[Any]:
    (y,) = node.saved
    ew = _ew()
    return (ew.mul(g, _conversion().cast(ew.gt(y, 0), g._dtype)),)


def _gelu(node: Any, g: Tensor) -> Sequence[Any]:
    (x,) = node.saved
    fused = _upper.ops.names.GELU_BACKWARD.kernels.get(x._device.type)
    same = g._shape == x._shape and g._dtype is x._dtype
    if fused is not None and same and not needs_grad(g, x):
        return (_fused_gelu_backward(fused, g, x),)
    ew, un = _ew(), _un()
    cdf = ew.mul(ew.add(un.erf(ew.mul(x, 1.0 / math.sqrt(2.0))), 1.0), 0.5)
    pdf = ew.mul(un.exp(ew.mul(ew.mul(x, x), -0.5)), 1.0 / math.sqrt(2.0 * math.pi))
    return (ew.mul(g, ew.add(cdf, ew.mul(x, pdf))),)


def _fused_gelu_backward(kernel: Any, g: Tensor, x: Tensor) -> Tensor:
    """A device's one-pass GELU derivative (the composite is nine ops)."""
    grad_x = empty_tensor(x._shape, x._dtype, x._device)
    kernel(grad_x, g.contiguous(), x.contiguous())
    return grad_x


def _zero(node: Any, g: Tensor) -> Sequence[Any]:
    return (_ew().mul(g, 0.0),)


def _conversion() -> Any:
    return _upper.ops.conversion


FORMULAS: dict[str, tuple[Formula, str]] = {
    "neg": (_neg, "nothing"),
    "abs": (_abs, "input"),
    "exp": (_exp, "output"),
    "log": (_log, "input"),
    "log1p": (_log1p, "input"),
    "expm1": (_expm1, "output"),
    "sqrt": (_sqrt, "output"),
    "rsqrt": (_rsqrt, "output"),
    "reciprocal": (_reciprocal, "output"),
    "sin": (_sin, "input"),
    "cos": (_cos, "input"),
    "tanh": (_tanh, "output"),
    "sigmoid": (_sigmoid, "output"),
    "erf": (_erf, "input"),
    "relu": (_relu, "output"),
    "gelu": (_gelu, "input"),
    "sign": (_zero, "nothing"),
    "floor": (_zero, "nothing"),
    "ceil": (_zero, "nothing"),
    "round": (_zero, "nothing"),
    "trunc": (_zero, "nothing"),
    **SPECIAL_FORMULAS,
}
FORMULAS.update(pointwise_formulas.UNARY)


def where_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """Inputs (condition, input, other); saved: condition."""
    (condition,) = node.saved
    where = _un().where
    grad_input = where(condition, g, 0.0) if node.needs_input_grad(1) else None
    grad_other = where(condition, 0.0, g) if node.needs_input_grad(2) else None
    return None, grad_input, grad_other


def clamp_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """Inputs (x, min, max): the gradient passes where min <= x <= max (PyTorch's rule);
    min takes it where x < min < max, max where x > max or max < min."""
    ew, where = _ew(), _un().where
    (low_scalar, high_scalar), (has_low, has_high) = node.ctx
    saved = iter(node.saved)
    x = next(saved)
    low = next(saved) if has_low and low_scalar is None else low_scalar
    high = next(saved) if has_high and high_scalar is None else high_scalar
    if has_low and has_high:
        inside = ew.logical_and(ew.ge(x, low), ew.le(x, high))
    else:
        inside = ew.ge(x, low) if has_low else ew.le(x, high)
    grad_x = where(inside, g, 0.0) if node.needs_input_grad(0) else None
    grad_low = grad_high = None
    if node.needs_input_grad(1):
        below = ew.lt(x, low)
        if has_high:
            below = ew.logical_and(below, ew.lt(low, high))
        grad_low = where(below, g, 0.0)
    if node.needs_input_grad(2):
        above = ew.gt(x, high)
        if has_low:
            above = ew.logical_or(above, ew.lt(high, low))
        grad_high = where(above, g, 0.0)
    return grad_x, grad_low, grad_high
