"""Derivative formulas of the special-function primitives (lgamma, digamma, erfinv, ...),
in ember ops, in `unary_formulas.FORMULAS`' form: name -> (formula, what it saves)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ember import _upper
from ember._tensor import Tensor

__all__ = ["SPECIAL_FORMULAS"]


def _lgamma(node: Any, g: Tensor) -> Sequence[Any]:
    (x,) = node.saved
    return (_upper.ops.mul(g, _upper.ops.digamma(x)),)


def _digamma(node: Any, g: Tensor) -> Sequence[Any]:
    (x,) = node.saved
    return (_upper.ops.mul(g, _upper.ops.polygamma(1, x)),)


def _erfinv(node: Any, g: Tensor) -> Sequence[Any]:
    # d/dy erfinv(y) = sqrt(pi) / 2 * exp(erfinv(y)^2)
    (y,) = node.saved
    ops = _upper.ops
    return (ops.mul(g, ops.mul(ops.exp(ops.mul(y, y)), math.sqrt(math.pi) / 2)),)


SPECIAL_FORMULAS: dict[str, tuple[Callable[[Any, Tensor], Sequence[Any]], str]] = {
    "lgamma": (_lgamma, "input"),
    "digamma": (_digamma, "input"),
    "erfinv": (_erfinv, "output"),
}
