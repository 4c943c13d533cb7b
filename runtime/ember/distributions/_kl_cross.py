"""KL divergences between different families (and the generic exponential-family one),
registered into kl.py's table on import, as torch.distributions.kl has them. A pair whose
supports nest the wrong way has KL = +inf."""

from __future__ import annotations

import math
from typing import Any

from ember import _ops as ops
from ember._tensor import Tensor
from ember.autograd import grad
from ember.distributions.bernoulli import Bernoulli
from ember.distributions.beta import Beta
from ember.distributions.binomial import Binomial
from ember.distributions.continuous_bernoulli import ContinuousBernoulli
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.exponential import Exponential
from ember.distributions.gamma import Gamma
from ember.distributions.gumbel import Gumbel
from ember.distributions.kl import _gaussian_kl, _set, register_kl
from ember.distributions.laplace import Laplace
from ember.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from ember.distributions.multivariate_normal import MultivariateNormal
from ember.distributions.normal import Normal
from ember.distributions.pareto import Pareto
from ember.distributions.poisson import Poisson
from ember.distributions.uniform import Uniform
from ember.distributions.utils import _sum_rightmost, euler_constant

__all__: list[str] = []


def _infinite_like(t: Tensor) -> Tensor:
    return ops.full_like(t, math.inf)


def _x_log_x(t: Tensor) -> Tensor:
    return t * t.log()


_INFINITE_PAIRS: list[tuple[type, list[type], str]] = [
    (Beta, [Pareto], "concentration1"),
    (ContinuousBernoulli, [Pareto], "probs"),
    (Exponential, [Beta, ContinuousBernoulli, Pareto, Uniform], "rate"),
    (Gamma, [Beta, ContinuousBernoulli, Pareto, Uniform], "concentration"),
    (Gumbel, [Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform], "loc"),
    (Laplace, [Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform], "loc"),
    (Normal, [Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform], "loc"),
    (Pareto, [Beta, ContinuousBernoulli, Uniform], "scale"),
    (Poisson, [Bernoulli, Binomial], "rate"),
]


def _infinity_from(attribute: str) -> Any:
    def kl(p: Any, q: Any) -> Tensor:
        return _infinite_like(getattr(p, attribute))

    return kl


for _p_type, _q_types, _attribute in _INFINITE_PAIRS:
    for _q_type in _q_types:
        register_kl(_p_type, _q_type)(_infinity_from(_attribute))


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p: Any, q: Any) -> Tensor:
    """The Bregman divergence of the log-normaliser, by autograd (same family only)."""
    if type(p) is not type(q):
        raise NotImplementedError(
            "The cross KL-divergence between different exponential families cannot be "
            "computed using Bregman divergences"
        )
    p_natural = [n.detach().requires_grad_() for n in p._natural_params]
    q_natural = q._natural_params
    log_normalizer = p._log_normalizer(*p_natural)
    gradients = grad(log_normalizer.sum(), p_natural, create_graph=True)
    result = q._log_normalizer(*q_natural) - log_normalizer
    for pn, qn, g in zip(p_natural, q_natural, gradients, strict=True):
        result = result - _sum_rightmost((qn - pn) * g, len(q.event_shape))
    return result


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p: Bernoulli, q: Poisson) -> Tensor:
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


def _beta_mean(p: Beta) -> Tensor:
    return p.concentration1 / (p.concentration1 + p.concentration0)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p: Beta, q: ContinuousBernoulli) -> Tensor:
    return -p.entropy() - p.mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p: Beta, q: Exponential) -> Tensor:
    return -p.entropy() - q.rate.log() + q.rate * _beta_mean(p)


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p: Beta, q: Gamma) -> Tensor:
    total = p.concentration1 + p.concentration0
    t2 = ops.lgamma(q.concentration) - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (ops.digamma(p.concentration1) - ops.digamma(total))
    return -p.entropy() + t2 - t3 + q.rate * _beta_mean(p)


@register_kl(Beta, Normal)
def _kl_beta_normal(p: Beta, q: Normal) -> Tensor:
    mean = _beta_mean(p)
    var_normal = q.scale.pow(2)
    t2 = 0.5 * (var_normal * 2 * math.pi).log()
    second = (mean * (1 - mean) / (p.concentration1 + p.concentration0 + 1) + mean.pow(2)) * 0.5
    return -p.entropy() + t2 + (second - q.loc * mean + q.loc.pow(2) * 0.5) / var_normal


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(
    p: ContinuousBernoulli, q: ContinuousBernoulli
) -> Tensor:
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + (-p.probs).log1p()
    t3 = -q._cont_bern_log_norm() - (-q.probs).log1p()
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p: ContinuousBernoulli, q: Exponential) -> Tensor:
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p: ContinuousBernoulli, q: Normal) -> Tensor:
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale).square()) + q.scale.log()
    t3 = (p.variance + p.mean.square() - 2.0 * q.loc * p.mean) / (2.0 * q.scale.square())
    return -p.entropy() + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p: ContinuousBernoulli, q: Uniform) -> Tensor:
    result = -p.entropy() + (q.high - q.low).log()
    return _set(result, (q.low >= 0) | (q.high <= 1), math.inf)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p: Exponential, q: Gumbel) -> Tensor:
    scale_rate = p.rate * q.scale
    loc_scale = q.loc / q.scale
    t2 = loc_scale.exp() * scale_rate / (scale_rate + 1)
    return scale_rate.log() - 1 - loc_scale + t2 + scale_rate.reciprocal()


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p: Exponential, q: Normal) -> Tensor:
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    t1 = 0.5 * (rate_sqr * var_normal * 2 * math.pi).log()
    t234 = rate_sqr.reciprocal() - q.loc / p.rate + q.loc.pow(2) * 0.5
    return t1 - 1 + t234 / var_normal


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p: Gamma, q: Gumbel) -> Tensor:
    rate_scale = p.rate * q.scale
    loc_scale = q.loc / q.scale
    a = p.concentration
    t1 = (a - 1) * ops.digamma(a) - ops.lgamma(a) - a
    t2 = rate_scale.log() + a / rate_scale
    t3 = loc_scale.exp() * (1 + rate_scale.reciprocal()).pow(-a) - loc_scale
    return t1 + t2 + t3


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p: Gamma, q: Normal) -> Tensor:
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    a = p.concentration
    t1 = 0.5 * (rate_sqr * var_normal * 2 * math.pi).log() - a - ops.lgamma(a)
    t234 = 0.5 * (a.pow(2) + a) / rate_sqr - q.loc * a / p.rate + 0.5 * q.loc.pow(2)
    return t1 + (a - 1) * ops.digamma(a) + t234 / var_normal


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p: Gumbel, q: Normal) -> Tensor:
    ratio = p.scale / q.scale
    t1 = (ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * euler_constant - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (euler_constant + 1)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p: Laplace, q: Normal) -> Tensor:
    var_normal = q.scale.pow(2)
    ratio = p.scale.pow(2) / var_normal
    t1 = 0.5 * (2 * ratio / math.pi).log()
    t234 = 0.5 * p.loc.pow(2) - p.loc * q.loc + 0.5 * q.loc.pow(2)
    return -t1 + ratio + t234 / var_normal - 1


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p: Normal, q: Gumbel) -> Tensor:
    mean_scale = p.loc / q.scale
    var_scale_sqr = (p.scale / q.scale).pow(2)
    loc_scale = q.loc / q.scale
    t3 = (-mean_scale + 0.5 * var_scale_sqr + loc_scale).exp()
    return (
        -var_scale_sqr.log() * 0.5 + mean_scale - loc_scale + t3
        - 0.5 * (1 + math.log(2 * math.pi))
    )  # fmt: skip


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p: Normal, q: Laplace) -> Tensor:
    loc_diff = p.loc - q.loc
    standardised = loc_diff / p.scale
    t2 = math.sqrt(2 / math.pi) * p.scale * (-0.5 * standardised.pow(2)).exp()
    t3 = loc_diff * ops.erf(math.sqrt(0.5) * standardised)
    return -(p.scale / q.scale).log() + (t2 + t3) / q.scale - 0.5 * (1 + math.log(0.5 * math.pi))


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p: Pareto, q: Exponential) -> Tensor:
    scale_rate = p.scale * q.rate
    result = (p.alpha / scale_rate).log() - p.alpha.reciprocal()
    result = result + p.alpha * scale_rate / (p.alpha - 1) - 1
    return _set(result, p.alpha <= 1, math.inf)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p: Pareto, q: Gamma) -> Tensor:
    common = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common
    t2 = ops.lgamma(q.concentration) - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return _set(t1 + t2 + t3 + t4 - 1, p.alpha <= 1, math.inf)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p: Pareto, q: Normal) -> Tensor:
    var_normal = 2 * q.scale.pow(2)
    common = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t3 = p.alpha * common.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common - q.loc).pow(2)
    result = t1 - p.alpha.reciprocal() + (t3 + t4) / var_normal - 1
    return _set(result, p.alpha <= 2, math.inf)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p: Uniform, q: Beta) -> Tensor:
    width = p.high - p.low
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + width) / width
    t4 = (
        ops.lgamma(q.concentration1) + ops.lgamma(q.concentration0)
        - ops.lgamma(q.concentration1 + q.concentration0)
    )  # fmt: skip
    result = t3 + t4 - width.log() - t2
    return _set(result, (p.high > 1) | (p.low < 0), math.inf)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p: Uniform, q: ContinuousBernoulli) -> Tensor:
    result = -p.entropy() - p.mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()
    return _set(result, (p.high >= 1) | (p.low <= 0), math.inf)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p: Uniform, q: Exponential) -> Tensor:
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _set(result, p.low < 0, math.inf)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p: Uniform, q: Gamma) -> Tensor:
    width = p.high - p.low
    t2 = ops.lgamma(q.concentration) - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t4 = q.rate * (p.high + p.low) / 2
    return _set(-width.log() + t2 + t3 + t4, p.low < 0, math.inf)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p: Uniform, q: Gumbel) -> Tensor:
    common = q.scale / (p.high - p.low)
    high_diff = (p.high - q.loc) / q.scale
    low_diff = (p.low - q.loc) / q.scale
    t1 = common.log() + 0.5 * (high_diff + low_diff)
    return t1 - common * ((-high_diff).exp() - (-low_diff).exp())


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p: Uniform, q: Pareto) -> Tensor:
    width = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * width).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    return _set(t2 * (q.alpha + 1) - t1, p.low < q.scale, math.inf)


def _gaussian_factor(d: Any) -> Tensor:
    """The lower Cholesky factor of a (low-rank or full) multivariate normal's covariance."""
    if isinstance(d, LowRankMultivariateNormal):
        return d.scale_tril
    return d._unbroadcasted_scale_tril


def _kl_gaussians(p: Any, q: Any) -> Tensor:
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two (Low Rank) Multivariate Normals with different event "
            "shapes cannot be computed"
        )
    return _gaussian_kl(p.loc, _gaussian_factor(p), q.loc, _gaussian_factor(q), p.event_shape[0])


register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)(_kl_gaussians)
register_kl(MultivariateNormal, LowRankMultivariateNormal)(_kl_gaussians)
register_kl(LowRankMultivariateNormal, MultivariateNormal)(_kl_gaussians)
