"""NumPy versions of the special functions in the expression table's NumPy column.

The reference device (plugins/ember-numpy) evaluates `ember.plugins.expressions`'
NumPy column with this module in scope as `special`. Each function takes arrays and
returns an array of their broadcast shape, computed in float64 (the device casts on
store): lgamma, digamma and erfinv by the algorithms of kernels/em_special.h, the
polynomials by their recurrences, and the rest through SciPy (imported when first
needed), an implementation independent of the C one.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "erfc", "erfcx", "erfinv", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e",
    "i1", "i1e", "igamma", "igammac", "laguerre_polynomial_l", "legendre_polynomial_p",
    "lgamma", "modified_bessel_k0", "modified_bessel_k1", "ndtri", "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "spherical_bessel_j0", "zeta",
]  # fmt: skip

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


# -- through SciPy: the reference device's independent implementations ----------------------


def _scipy() -> Any:
    try:
        return importlib.import_module("scipy.special")
    except ImportError as error:  # the reference device's special functions need SciPy
        raise RuntimeError(
            "the numpy device computes this special function with SciPy; pip install scipy"
        ) from error


def _unary(name: str, scipy_name: str) -> Callable[[np.ndarray], np.ndarray]:
    def function(x: np.ndarray) -> np.ndarray:
        return np.asarray(getattr(_scipy(), scipy_name)(np.asarray(x, np.float64)))

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"scipy.special.{scipy_name}."
    return function


erfc = _unary("erfc", "erfc")
erfcx = _unary("erfcx", "erfcx")
ndtri = _unary("ndtri", "ndtri")
i0 = _unary("i0", "i0")
i0e = _unary("i0e", "i0e")
i1 = _unary("i1", "i1")
i1e = _unary("i1e", "i1e")
bessel_j0 = _unary("bessel_j0", "j0")
bessel_j1 = _unary("bessel_j1", "j1")
bessel_y0 = _unary("bessel_y0", "y0")
bessel_y1 = _unary("bessel_y1", "y1")
modified_bessel_k0 = _unary("modified_bessel_k0", "k0")
modified_bessel_k1 = _unary("modified_bessel_k1", "k1")
scaled_modified_bessel_k0 = _unary("scaled_modified_bessel_k0", "k0e")
scaled_modified_bessel_k1 = _unary("scaled_modified_bessel_k1", "k1e")


def airy_ai(x: np.ndarray) -> np.ndarray:
    """Ai(x)."""
    return np.asarray(_scipy().airy(np.asarray(x, np.float64))[0])


def spherical_bessel_j0(x: np.ndarray) -> np.ndarray:
    """sin(x) / x, 1 at 0 and 0 at +-inf."""
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        result = np.where(x == 0, 1.0, np.sin(x) / np.where(x == 0, 1.0, x))
    return np.where(np.isinf(x), 0.0, result)


def zeta(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The Hurwitz zeta function; NaN at q = inf, as PyTorch's summation gives."""
    q = np.asarray(q, np.float64)
    result = np.asarray(_scipy().zeta(np.asarray(x, np.float64), q))
    return np.where(q == np.inf, np.nan, result)


def igamma(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """P(a, x)."""
    return np.asarray(_scipy().gammainc(np.asarray(a, np.float64), np.asarray(x, np.float64)))


def igammac(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Q(a, x)."""
    return np.asarray(_scipy().gammaincc(np.asarray(a, np.float64), np.asarray(x, np.float64)))


# -- orthogonal polynomials by their three-term recurrences ---------------------------------
# Each recurrence: (P_0, P_1, step(k, x, P_k, P_k-1) -> P_k+1), run elementwise up to each
# element's degree; a negative degree gives 0, as in PyTorch.


def _laguerre(k: int, x: np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    return ((2 * k + 1 - x) * p - k * q) / (k + 1)


def _legendre(k: int, x: np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    return ((2 * k + 1) * x * p - k * q) / (k + 1)


Step = Callable[[int, np.ndarray, np.ndarray, np.ndarray], np.ndarray]
_CHEBYSHEV: Step = lambda k, x, p, q: 2 * x * p - q  # noqa: E731 (a table of one-liners)
_RECURRENCES: dict[str, tuple[Callable[[np.ndarray], np.ndarray], Step]] = {
    "chebyshev_polynomial_t": (lambda x: x, _CHEBYSHEV),
    "chebyshev_polynomial_u": (lambda x: 2 * x, _CHEBYSHEV),
    "chebyshev_polynomial_v": (lambda x: 2 * x - 1, _CHEBYSHEV),
    "chebyshev_polynomial_w": (lambda x: 2 * x + 1, _CHEBYSHEV),
    "hermite_polynomial_h": (lambda x: 2 * x, lambda k, x, p, q: 2 * x * p - 2 * k * q),
    "hermite_polynomial_he": (lambda x: x, lambda k, x, p, q: x * p - k * q),
    "laguerre_polynomial_l": (lambda x: 1 - x, lambda k, x, p, q: _laguerre(k, x, p, q)),
    "legendre_polynomial_p": (lambda x: x, lambda k, x, p, q: _legendre(k, x, p, q)),
}  # fmt: skip
_HERMITE_LIMIT = 512  # PyTorch's degree limit in float64 (NaN above it)


def _recurrence(name: str, x: np.ndarray, n: np.ndarray) -> np.ndarray:
    first, step = _RECURRENCES[name]
    x, n = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(n, np.float64))
    with np.errstate(all="ignore"):
        degree = np.where(np.isfinite(n), np.trunc(n), -1.0)
        previous, current = np.ones_like(x), first(x)
        result = np.where(degree == 0, previous, current)
        top = int(np.max(degree, initial=0))
        for k in range(1, min(top, 4096)):
            previous, current = current, step(k, x, current, previous)
            result = np.where(degree == k + 1, current, result)
        result = np.where(degree < 0, 0.0, result)
    if name.startswith("hermite"):
        result = np.where(degree > _HERMITE_LIMIT, np.nan, result)
    return result


def _polynomial(name: str, shifted: bool = False) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    def function(x: np.ndarray, n: np.ndarray) -> np.ndarray:
        x = np.asarray(x, np.float64)
        return _recurrence(name, 2 * x - 1 if shifted else x, n)

    function.__name__ = function.__qualname__ = ("shifted_" if shifted else "") + name
    function.__doc__ = f"{name} of degree n at x{' (shifted: at 2x - 1)' if shifted else ''}."
    return function


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w")
shifted_chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", shifted=True)
shifted_chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", shifted=True)
shifted_chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v", shifted=True)
shifted_chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w", shifted=True)
hermite_polynomial_h = _polynomial("hermite_polynomial_h")
hermite_polynomial_he = _polynomial("hermite_polynomial_he")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l")
legendre_polynomial_p = _polynomial("legendre_polynomial_p")
