"""Derivative formulas of the trigonometric, hyperbolic, log/exp-base and binary math
primitives (acos ... exp2; atan2, hypot, copysign, fmax, fmin), as PyTorch defines them.

`UNARY` joins `unary_formulas.FORMULAS` (formula, saves) and `BINARY` joins the binary
formulas (`binary_formulas.Formula`); both are written in ember ops, so they are
differentiable again.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ember import _upper
from ember._ops.binary_formulas import Formula
from ember._tensor import Tensor

__all__ = ["BINARY", "UNARY"]

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


def _ew() -> Any:
    return _upper.ops.elementwise


def _un() -> Any:
    return _upper.ops.unary


def _one_minus_square(x: Tensor) -> Tensor:
    ew = _ew()
    return ew.sub(1.0, ew.mul(x, x))


def _acos(node: Any, g: Tensor) -> Sequence[Any]:
    (x,) = node.saved
    return (_ew().mul(_un().neg(g), _un().rsqrt(_one_minus_square(x))),)


def _asin(node: Any, g: Tensor) -> Sequence[Any]:
    (x,) = node.saved
    return (_ew().mul(g, _un().rsqrt(_one_minus_square(x))),)


def _atan(node: Any, g: Tensor) -> Sequence[Any]:
    (x,) = node.saved
    ew = _ew()
    return (ew.div(g, ew.add(ew.mul(x, x), 1.0)),)


def _sinh(node: Any, g: Tensor) -> Sequence[Any]:
    (x,) = node.saved
    return (_ew().mul(g, _upper.ops.cosh(x)),)


def _cosh(node: Any, g: Tensor) -> Sequence[Any]:
    (x,) = node.saved
    return (_ew().mul(g, _upper.ops.sinh(x)),)


def _tan(node: Any, g: Tensor) -> Sequence[Any]:
    (y,) = node.saved
    ew = _ew()
    return (ew.mul(g, ew.add(ew.mul(y, y), 1.0)),)


def _asinh(node: Any, g: Tensor) -> Sequence[Any]:
    (x,) = node.saved
    ew = _ew()
    return (ew.mul(g, _un().rsqrt(ew.add(ew.mul(x, x), 1.0))),)


def _acosh(node: Any, g: Tensor) -> Sequence[Any]:
    (x,) = node.saved
    ew = _ew()
    return (ew.mul(g, _un().rsqrt(ew.sub(ew.mul(x, x), 1.0))),)


def _atanh(node: Any, g: Tensor) -> Sequence[Any]:
    (x,) = node.saved
    return (_ew().div(g, _one_minus_square(x)),)


def _log2(node: Any, g: Tensor) -> Sequence[Any]:
    (x,) = node.saved
    ew = _ew()
    return (ew.div(g, ew.mul(x, _LN2)),)


def _log10(node: Any, g: Tensor) -> Sequence[Any]:
    (x,) = node.saved
    ew = _ew()
    return (ew.div(g, ew.mul(x, _LN10)),)


def _exp2(node: Any, g: Tensor) -> Sequence[Any]:
    (y,) = node.saved
    ew = _ew()
    return (ew.mul(g, ew.mul(y, _LN2)),)


UNARY: dict[str, tuple[Callable[[Any, Tensor], Sequence[Any]], str]] = {
    "acos": (_acos, "input"),
    "asin": (_asin, "input"),
    "atan": (_atan, "input"),
    "sinh": (_sinh, "input"),
    "cosh": (_cosh, "input"),
    "tan": (_tan, "output"),
    "asinh": (_asinh, "input"),
    "acosh": (_acosh, "input"),
    "atanh": (_atanh, "input"),
    "log2": (_log2, "input"),
    "log10": (_log10, "input"),
    "exp2": (_exp2, "output"),
}


def _save_both(a: Any, b: Any) -> Any:
    return (a if isinstance(a, Tensor) else None), (b if isinstance(b, Tensor) else None)


def _operands(node: Any) -> tuple[Any, Any]:
    saved = node.saved
    saved_a, saved_b = saved if saved else (None, None)
    a_scalar, b_scalar = node.ctx
    return (saved_a if a_scalar is None else a_scalar), (saved_b if b_scalar is None else b_scalar)


def _square(x: Any) -> Any:
    return _ew().mul(x, x) if isinstance(x, Tensor) else x * x


def _atan2(node: Any, g: Tensor) -> Sequence[Any]:
    ew = _ew()
    a, b = _operands(node)
    scale = ew.div(g, ew.add(_square(a), _square(b)))
    grad_a = ew.mul(scale, b) if node.needs_input_grad(0) else None
    grad_b = ew.mul(scale, _un().neg(a) if isinstance(a, Tensor) else -a)
    return grad_a, grad_b if node.needs_input_grad(1) else None


def _hypot(node: Any, g: Tensor) -> Sequence[Any]:
    ew = _ew()
    a, b = _operands(node)
    scale = ew.div(g, _upper.ops.hypot(a, b))
    grad_a = ew.mul(scale, a) if node.needs_input_grad(0) else None
    grad_b = ew.mul(scale, b) if node.needs_input_grad(1) else None
    return grad_a, grad_b


def _copysign(node: Any, g: Tensor) -> Sequence[Any]:
    # PyTorch: grad * result / self, 0 where self == 0; the sign operand gets 0.
    ew = _ew()
    a, b = _operands(node)
    grad_a = None
    if node.needs_input_grad(0):
        ratio = ew.div(_upper.ops.copysign(a, b), a)
        grad_a = _un().where(ew.eq(a, 0), 0.0, ew.mul(g, ratio))
    grad_b = ew.mul(g, 0.0) if node.needs_input_grad(1) else None
    return grad_a, grad_b


def _fmax_or_fmin(node: Any, g: Tensor, a_wins: Tensor, b: Any) -> Sequence[Any]:
    # PyTorch: self takes the gradient where it is kept (ties too, or b is NaN).
    ew, where = _ew(), _un().where
    if isinstance(b, Tensor):
        a_wins = ew.logical_or(a_wins, _upper.ops.isnan(b))
    grad_a = where(a_wins, g, 0.0) if node.needs_input_grad(0) else None
    grad_b = where(a_wins, 0.0, g) if node.needs_input_grad(1) else None
    return grad_a, grad_b


def _fmax(node: Any, g: Tensor) -> Sequence[Any]:
    a, b = _operands(node)
    return _fmax_or_fmin(node, g, _ew().ge(a, b), b)


def _fmin(node: Any, g: Tensor) -> Sequence[Any]:
    a, b = _operands(node)
    return _fmax_or_fmin(node, g, _ew().le(a, b), b)


BINARY: dict[str, Formula] = {
    "atan2": Formula(_atan2, _save_both),
    "hypot": Formula(_hypot, _save_both),
    "copysign": Formula(_copysign, _save_both),
    "fmax": Formula(_fmax, _save_both),
    "fmin": Formula(_fmin, _save_both),
}
