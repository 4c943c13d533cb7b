"""The standard gamma sampler (`ember._standard_gamma`), a composite over the normal and
uniform streams, and its reparameterised gradient (`ember._standard_gamma_grad`).

Marsaglia and Tsang's method, vectorised: every pending element proposes from one normal
and one uniform per round; rounds repeat until every element is accepted (about 1.05
rounds per element at alpha >= 1). alpha < 1 samples alpha + 1 and scales by u**(1/alpha).
The gradient d x / d alpha at fixed quantile is PyTorch's approximation (a Taylor series
for small x, Rice's saddle point for large alpha, a rational fit otherwise), so Gamma,
Beta and Dirichlet `rsample` differentiate with respect to their concentrations.
"""

from __future__ import annotations

from ember import _dtype
from ember._dtype_info import finfo
from ember._ops import conversion as conv
from ember._ops import elementwise as ew
from ember._ops import random as rnd
from ember._ops import reduction as red
from ember._ops import unary
from ember._ops.special_functions import digamma
from ember._tensor import Tensor

__all__ = ["_standard_gamma", "_standard_gamma_grad"]


def _standard_gamma(input: Tensor, generator: rnd.Generator | None = None) -> Tensor:
    """Gamma(input, 1) samples in `input`'s shape and dtype; differentiable in `input`."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"_standard_gamma(): argument 'self' must be Tensor, not {type(input).__name__}"
        )
    if not input._dtype.is_floating_point:
        raise NotImplementedError(f"\"gamma_cpu\" not implemented for '{input._dtype.name}'")
    alpha = conv.to(input.detach(), _dtype.float64)
    sample = _marsaglia_tsang(alpha, generator)
    # As PyTorch: a draw that underflows is the dtype's smallest normal, never zero.
    result = unary.clamp(conv.to(sample, input._dtype), min=finfo(input._dtype).tiny)
    if input.requires_grad:
        slope = conv.to(_standard_gamma_grad(alpha, sample), input._dtype)
        # Value `result`, derivative `slope` with respect to `input`.
        result = ew.add(result, ew.mul(ew.sub(input, input.detach()), slope))
    return result


def _marsaglia_tsang(alpha: Tensor, generator: rnd.Generator | None) -> Tensor:
    boost = ew.lt(alpha, 1.0)
    a = unary.where(boost, ew.add(alpha, 1.0), alpha)
    d = ew.sub(a, 1.0 / 3.0)
    c = unary.rsqrt(ew.mul(d, 9.0))
    shape, dev = alpha._shape, alpha._device
    sample = ew.mul(alpha, 0.0)
    pending = ew.eq(alpha, alpha)  # NaN concentrations never accept: they stay NaN
    sample = unary.where(pending, sample, alpha)
    pending = ew.logical_and(pending, ew.gt(alpha, 0.0))
    while bool(red.any(pending).item()):
        x = rnd.randn(*shape, generator=generator, dtype=_dtype.float64, device=dev)
        u = rnd.rand(*shape, generator=generator, dtype=_dtype.float64, device=dev)
        v = ew.add(ew.mul(c, x), 1.0)
        v = ew.mul(ew.mul(v, v), v)
        positive = ew.gt(v, 0.0)
        log_v = unary.log(unary.where(positive, v, 1.0))
        bound = ew.add(ew.mul(ew.mul(x, x), 0.5), ew.mul(d, ew.add(ew.sub(1.0, v), log_v)))
        accept = ew.logical_and(positive, ew.lt(unary.log(ew.sub(1.0, u)), bound))
        take = ew.logical_and(pending, accept)
        sample = unary.where(take, ew.mul(d, v), sample)
        pending = ew.logical_and(pending, unary.logical_not(accept))
    u = rnd.rand(*shape, generator=generator, dtype=_dtype.float64, device=dev)
    scale = ew.pow(ew.sub(1.0, u), ew.div(1.0, unary.where(boost, alpha, 1.0)))
    return unary.where(boost, ew.mul(sample, scale), sample)


def _standard_gamma_grad(alpha: Tensor, x: Tensor) -> Tensor:
    """d x / d alpha of a Gamma(alpha, 1) sample x at fixed CDF (not differentiable)."""
    alpha, x = alpha.detach(), x.detach()
    small_x = _grad_small_x(alpha, x)
    large_alpha = _grad_large_alpha(alpha, x)
    rational = _grad_rational(alpha, x)
    out = unary.where(ew.gt(alpha, 8.0), large_alpha, rational)
    return unary.where(ew.lt(x, 0.8), small_x, out)


def _grad_small_x(alpha: Tensor, x: Tensor) -> Tensor:
    x = unary.clamp(x, max=0.8)
    numer = ew.mul(x, 0.0) + 1.0
    denom = alpha
    series1 = 1.0 / denom
    series2 = 1.0 / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / float(i))
        denom = denom + 1.0
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = ew.pow(x, alpha)
    gamma_pdf = ew.pow(x, alpha - 1.0) * unary.exp(-x)
    gamma_cdf = pow_x_alpha * series1
    cdf_alpha = (unary.log(x) - digamma(alpha)) * gamma_cdf - pow_x_alpha * series2
    result = -cdf_alpha / gamma_pdf
    return unary.where(ew.ne(result, result), 0.0, result)


def _grad_large_alpha(alpha: Tensor, x: Tensor) -> Tensor:
    alpha = unary.clamp(alpha, min=8.0)
    numer_1 = 1.0 + 24.0 * alpha * (1.0 + 12.0 * alpha)
    numer_2 = (
        1440.0 * alpha * alpha + 6.0 * x * (53.0 - 120.0 * x)
        - 65.0 * x * x / alpha + alpha * (107.0 + 3600.0 * x)
    )  # fmt: skip
    near = numer_1 * numer_2 / (1244160.0 * alpha * alpha * alpha * alpha)
    denom = unary.sqrt(8.0 * alpha)
    gap = alpha - x
    gap = unary.where(ew.eq(gap, 0.0), 1e-300, gap)
    ratio = x / alpha
    term2 = denom / gap
    term3 = ew.pow(unary.abs(x - alpha - alpha * unary.log(ratio)), -1.5)
    term23 = unary.where(ew.lt(x, alpha), term2 - term3, term2 + term3)
    term1 = unary.log(ratio) * term23 - unary.sqrt(2.0 / alpha) * (alpha + x) / (gap * gap)
    stirling = 1.0 + 1.0 / (12.0 * alpha) * (1.0 + 1.0 / (24.0 * alpha))
    far = -stirling * x * term1 / denom
    in_band = ew.logical_and(ew.le(0.9 * alpha, x), ew.le(x, 1.1 * alpha))
    return unary.where(in_band, near, far)


_RATIONAL = (
    (0.16009398, -0.094634809, 0.025146376, -0.0030648343,
     1.0, 0.32668115, 0.10406089, 0.0014179084),
    (0.53487893, 0.1298071, 0.065735949, -0.0015649758,
     0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
    (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
     0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07),
)  # fmt: skip


def _grad_rational(alpha: Tensor, x: Tensor) -> Tensor:
    u = unary.log(x / alpha)
    v = unary.log(alpha)
    coef = [_RATIONAL[0][i] + u * (_RATIONAL[1][i] + u * _RATIONAL[2][i]) for i in range(8)]
    p = coef[0] + v * (coef[1] + v * (coef[2] + v * coef[3]))
    q = coef[4] + v * (coef[5] + v * (coef[6] + v * coef[7]))
    return unary.exp(p / q)
