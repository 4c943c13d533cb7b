"""NumPy versions of the special functions in the expression table's NumPy column.

The reference device (plugins/ember-numpy) evaluates `ember.plugins.expressions`'
NumPy column with this module in scope as `special`. Each function takes an array and
returns an array of the same shape, computed in float64 (the device casts on store), by
the algorithms of kernels/em_special.h, so that both columns agree with PyTorch's.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["digamma", "erfinv", "lgamma"]

_ERF = np.vectorize(math.erf, otypes=[np.float64])
_DIGAMMA_SERIES = (
    8.33333333333333333333e-2,
    -2.10927960927960927961e-2,
    7.57575757575757575758e-3,
    -4.16666666666666666667e-3,
    3.96825396825396825397e-3,
    -8.33333333333333333333e-3,
    8.33333333333333333333e-2,
)


def _lgamma_scalar(x: float) -> float:
    # math.lgamma raises at its poles (0 and the negative integers), where C gives inf.
    if x <= 0 and math.isfinite(x) and x == math.floor(x):
        return math.inf
    return math.lgamma(x)


_LGAMMA = np.vectorize(_lgamma_scalar, otypes=[np.float64])


def lgamma(x: np.ndarray) -> np.ndarray:
    """log|gamma(x)|; inf at 0 and at the negative integers."""
    return _LGAMMA(np.asarray(x, np.float64))


def digamma(x: np.ndarray) -> np.ndarray:
    """psi(x): -inf at +0, inf at -0, NaN at the negative integers."""
    original = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        negative = original < 0
        fraction = original - np.trunc(original)
        result = np.where(negative, -np.pi / np.tan(np.pi * fraction), 0.0)
        x = np.where(negative, 1 - original, original)
        for _ in range(10):  # x >= 10 afterwards: every x < 10 needs at most 10 steps
            below = x < 10
            result = np.where(below, result - 1 / x, result)
            x = np.where(below, x + 1, x)
        z = 1 / (x * x)
        series = np.zeros_like(x)
        for coefficient in _DIGAMMA_SERIES:
            series = series * z + coefficient
        tail = np.where(x < 1e17, z * series, 0.0)
        result = result + np.log(x) - 0.5 / x - tail
    result = np.where(original == 0, np.copysign(np.inf, -original), result)
    return np.where(negative & (original == np.trunc(original)), np.nan, result)


def erfinv(y: np.ndarray) -> np.ndarray:
    """The inverse of erf on [-1, 1]: +-inf at +-1, NaN outside."""
    y = np.asarray(y, np.float64)
    with np.errstate(all="ignore"):
        magnitude = np.abs(y)
        z = y * y
        central = (
            y
            * (((-0.140543331 * z + 0.914624893) * z - 1.645349621) * z + 0.886226899)
            / ((((0.012229801 * z - 0.329097515) * z + 1.442710462) * z - 2.118377725) * z + 1)
        )
        w = np.sqrt(-np.log((1 - magnitude) / 2))
        tail = np.copysign(
            ((1.641345311 * w + 3.429567803) * w - 1.624906493) * w - 1.970840454, y
        ) / ((1.637067800 * w + 3.543889200) * w + 1)
        x = np.where(magnitude <= 0.7, central, tail)
        for _ in range(2):
            x = x - (_ERF(x) - y) / (2 / math.sqrt(math.pi) * np.exp(-x * x))
        x = np.where(magnitude == 1, np.copysign(np.inf, y), x)
        return np.where(magnitude > 1, np.nan, x)
