"""The special-function primitives after the gamma family: error functions, Bessel and
Airy functions, zeta, the incomplete gamma functions and the orthogonal polynomials.

Each is one row of the expression table (kernels/em_special.h, em_bessel.h,
em_polynomials.h). The torch-level names (erfc, i0, igamma, igammac and their in-place
forms) are public here; the rest are the ops behind `ember.special`. As in PyTorch, the
Bessel and Airy functions and the polynomials are not differentiable: their results
never join the graph.
"""

from __future__ import annotations

from typing import Any

from ember._dispatch import Op
from ember._ops import names, unary
from ember._ops._binary_general import binary_general
from ember._ops.elementwise import _inplace, detached
from ember._tensor import Tensor

__all__ = ["erfc", "erfc_", "i0", "i0_", "igamma", "igamma_", "igammac", "igammac_"]


def _apply(name: str, input: Tensor, out: Tensor | None = None) -> Tensor:
    return unary._unary(names.UNARY[name], input, out)


def _constant(name: str, input: Tensor, out: Tensor | None = None) -> Tensor:
    """A function without a derivative: computed on a detached input, as PyTorch leaves
    its result outside the graph."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be a Tensor, not {type(input).__name__}")
    return unary._unary(names.UNARY[name], detached(input), out)


def erfc(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """1 - erf(x), accurate where erf(x) is close to 1."""
    return _apply("erfc", input, out)


def erfc_(t: Tensor) -> Tensor:
    """In place: t = erfc(t)."""
    return unary._unary_inplace(names.UNARY["erfc"], t)


def i0(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The modified Bessel function of the first kind of order 0."""
    return _apply("i0", input, out)


def i0_(t: Tensor) -> Tensor:
    """In place: t = i0(t)."""
    return unary._unary_inplace(names.UNARY["i0"], t)


def igamma(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    """The regularized lower incomplete gamma function P(a, x) (a = input, x = other)."""
    return binary_general(names.BINARY["igamma"], input, other, out)


def igamma_(t: Tensor, other: Any) -> Tensor:
    """In place: t = igamma(t, other)."""
    return _inplace(names.BINARY["igamma"], t, other)


def igammac(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return binary_general(names.BINARY["igammac"], input, other, out)


def igammac_(t: Tensor, other: Any) -> Tensor:
    """In place: t = igammac(t, other)."""
    return _inplace(names.BINARY["igammac"], t, other)


# -- the ops behind ember.special -----------------------------------------------------------


def erfcx(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """exp(x^2) erfc(x), without its overflow."""
    return _apply("erfcx", input, out)


def ndtri(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The inverse of the standard normal CDF."""
    return _apply("ndtri", input, out)


def i0e(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """exp(-|x|) i0(x)."""
    return _apply("i0e", input, out)


def i1(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The modified Bessel function of the first kind of order 1."""
    return _apply("i1", input, out)


def i1e(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """exp(-|x|) i1(x)."""
    return _apply("i1e", input, out)


def zeta(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    """The Hurwitz zeta function zeta(x, q) = sum over k >= 0 of (k + q)^-x."""
    return binary_general(names.BINARY["zeta"], input, other, out)


def _constant_unary(name: str, doc: str) -> Any:
    def function(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        return _constant(name, input, out)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


bessel_j0 = _constant_unary("bessel_j0", "The Bessel function of the first kind of order 0.")
bessel_j1 = _constant_unary("bessel_j1", "The Bessel function of the first kind of order 1.")
bessel_y0 = _constant_unary("bessel_y0", "The Bessel function of the second kind of order 0.")
bessel_y1 = _constant_unary("bessel_y1", "The Bessel function of the second kind of order 1.")
modified_bessel_k0 = _constant_unary(
    "modified_bessel_k0", "The modified Bessel function of the second kind of order 0."
)
modified_bessel_k1 = _constant_unary(
    "modified_bessel_k1", "The modified Bessel function of the second kind of order 1."
)
scaled_modified_bessel_k0 = _constant_unary(
    "scaled_modified_bessel_k0", "exp(x) modified_bessel_k0(x)."
)
scaled_modified_bessel_k1 = _constant_unary(
    "scaled_modified_bessel_k1", "exp(x) modified_bessel_k1(x)."
)
airy_ai = _constant_unary("airy_ai", "The Airy function Ai.")
spherical_bessel_j0 = _constant_unary(
    "spherical_bessel_j0", "The spherical Bessel function of the first kind of order 0."
)


def modified_bessel_i0(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The modified Bessel function of the first kind of order 0 (i0, outside the graph)."""
    return _constant("i0", input, out)


def modified_bessel_i1(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The modified Bessel function of the first kind of order 1 (i1, outside the graph)."""
    return _constant("i1", input, out)


def polynomial(name: str, input: Any, n: Any, out: Tensor | None = None) -> Tensor:
    """The polynomial `name` of degree n at x = input (n truncated to an integer; a
    negative degree gives 0), outside the graph."""
    op: Op = names.BINARY[name]
    if not isinstance(input, Tensor) and not isinstance(n, Tensor):
        raise TypeError(f"{name}(): expected a tensor argument, got {input!r} and {n!r}")
    return binary_general(op, detached(input), detached(n), out)
