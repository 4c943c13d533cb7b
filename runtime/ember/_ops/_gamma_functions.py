"""lgamma and digamma as composites of ember ops, private to the samplers and
ember.distributions.

Placeholder: the `special` family adds ember.lgamma / ember.digamma; once it is merged these
two functions should forward to them. Written in ember ops, they run on every device and
autograd differentiates them through their parts.
"""

from __future__ import annotations

import math

from ember._ops import elementwise as ew
from ember._ops import unary
from ember._tensor import Tensor

__all__ = ["digamma", "lgamma"]

# Lanczos's approximation, g = 7, nine terms (relative error ~1e-15 for x >= 0.5).
_LANCZOS_G = 7.0
_LANCZOS = (
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
    -176.61502916214059, 12.507343278686905, -0.13857109526572012,
    9.9843695780195716e-6, 1.5056327351493116e-7,
)  # fmt: skip
_HALF_LOG_TWO_PI = 0.5 * math.log(2 * math.pi)


def _lgamma_right(x: Tensor) -> Tensor:
    """log Γ(x) for x >= 0.5."""
    z = x - 1.0
    series = z * 0.0 + _LANCZOS[0]
    for i, coefficient in enumerate(_LANCZOS[1:], start=1):
        series = series + coefficient / (z + float(i))
    t = z + (_LANCZOS_G + 0.5)
    return _HALF_LOG_TWO_PI + (z + 0.5) * unary.log(t) - t + unary.log(series)


def lgamma(x: Tensor) -> Tensor:
    """log |Γ(x)| elementwise, with the reflection formula below 1/2."""
    right = ew.ge(x, 0.5)
    safe_right = unary.where(right, x, 1.0)
    safe_left = unary.where(right, 0.0, x)
    left = math.log(math.pi) - unary.log(unary.abs(unary.sin(safe_left * math.pi)))
    left = left - _lgamma_right(1.0 - safe_left)
    return unary.where(right, _lgamma_right(safe_right), left)


def _digamma_right(x: Tensor) -> Tensor:
    """ψ(x) for x > 0: shift above 6 by the recurrence, then the asymptotic series."""
    shift = x * 0.0
    for i in range(6):
        shift = shift + 1.0 / (x + float(i))
    y = x + 6.0
    inv2 = 1.0 / (y * y)
    tail = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132))))
    return unary.log(y) - 0.5 / y - tail - shift


def digamma(x: Tensor) -> Tensor:
    """ψ(x) = d/dx log Γ(x) elementwise, with the reflection formula at x <= 0."""
    right = ew.gt(x, 0.0)
    safe_right = unary.where(right, x, 1.0)
    safe_left = unary.where(right, 0.5, x)
    angle = safe_left * math.pi
    left = _digamma_right(1.0 - safe_left) - math.pi * unary.cos(angle) / unary.sin(angle)
    return unary.where(right, _digamma_right(safe_right), left)
