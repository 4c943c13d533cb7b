"""Elementwise functions the distributions need that Ember does not have yet, as
composites (placeholders until ember.atan, acos and xlogy land with the pointwise family)."""

from __future__ import annotations

from typing import Any

from ember import _ops as ops
from ember._tensor import Tensor

__all__ = ["acos", "atan", "xlogy"]

_HALVINGS = 3  # |t| <= tan(pi / 16) after three halvings: the series below is exact to 1e-17


def atan(x: Tensor) -> Tensor:
    """arctan(x): halve the angle (atan x = 2 atan(x / (1 + sqrt(1 + x^2)))), then sum the
    Taylor series of the small remainder."""
    t = x
    for _ in range(_HALVINGS):
        t = t / (1 + (1 + t * t).sqrt())
    t2 = t * t
    series = t * 0.0 + 1.0 / 23.0
    for k in range(21, 0, -2):
        series = 1.0 / k - t2 * series
    return (2**_HALVINGS) * t * series


def xlogy(x: Any, y: Tensor) -> Tensor:
    """x * log(y), 0 where x == 0 (ember.xlogy is not there yet)."""
    product = x * y.log()
    return ops.where(ops.eq(x * ops.ones_like(product), 0), ops.zeros_like(product), product)


def acos(x: Tensor) -> Tensor:
    """arccos(x) on [-1, 1]: 2 atan(sqrt((1 - x) / (1 + x))) (ember.acos is not there yet)."""
    return 2.0 * atan(((1.0 - x) / (1.0 + x)).sqrt())
