"""Window functions: hann, hamming, blackman, bartlett and kaiser windows, as PyTorch
computes them, in ember ops on the target device.

A periodic window of length N is the symmetric window of length N + 1 without its last
point (what spectral analysis wants); lengths 0 and 1 give [] and [1]. Each computes in
float64 and is cast to the requested floating dtype.
"""

from __future__ import annotations

import math
from typing import Any

from ember import _dtype
from ember._ops import conversion as conv
from ember._ops import creation, unary
from ember._ops import elementwise as ew
from ember._tensor import Tensor

__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window", "kaiser_window"]

# Terms of the series of the modified Bessel function I0: (x/2)^(2k) / (k!)^2 falls below
# float64's precision for k past ~40 at the x Kaiser windows use (beta up to ~50).
_BESSEL_TERMS = 60


def hann_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: _dtype.dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """0.5 - 0.5 cos(2πn / (N - 1))."""
    return _cosine_window(
        "hann_window", window_length, periodic, (0.5, 0.5), dtype, device, requires_grad
    )


def hamming_window(
    window_length: int,
    periodic: bool = True,
    alpha: float = 0.54,
    beta: float = 0.46,
    *,
    dtype: _dtype.dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """alpha - beta cos(2πn / (N - 1))."""
    return _cosine_window(
        "hamming_window", window_length, periodic, (alpha, beta), dtype, device, requires_grad
    )


def blackman_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: _dtype.dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """0.42 - 0.5 cos(2πn / (N - 1)) + 0.08 cos(4πn / (N - 1))."""
    return _cosine_window(
        "blackman_window", window_length, periodic, (0.42, 0.5, 0.08), dtype, device, requires_grad
    )


def bartlett_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: _dtype.dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The triangle 1 - |2n / (N - 1) - 1|."""
    dt = _check("bartlett_window", window_length, dtype)
    n, span = _points(window_length, periodic, device)
    if span <= 0:
        return _finish(n, window_length, dt, requires_grad)
    window = ew.sub(1.0, unary.abs(ew.sub(ew.mul(n, 2.0 / span), 1.0)))
    return _finish(window, window_length, dt, requires_grad)


def kaiser_window(
    window_length: int,
    periodic: bool = True,
    beta: float = 12.0,
    *,
    dtype: _dtype.dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """I0(beta sqrt(1 - (2n / (N - 1) - 1)²)) / I0(beta), I0 the modified Bessel function."""
    dt = _check("kaiser_window", window_length, dtype)
    n, span = _points(window_length, periodic, device)
    if span <= 0:
        return _finish(n, window_length, dt, requires_grad)
    ratio = ew.sub(ew.mul(n, 2.0 / span), 1.0)
    argument = ew.mul(unary.sqrt(unary.clamp(ew.sub(1.0, ew.mul(ratio, ratio)), 0.0)), beta)
    window = ew.div(_bessel_i0(argument), _bessel_i0_scalar(beta))
    return _finish(window, window_length, dt, requires_grad)


def _cosine_window(
    name: str,
    length: int,
    periodic: bool,
    coefficients: tuple[float, ...],
    dtype: _dtype.dtype | None,
    device: Any,
    requires_grad: bool,
) -> Tensor:
    """sum_k (-1)^k a_k cos(2πkn / (N - 1)) (the generalised cosine window)."""
    dt = _check(name, length, dtype)
    n, span = _points(length, periodic, device)
    if span <= 0:
        return _finish(n, length, dt, requires_grad)
    phase = ew.mul(n, 2.0 * math.pi / span)
    window = creation.full(n._shape, coefficients[0], dtype=_dtype.float64, device=n._device)
    for k, a in enumerate(coefficients[1:], start=1):
        term = ew.mul(unary.cos(ew.mul(phase, float(k))), a)
        window = ew.sub(window, term) if k % 2 else ew.add(window, term)
    return _finish(window, length, dt, requires_grad)


def _check(name: str, length: int, dtype: _dtype.dtype | None) -> _dtype.dtype:
    dt = dtype if dtype is not None else _dtype.get_default_dtype()
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dt}")
    if length < 0:
        raise RuntimeError(
            f"{name} requires non-negative window_length, got window_length={length}"
        )
    return dt


def _points(length: int, periodic: bool, device: Any) -> tuple[Tensor, int]:
    """float64 0..N-1 and the span N - 1 of the symmetric window (N + 1 points if periodic)."""
    dev = creation.resolve_device(device)
    if length <= 1:
        return creation.ones((length,), dtype=_dtype.float64, device=dev), 0
    points = length + 1 if periodic else length
    return creation.arange(length, dtype=_dtype.float64, device=dev), points - 1


def _finish(window: Tensor, length: int, dt: _dtype.dtype, requires_grad: bool) -> Tensor:
    out = conv.cast(window, dt)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _bessel_i0(x: Tensor) -> Tensor:
    """I0(x) = sum_k ((x/2)^k / k!)², summed in float64."""
    half_squared = ew.mul(ew.mul(x, x), 0.25)
    term = creation.ones(x._shape, dtype=_dtype.float64, device=x._device)
    total = term
    for k in range(1, _BESSEL_TERMS):
        term = ew.mul(term, ew.div(half_squared, float(k * k)))
        total = ew.add(total, term)
    return total


def _bessel_i0_scalar(x: float) -> float:
    term, total = 1.0, 1.0
    for k in range(1, _BESSEL_TERMS):
        term *= (x * x / 4) / (k * k)
        total += term
    return total
