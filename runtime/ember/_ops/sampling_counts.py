"""Counts: `poisson` and `binomial`, composites over the uniform stream (the same numbers
for a seed on every device).

Small means invert the CDF one step per round for every element still below its uniform
(rounds ~ the largest count drawn, a few dozen at mean < 10). Larger means use Hörmann's
transformed rejection (PTRS for Poisson, BTRS for the binomial, as NumPy and PyTorch do):
each round proposes for every pending element and rounds repeat until all are accepted.
"""

from __future__ import annotations

import math

from ember import _dtype
from ember._ops import conversion as conv
from ember._ops import elementwise as ew
from ember._ops import random as rnd
from ember._ops import reduction as red
from ember._ops import unary
from ember._ops.sampling import _name
from ember._ops.special_functions import lgamma
from ember._tensor import Tensor

__all__ = ["binomial", "poisson"]

_INVERSION_LIMIT = 10.0


def _uniform(like: Tensor, generator: rnd.Generator | None) -> Tensor:
    return rnd.rand(*like._shape, generator=generator, dtype=_dtype.float64, device=like._device)


def _any(t: Tensor) -> bool:
    return bool(red.any(t).item())


def poisson(input: Tensor, generator: rnd.Generator | None = None) -> Tensor:
    """Poisson(rate) counts, elementwise for the rates in `input`, in `input`'s dtype."""
    if not isinstance(input, Tensor):
        raise TypeError(f"poisson(): argument 'input' must be Tensor, not {type(input).__name__}")
    if not input._dtype.is_floating_point:
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{_name(input)}'")
    rate = conv.to(input.detach(), _dtype.float64)
    if _any(ew.lt(rate, 0.0)):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    small = ew.lt(rate, _INVERSION_LIMIT)
    counts = _poisson_inversion(unary.where(small, rate, 0.0), generator)
    if _any(unary.logical_not(small)):
        large = _poisson_ptrs(unary.where(small, _INVERSION_LIMIT, rate), generator)
        counts = unary.where(small, counts, large)
    counts = unary.where(ew.ne(rate, rate), rate, counts)
    return conv.to(counts, input._dtype)


def _poisson_inversion(rate: Tensor, generator: rnd.Generator | None) -> Tensor:
    u = _uniform(rate, generator)
    term = unary.exp(-rate)
    cdf = term
    count = ew.mul(rate, 0.0)
    pending = ew.gt(u, cdf)
    while _any(pending):
        count = unary.where(pending, count + 1.0, count)
        term = unary.where(pending, term * rate / count, term)
        cdf = unary.where(pending, cdf + term, cdf)
        # A cdf that rounds to just below u, or a term that underflows, stops there.
        pending = ew.logical_and(ew.logical_and(pending, ew.gt(u, cdf)), ew.gt(term, 0.0))
    return count


def _poisson_ptrs(lam: Tensor, generator: rnd.Generator | None) -> Tensor:
    slam = unary.sqrt(lam)
    loglam = unary.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    log_inv_alpha = unary.log(1.1239 + 1.1328 / (b - 3.4))
    vr = 0.9277 - 3.6224 / (b - 2.0)
    count = ew.mul(lam, 0.0)
    pending = ew.eq(lam, lam)
    while _any(pending):
        u = _uniform(lam, generator) - 0.5
        v = _uniform(lam, generator)
        us = 0.5 - unary.abs(u)
        k = unary.floor((2.0 * a / us + b) * u + lam + 0.43)
        quick = ew.logical_and(ew.ge(us, 0.07), ew.le(v, vr))
        reject = ew.logical_or(ew.lt(k, 0.0), ew.logical_and(ew.lt(us, 0.013), ew.gt(v, us)))
        safe_k = unary.clamp(k, min=0.0)
        lhs = unary.log(unary.clamp(v, min=1e-300)) + log_inv_alpha - unary.log(a / (us * us) + b)
        rhs = -lam + safe_k * loglam - lgamma(safe_k + 1.0)
        accept = ew.logical_or(quick, ew.logical_and(unary.logical_not(reject), ew.le(lhs, rhs)))
        take = ew.logical_and(pending, accept)
        count = unary.where(take, k, count)
        pending = ew.logical_and(pending, unary.logical_not(accept))
    return count


def binomial(count: Tensor, prob: Tensor, generator: rnd.Generator | None = None) -> Tensor:
    """Binomial(count, prob) draws elementwise (broadcast), in `count`'s dtype."""
    for name, value in (("count", count), ("prob", prob)):
        if not isinstance(value, Tensor):
            raise TypeError(
                f"binomial(): argument '{name}' must be Tensor, not {type(value).__name__}"
            )
        if not value._dtype.is_floating_point:
            raise ValueError(
                f"binomial only supports floating-point dtypes for {name}, got: {_name(value)}"
            )
    n = conv.to(count.detach(), _dtype.float64)
    p = conv.to(prob.detach(), _dtype.float64)
    n, p = n + p * 0.0, p + n * 0.0
    flip = ew.gt(p, 0.5)
    q = unary.where(flip, 1.0 - p, p)
    small = ew.lt(n * q, _INVERSION_LIMIT)
    draws = _binomial_inversion(n, unary.where(small, q, 0.0), generator)
    if _any(unary.logical_not(small)):
        large = _binomial_btrs(unary.where(small, 100.0, n), unary.where(small, 0.5, q), generator)
        draws = unary.where(small, draws, large)
    draws = unary.where(flip, n - draws, draws)
    bad = ew.logical_or(ew.ne(n, n), ew.ne(p, p))
    draws = unary.where(bad, math.nan, draws)
    return conv.to(draws, count._dtype)


def _binomial_inversion(n: Tensor, p: Tensor, generator: rnd.Generator | None) -> Tensor:
    u = _uniform(n, generator)
    q = 1.0 - p
    safe_q = unary.where(ew.gt(q, 0.0), q, 1.0)
    ratio = p / safe_q
    term = ew.pow(q, n)
    cdf = term
    draws = ew.mul(n, 0.0)
    pending = ew.logical_and(ew.gt(u, cdf), ew.gt(n, 0.0))
    while _any(pending):
        draws = unary.where(pending, draws + 1.0, draws)
        term = unary.where(pending, term * ratio * (n - draws + 1.0) / draws, term)
        cdf = unary.where(pending, cdf + term, cdf)
        pending = ew.logical_and(ew.logical_and(pending, ew.gt(u, cdf)), ew.lt(draws, n))
    return draws


def _binomial_btrs(n: Tensor, p: Tensor, generator: rnd.Generator | None) -> Tensor:
    q = 1.0 - p
    spq = unary.sqrt(n * p * q)
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    v_r = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    lpq = unary.log(p / q)
    m = unary.floor((n + 1.0) * p)
    h = lgamma(m + 1.0) + lgamma(n - m + 1.0)
    draws = ew.mul(n, 0.0)
    pending = ew.eq(n, n)
    while _any(pending):
        u = _uniform(n, generator) - 0.5
        v = _uniform(n, generator)
        us = 0.5 - unary.abs(u)
        k = unary.floor((2.0 * a / us + b) * u + c)
        inside = ew.logical_and(ew.ge(k, 0.0), ew.le(k, n))
        quick = ew.logical_and(ew.ge(us, 0.07), ew.le(v, v_r))
        safe_k = unary.clamp(unary.clamp(k, min=0.0), max=n)
        lhs = unary.log(unary.clamp(v, min=1e-300) * alpha / (a / (us * us) + b))
        bound = h - lgamma(safe_k + 1.0) - lgamma(n - safe_k + 1.0) + (safe_k - m) * lpq
        accept = ew.logical_and(inside, ew.logical_or(quick, ew.le(lhs, bound)))
        take = ew.logical_and(pending, accept)
        draws = unary.where(take, k, draws)
        pending = ew.logical_and(pending, unary.logical_not(accept))
    return draws
