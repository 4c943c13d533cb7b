"""`ember.special`: PyTorch's `torch.special`, the special functions by their SciPy names.

Primitives of the expression table where a composite would lose accuracy (the gamma and
error functions' inverses and tails, zeta, the incomplete gamma functions, the Bessel
and Airy functions, the orthogonal polynomials); composites of them elsewhere. Gradients
follow PyTorch: the Bessel and Airy functions and the polynomials have none, and zeta,
gammainc and gammaincc none in their first argument.
"""

from __future__ import annotations

from typing import Any

from ember._ops import special_composites as _composites
from ember._ops import special_elementwise as _elementwise
from ember._ops import special_functions as _gamma
from ember._ops import statistics as _statistics
from ember._ops import unary as _unary
from ember._ops.special_functions import _into
from ember._tensor import Tensor
from ember.nn import functional

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc",
    "gammaincc", "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1",
    "i1e", "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax",
    "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py",
    "xlogy", "zeta",
]  # fmt: skip

# -- the gamma family ----------------------------------------------------------------------
gammaln = _gamma.lgamma
digamma = _gamma.digamma
psi = _gamma.digamma
polygamma = _gamma.polygamma


def multigammaln(input: Tensor, p: int, *, out: Tensor | None = None) -> Tensor:
    """The log of the multivariate gamma function of dimension p (mvlgamma)."""
    return _into("multigammaln", _gamma.mvlgamma(input, p), out)


def gammainc(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    """The regularized lower incomplete gamma function P(a, x) (igamma)."""
    return _elementwise.igamma(input, other, out=out)


def gammaincc(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    """The regularized upper incomplete gamma function Q(a, x) (igammac)."""
    return _elementwise.igammac(input, other, out=out)


zeta = _elementwise.zeta

# -- error functions and the normal distribution -------------------------------------------
erf = _unary.erf
erfc = _elementwise.erfc
erfcx = _elementwise.erfcx
erfinv = _gamma.erfinv
ndtri = _elementwise.ndtri


def ndtr(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The standard normal CDF."""
    return _into("ndtr", _composites.ndtr(input), out)


def log_ndtr(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The log of the standard normal CDF, accurate in both tails."""
    return _into("log_ndtr", _composites.log_ndtr(input), out)


# -- exponentials and logarithms -----------------------------------------------------------
expm1 = _unary.expm1
log1p = _unary.log1p
expit = _unary.sigmoid
round = _unary.round


def exp2(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """2 ** x."""
    return _into("exp2", _composites.exp2(input), out)


def logit(input: Tensor, eps: float | None = None, *, out: Tensor | None = None) -> Tensor:
    """log(p / (1 - p)), p clamped to [eps, 1 - eps] when eps is given."""
    return _into("logit", _composites.logit(input, eps), out)


def entr(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The elementwise entropy -x log(x) (0 at 0, -inf below)."""
    return _into("entr", _composites.entr(input), out)


def sinc(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The normalized sinc, sin(pi x) / (pi x)."""
    return _into("sinc", _composites.sinc(input), out)


def xlogy(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    """x * log(y), 0 where x is 0."""
    return _into("xlogy", _composites.xlogy(input, other), out)


def xlog1py(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    """x * log1p(y), 0 where x is 0."""
    return _into("xlog1py", _composites.xlog1py(input, other), out)


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) over `dim`, without overflow."""
    return _statistics.logsumexp(input, dim, keepdim)


def softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """exp(x) / sum(exp(x)) along `dim`."""
    return functional.softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """log(softmax(x)) along `dim`, computed stably."""
    return functional.log_softmax(input, dim, dtype=dtype)


# -- Bessel and Airy functions -------------------------------------------------------------
i0 = _elementwise.i0
i0e = _elementwise.i0e
i1 = _elementwise.i1
i1e = _elementwise.i1e
bessel_j0 = _elementwise.bessel_j0
bessel_j1 = _elementwise.bessel_j1
bessel_y0 = _elementwise.bessel_y0
bessel_y1 = _elementwise.bessel_y1
modified_bessel_i0 = _elementwise.modified_bessel_i0
modified_bessel_i1 = _elementwise.modified_bessel_i1
modified_bessel_k0 = _elementwise.modified_bessel_k0
modified_bessel_k1 = _elementwise.modified_bessel_k1
scaled_modified_bessel_k0 = _elementwise.scaled_modified_bessel_k0
scaled_modified_bessel_k1 = _elementwise.scaled_modified_bessel_k1
spherical_bessel_j0 = _elementwise.spherical_bessel_j0
airy_ai = _elementwise.airy_ai


# -- orthogonal polynomials: P_n(x) for an integer degree n (a tensor or a number) ----------
def chebyshev_polynomial_t(input: Any, n: Any, *, out: Tensor | None = None) -> Tensor:
    """The Chebyshev polynomial of the first kind T_n(x)."""
    return _elementwise.polynomial("chebyshev_polynomial_t", input, n, out)


def chebyshev_polynomial_u(input: Any, n: Any, *, out: Tensor | None = None) -> Tensor:
    """The Chebyshev polynomial of the second kind U_n(x)."""
    return _elementwise.polynomial("chebyshev_polynomial_u", input, n, out)


def chebyshev_polynomial_v(input: Any, n: Any, *, out: Tensor | None = None) -> Tensor:
    """The Chebyshev polynomial of the third kind V_n(x)."""
    return _elementwise.polynomial("chebyshev_polynomial_v", input, n, out)


def chebyshev_polynomial_w(input: Any, n: Any, *, out: Tensor | None = None) -> Tensor:
    """The Chebyshev polynomial of the fourth kind W_n(x)."""
    return _elementwise.polynomial("chebyshev_polynomial_w", input, n, out)


def shifted_chebyshev_polynomial_t(input: Any, n: Any, *, out: Tensor | None = None) -> Tensor:
    """T*_n(x) = T_n(2x - 1)."""
    return _elementwise.polynomial("shifted_chebyshev_polynomial_t", input, n, out)


def shifted_chebyshev_polynomial_u(input: Any, n: Any, *, out: Tensor | None = None) -> Tensor:
    """U*_n(x) = U_n(2x - 1)."""
    return _elementwise.polynomial("shifted_chebyshev_polynomial_u", input, n, out)


def shifted_chebyshev_polynomial_v(input: Any, n: Any, *, out: Tensor | None = None) -> Tensor:
    """V*_n(x) = V_n(2x - 1)."""
    return _elementwise.polynomial("shifted_chebyshev_polynomial_v", input, n, out)


def shifted_chebyshev_polynomial_w(input: Any, n: Any, *, out: Tensor | None = None) -> Tensor:
    """W*_n(x) = W_n(2x - 1)."""
    return _elementwise.polynomial("shifted_chebyshev_polynomial_w", input, n, out)


def hermite_polynomial_h(input: Any, n: Any, *, out: Tensor | None = None) -> Tensor:
    """The physicists' Hermite polynomial H_n(x)."""
    return _elementwise.polynomial("hermite_polynomial_h", input, n, out)


def hermite_polynomial_he(input: Any, n: Any, *, out: Tensor | None = None) -> Tensor:
    """The probabilists' Hermite polynomial He_n(x)."""
    return _elementwise.polynomial("hermite_polynomial_he", input, n, out)


def laguerre_polynomial_l(input: Any, n: Any, *, out: Tensor | None = None) -> Tensor:
    """The Laguerre polynomial L_n(x)."""
    return _elementwise.polynomial("laguerre_polynomial_l", input, n, out)


def legendre_polynomial_p(input: Any, n: Any, *, out: Tensor | None = None) -> Tensor:
    """The Legendre polynomial P_n(x)."""
    return _elementwise.polynomial("legendre_polynomial_p", input, n, out)
