"""Derivative formulas of the binary elementwise ops, written in ember ops.

Each formula takes (node, grad) and returns one gradient per operand (None for a Python
scalar or a non-differentiable operand). Operands that were tensors are in `node.saved`
(when the formula saves inputs), scalars in `node.ctx`. Broadcasting and dtype are undone
by the graph (autograd/_graph.py), not here. Formulas run through ember ops, so with
`create_graph=True` they are differentiated again.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ember import _upper
from ember._ops.special_formulas import SPECIAL_BINARY_FORMULAS
from ember._tensor import Tensor

__all__ = ["FORMULAS"]


Saver = Callable[[Any, Any], "Pair"]


class Formula:
    """A derivative formula and which operands it needs saved (`save(a, b)` gives the pair
    to keep, None where nothing is needed; `save` is None when the formula reads none)."""

    __slots__ = ("fn", "save")

    def __init__(self, fn: Callable[[Any, Tensor], Sequence[Any]], save: Saver | None) -> None:
        self.fn = fn
        self.save = save

    def __call__(self, node: Any, grad: Tensor) -> Sequence[Any]:
        return self.fn(node, grad)


Pair = tuple[Tensor | None, Tensor | None] | tuple[()]


def _requires_grad(x: Any) -> bool:
    meta = x._autograd
    return meta is not None and bool(meta.requires_grad)


def _save_both(a: Any, b: Any) -> Pair:
    return (a if isinstance(a, Tensor) else None), (b if isinstance(b, Tensor) else None)


def _save_crossed(a: Any, b: Any) -> Pair:
    """mul: each operand's gradient reads only the other operand."""
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        return ()  # a scalar operand: the tensor's gradient reads only the scalar
    meta_a, meta_b = a._autograd, b._autograd
    keep_a = meta_b is not None and meta_b.requires_grad
    keep_b = meta_a is not None and meta_a.requires_grad
    return ((a if keep_a else None), (b if keep_b else None)) if keep_a or keep_b else ()


def _save_divisor(a: Any, b: Any) -> Pair:
    """div: both gradients read b; only b's reads a."""
    if not isinstance(b, Tensor):
        return ()
    return (a if isinstance(a, Tensor) and _requires_grad(b) else None), b


def _operands(node: Any) -> tuple[Any, Any]:
    """The op's operands: saved tensors (None where not needed) and Python scalars."""
    saved = node.saved
    saved_a, saved_b = saved if saved else (None, None)
    a_scalar, b_scalar = node.ctx
    return (saved_a if a_scalar is None else a_scalar), (saved_b if b_scalar is None else b_scalar)


def _wanted(node: Any) -> tuple[bool, bool]:
    """Whether each operand takes a gradient (a tensor in the graph, not a scalar)."""
    return node.needs_input_grad(0), node.needs_input_grad(1)


def _add(node: Any, g: Tensor) -> Sequence[Any]:
    return g, g


def _sub(node: Any, g: Tensor) -> Sequence[Any]:
    return g, _upper.ops.unary.neg(g) if node.needs_input_grad(1) else None


def _mul(node: Any, g: Tensor) -> Sequence[Any]:
    ew = _upper.ops.elementwise
    a, b = _operands(node)
    want_a, want_b = _wanted(node)
    return (ew.mul(g, b) if want_a else None), (ew.mul(g, a) if want_b else None)


def _div(node: Any, g: Tensor) -> Sequence[Any]:
    ew = _upper.ops.elementwise
    a, b = _operands(node)
    want_a, want_b = _wanted(node)
    grad_a = ew.div(g, b)
    grad_b = _upper.ops.unary.neg(ew.div(ew.mul(grad_a, a), b)) if want_b else None
    return (grad_a if want_a else None), grad_b


def _pow(node: Any, g: Tensor) -> Sequence[Any]:
    ew, unary = _upper.ops.elementwise, _upper.ops.unary
    a, b = _operands(node)
    want_a, want_b = _wanted(node)
    grad_a = grad_b = None
    if want_a:
        # d/da a**b = b * a**(b-1), taken as 0 where b == 0 (even at a == 0), as PyTorch does.
        if isinstance(b, Tensor):
            scaled = ew.mul(b, ew.pow(a, ew.sub(b, 1.0)))
            grad_a = ew.mul(g, unary.where(ew.eq(b, 0), 0.0, scaled))
        elif b == 0:
            grad_a = ew.mul(g, 0.0)
        else:
            grad_a = ew.mul(g, ew.mul(ew.pow(a, b - 1.0), b))
    if want_b:
        # d/db a**b = a**b * log(a), taken as 0 where a == 0 and b >= 0.
        if isinstance(a, Tensor):
            value = ew.mul(ew.pow(a, b), unary.log(a))
            value = unary.where(ew.logical_and(ew.eq(a, 0), ew.ge(b, 0)), 0.0, value)
        else:
            value = ew.mul(ew.pow(a, b), _log_scalar(a))
            if a == 0:
                value = unary.where(ew.ge(b, 0), 0.0, value)
        grad_b = ew.mul(g, value)
    return grad_a, grad_b


def _log_scalar(value: float) -> float:
    return math.log(value) if value > 0 else (-math.inf if value == 0 else math.nan)


def _extremum(node: Any, g: Tensor, a_wins: Tensor, tie: Tensor) -> Sequence[Any]:
    where = _upper.ops.unary.where
    # Ties split the gradient evenly, as in PyTorch's maximum/minimum.
    half = _upper.ops.elementwise.mul(g, 0.5)
    want_a, want_b = _wanted(node)
    grad_a = where(tie, half, where(a_wins, g, 0.0)) if want_a else None
    grad_b = where(tie, half, where(a_wins, 0.0, g)) if want_b else None
    return grad_a, grad_b


def _maximum(node: Any, g: Tensor) -> Sequence[Any]:
    ew = _upper.ops.elementwise
    a, b = _operands(node)
    return _extremum(node, g, ew.gt(a, b), ew.eq(a, b))


def _minimum(node: Any, g: Tensor) -> Sequence[Any]:
    ew = _upper.ops.elementwise
    a, b = _operands(node)
    return _extremum(node, g, ew.lt(a, b), ew.eq(a, b))


def _remainder(node: Any, g: Tensor) -> Sequence[Any]:
    ew = _upper.ops.elementwise
    a, b = _operands(node)
    grad_b = None
    if node.needs_input_grad(1):
        grad_b = ew.mul(_upper.ops.unary.neg(g), _upper.ops.unary.floor(ew.div(a, b)))
    return g, grad_b


def _fmod(node: Any, g: Tensor) -> Sequence[Any]:
    ew = _upper.ops.elementwise
    a, b = _operands(node)
    grad_b = None
    if node.needs_input_grad(1):
        grad_b = ew.mul(_upper.ops.unary.neg(g), _upper.ops.unary.trunc(ew.div(a, b)))
    return g, grad_b


def _zero(node: Any, g: Tensor) -> Sequence[Any]:
    zero = _upper.ops.elementwise.mul(g, 0.0)
    return zero, zero


FORMULAS: dict[str, Formula] = {
    "add": Formula(_add, None),
    "sub": Formula(_sub, None),
    "mul": Formula(_mul, _save_crossed),
    "div": Formula(_div, _save_divisor),
    "pow": Formula(_pow, _save_both),
    "maximum": Formula(_maximum, _save_both),
    "minimum": Formula(_minimum, _save_both),
    "remainder": Formula(_remainder, _save_both),
    "fmod": Formula(_fmod, _save_both),
    "floor_divide": Formula(_zero, None),
    "trunc_divide": Formula(_zero, None),
    **{name: Formula(fn, save) for name, (fn, save) in SPECIAL_BINARY_FORMULAS.items()},
}
