"""Derivative formulas of the binary elementwise ops, written in ember ops.

Each formula takes (node, grad) and returns one gradient per operand (None for a Python
scalar or a non-differentiable operand). Operands that were tensors are in `node.saved`
(when the formula saves inputs), scalars in `node.ctx`. Broadcasting and dtype are undone
by the graph (autograd/_graph.py), not here. Formulas run through ember ops, so with
`create_graph=True` they are differentiated again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ember import _ops
from ember._tensor import Tensor

__all__ = ["FORMULAS"]


class Formula:
    """A derivative formula and whether it needs the operands saved."""

    __slots__ = ("fn", "saves_inputs")

    def __init__(self, fn: Callable[[Any, Tensor], Sequence[Any]], saves_inputs: bool) -> None:
        self.fn = fn
        self.saves_inputs = saves_inputs

    def __call__(self, node: Any, grad: Tensor) -> Sequence[Any]:
        return self.fn(node, grad)


def _operands(node: Any) -> tuple[Any, Any]:
    """The op's operands: saved tensors and Python scalars, in their original order."""
    saved = iter(node.saved)
    a_scalar, b_scalar = node.ctx
    a = next(saved) if a_scalar is None else a_scalar
    b = next(saved) if b_scalar is None else b_scalar
    return a, b


def _mask(node: Any) -> tuple[bool, bool]:
    a_scalar, b_scalar = node.ctx
    return a_scalar is None, b_scalar is None


def _add(node: Any, g: Tensor) -> Sequence[Any]:
    return g, g


def _sub(node: Any, g: Tensor) -> Sequence[Any]:
    unary = _ops.unary
    _, b_is_tensor = _mask(node)
    return g, unary.neg(g) if b_is_tensor else None


def _mul(node: Any, g: Tensor) -> Sequence[Any]:
    ew = _ops.elementwise
    a, b = _operands(node)
    return ew.mul(g, b), ew.mul(g, a)


def _div(node: Any, g: Tensor) -> Sequence[Any]:
    ew, unary = _ops.elementwise, _ops.unary
    a, b = _operands(node)
    grad_a = ew.div(g, b)
    a_is_tensor, b_is_tensor = _mask(node)
    grad_b = unary.neg(ew.div(ew.mul(grad_a, a), b)) if b_is_tensor else None
    return (grad_a if a_is_tensor else None), grad_b


def _pow(node: Any, g: Tensor) -> Sequence[Any]:
    ew, unary = _ops.elementwise, _ops.unary
    a, b = _operands(node)
    a_is_tensor, b_is_tensor = _mask(node)
    grad_a = grad_b = None
    if a_is_tensor:
        # d/da a**b = b * a**(b-1); b == 0 gives 0 even where a == 0 (PyTorch's rule).
        grad_a = ew.mul(g, ew.mul(b, ew.pow(a, ew.sub(b, 1.0))))
        if not isinstance(b, Tensor) and b == 0:
            grad_a = ew.mul(g, 0.0)
    if b_is_tensor:
        # d/db a**b = a**b * log(a), taken as 0 where a == 0 and b >= 0.
        log_a = unary.log(a) if isinstance(a, Tensor) else _log_scalar(a)
        value = ew.mul(ew.pow(a, b), log_a)
        if isinstance(a, Tensor):
            value = unary.where(ew.logical_and(ew.eq(a, 0), ew.ge(b, 0)), 0.0, value)
        grad_b = ew.mul(g, value)
    return grad_a, grad_b


def _log_scalar(value: float) -> float:
    import math

    return math.log(value) if value > 0 else (float("-inf") if value == 0 else float("nan"))


def _extremum(node: Any, g: Tensor, a_wins: Tensor, tie: Tensor) -> Sequence[Any]:
    ew, unary = _ops.elementwise, _ops.unary
    # Ties split the gradient evenly, as in PyTorch's maximum/minimum.
    half = ew.mul(g, 0.5)
    zero = ew.mul(g, 0.0)
    grad_a = unary.where(tie, half, unary.where(a_wins, g, zero))
    grad_b = unary.where(tie, half, unary.where(a_wins, zero, g))
    a_is_tensor, b_is_tensor = _mask(node)
    return (grad_a if a_is_tensor else None), (grad_b if b_is_tensor else None)


def _maximum(node: Any, g: Tensor) -> Sequence[Any]:
    ew = _ops.elementwise
    a, b = _operands(node)
    return _extremum(node, g, ew.gt(a, b), ew.eq(a, b))


def _minimum(node: Any, g: Tensor) -> Sequence[Any]:
    ew = _ops.elementwise
    a, b = _operands(node)
    return _extremum(node, g, ew.lt(a, b), ew.eq(a, b))


def _remainder(node: Any, g: Tensor) -> Sequence[Any]:
    ew, unary = _ops.elementwise, _ops.unary
    a, b = _operands(node)
    _, b_is_tensor = _mask(node)
    grad_b = ew.mul(unary.neg(g), unary.floor(ew.div(a, b))) if b_is_tensor else None
    return g, grad_b


def _fmod(node: Any, g: Tensor) -> Sequence[Any]:
    ew, unary = _ops.elementwise, _ops.unary
    a, b = _operands(node)
    _, b_is_tensor = _mask(node)
    grad_b = ew.mul(unary.neg(g), unary.trunc(ew.div(a, b))) if b_is_tensor else None
    return g, grad_b


def _zero(node: Any, g: Tensor) -> Sequence[Any]:
    ew = _ops.elementwise
    zero = ew.mul(g, 0.0)
    return zero, zero


FORMULAS: dict[str, Formula] = {
    "add": Formula(_add, False),
    "sub": Formula(_sub, False),
    "mul": Formula(_mul, True),
    "div": Formula(_div, True),
    "pow": Formula(_pow, True),
    "maximum": Formula(_maximum, True),
    "minimum": Formula(_minimum, True),
    "remainder": Formula(_remainder, True),
    "fmod": Formula(_fmod, True),
    "floor_divide": Formula(_zero, False),
    "trunc_divide": Formula(_zero, False),
}
