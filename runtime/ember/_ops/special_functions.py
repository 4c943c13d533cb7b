"""The gamma family at the torch level: lgamma, digamma, polygamma, mvlgamma, erfinv.

lgamma, digamma and erfinv are primitives of the expression table (kernels/em_special.h);
their derivatives are in `special_formulas`. polygamma(1, x), the trigamma function, is a
composite of fixed length (reflection, six recurrence steps, the asymptotic series), so
its own derivatives come from its parts; beyond n = 1 it is (-1)^(n+1) n! zeta(n + 1, x);
mvlgamma sums lgamma.
"""

from __future__ import annotations

import math

from ember._dispatch import Op
from ember._dtype import get_default_dtype
from ember._ops import _launch, names, unary
from ember._ops import elementwise as ew
from ember._ops._binary_general import finish, output
from ember._ops.conversion import cast
from ember._ops.reduction import amin
from ember._ops.special_elementwise import zeta
from ember._tensor import Tensor

__all__ = [
    "digamma", "digamma_", "erfinv", "erfinv_", "lgamma", "lgamma_", "mvlgamma", "mvlgamma_",
    "polygamma", "polygamma_",
]  # fmt: skip

_LGAMMA: Op = names.UNARY["lgamma"]
_DIGAMMA: Op = names.UNARY["digamma"]
_ERFINV: Op = names.UNARY["erfinv"]


def lgamma(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """log|gamma(x)|, elementwise; inf at 0 and at the negative integers."""
    return unary._unary(_LGAMMA, input, out)


def lgamma_(t: Tensor) -> Tensor:
    """In place: t = lgamma(t)."""
    return unary._unary_inplace(_LGAMMA, t)


def digamma(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """psi(x) = d/dx lgamma(x); -inf at 0, NaN at the negative integers."""
    return unary._unary(_DIGAMMA, input, out)


def digamma_(t: Tensor) -> Tensor:
    """In place: t = digamma(t)."""
    return unary._unary_inplace(_DIGAMMA, t)


def erfinv(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The inverse error function on [-1, 1]; +-inf at +-1, NaN outside."""
    return unary._unary(_ERFINV, input, out)


def erfinv_(t: Tensor) -> Tensor:
    """In place: t = erfinv(t)."""
    return unary._unary_inplace(_ERFINV, t)


def _floating(t: Tensor) -> Tensor:
    """Integer inputs compute in the default float dtype, as PyTorch's."""
    if not isinstance(t, Tensor):
        raise TypeError(f"argument 'input' must be a Tensor, not {type(t).__name__}")
    return t if t._dtype.is_floating_point else cast(t, get_default_dtype())


def _trigamma(x: Tensor) -> Tensor:
    """polygamma(1, x), as PyTorch computes it: reflection below 1/2, six steps of
    psi'(x) = psi'(x + 1) + 1/x^2, then the asymptotic series."""
    reflect = ew.lt(x, 0.5)
    # The other branch of each where gets a harmless value, so that its gradient (zero
    # times the branch's derivative) cannot be 0 * inf.
    sin_pi_x = unary.sin(ew.mul(unary.where(reflect, x, 0.25), math.pi))
    result = unary.where(reflect, ew.div(-(math.pi**2), ew.mul(sin_pi_x, sin_pi_x)), 0.0)
    z = unary.where(reflect, ew.sub(1.0, x), x)
    for _ in range(6):
        result = ew.add(result, ew.div(1.0, ew.mul(z, z)))
        z = ew.add(z, 1.0)
    inverse_square = ew.div(1.0, ew.mul(z, z))
    series = ew.mul(ew.sub(1.0 / 30, ew.mul(inverse_square, 1.0 / 42)), inverse_square)
    series = ew.mul(ew.sub(1.0 / 6, series), inverse_square)
    series = ew.add(ew.add(ew.div(0.5, z), 1.0), series)
    result = ew.add(result, ew.div(series, z))
    return unary.where(reflect, unary.neg(result), result)


def polygamma(n: int, input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The n-th derivative of digamma, elementwise (n = 0 is digamma itself)."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if n == 0:
        return digamma(input, out=out)
    result = _polygamma(n, _floating(input))
    return _into("polygamma", result, out)


def _polygamma(n: int, x: Tensor) -> Tensor:
    if n == 1:
        return _trigamma(x)
    # (-1)^(n+1) n! zeta(n + 1, x), as PyTorch computes it
    return ew.mul(zeta(float(n + 1), x), (-1.0) ** (n + 1) * math.factorial(n))


def _into(name: str, result: Tensor, out: Tensor | None) -> Tensor:
    """`result`, or its values written to `out` (PyTorch's out= rules)."""
    if out is None:
        return result
    if result.requires_grad:
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )
    target = output(name, out, result._shape, result._dtype, result._device)
    _launch.copy(target, result)
    return finish(out, target)


def polygamma_(t: Tensor, n: int) -> Tensor:
    """In place: t = polygamma(n, t)."""
    result = polygamma(n, t)
    if result.dtype is not t.dtype:
        raise RuntimeError(
            f"polygamma_(): result type {result.dtype.name} can't be cast to the desired "
            f"output type {t.dtype.name}"
        )
    return t.copy_(result)


def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The log of the multivariate gamma function of dimension p, elementwise:
    sum_i lgamma(x - i/2) for i < p, plus p(p-1)/4 log(pi)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = _floating(input)
    if x.numel() and not amin(x).item() > (p - 1) / 2:
        raise RuntimeError(f"All elements must be greater than (p-1)/2 = {(p - 1) / 2}")
    result = lgamma(x)
    for i in range(1, p):
        result = ew.add(result, lgamma(ew.sub(x, i / 2)))
    return ew.add(result, p * (p - 1) / 4 * math.log(math.pi))


def mvlgamma_(t: Tensor, p: int) -> Tensor:
    """In place: t = mvlgamma(t, p)."""
    result = mvlgamma(t, p)
    if result.dtype is not t.dtype:
        raise RuntimeError(
            f"mvlgamma_(): result type {result.dtype.name} can't be cast to the desired "
            f"output type {t.dtype.name}"
        )
    return t.copy_(result)
