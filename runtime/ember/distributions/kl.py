"""KL divergences: `kl_divergence(p, q)` dispatches on the pair of types to the most
specific function registered with `register_kl` (as torch.distributions.kl)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from functools import total_ordering
from typing import Any

from ember import _ops as ops
from ember._tensor import Tensor
from ember.distributions._cholesky import solve_lower
from ember.distributions.bernoulli import Bernoulli
from ember.distributions.beta import Beta
from ember.distributions.binomial import Binomial
from ember.distributions.categorical import Categorical
from ember.distributions.cauchy import Cauchy
from ember.distributions.dirichlet import Dirichlet
from ember.distributions.distribution import Distribution
from ember.distributions.exponential import Exponential
from ember.distributions.gamma import Gamma
from ember.distributions.geometric import Geometric
from ember.distributions.gumbel import Gumbel
from ember.distributions.half_normal import HalfNormal
from ember.distributions.independent import Independent
from ember.distributions.laplace import Laplace
from ember.distributions.multivariate_normal import MultivariateNormal, _batch_mahalanobis
from ember.distributions.normal import Normal
from ember.distributions.one_hot_categorical import OneHotCategorical
from ember.distributions.pareto import Pareto
from ember.distributions.poisson import Poisson
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.uniform import Uniform
from ember.distributions.utils import _sum_rightmost, euler_constant
from ember.nn import functional as F

__all__ = ["kl_divergence", "register_kl"]

KLFunction = Callable[[Any, Any], Tensor]
_KL_REGISTRY: dict[tuple[type, type], KLFunction] = {}
_KL_MEMOIZE: dict[tuple[type, type], Any] = {}


def register_kl(type_p: type, type_q: type) -> Callable[[KLFunction], KLFunction]:
    """Decorator: register `fn(p, q)` as KL(p || q) for p, q of these types (or subclasses)."""
    if not isinstance(type_p, type) or not issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) or not issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun: KLFunction) -> KLFunction:
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun

    return decorator


@total_ordering
class _Match:
    """A registered type pair, ordered by specificity (left to right)."""

    __slots__ = ["types"]

    def __init__(self, *types: type) -> None:
        self.types = types

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Match) and self.types == other.types

    def __hash__(self) -> int:
        return hash(self.types)

    def __le__(self, other: _Match) -> bool:
        for x, y in zip(self.types, other.types, strict=True):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p: type, type_q: type) -> Any:
    matches = [
        (super_p, super_q)
        for super_p, super_q in _KL_REGISTRY
        if issubclass(type_p, super_p) and issubclass(type_q, super_q)
    ]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    right_fun = _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please register_kl"
            f"({left_p.__name__}, {right_q.__name__})",
            RuntimeWarning,
            stacklevel=3,
        )
    return left_fun


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q) = E_p[log p(x) - log q(x)], batched over the distributions' batch shape."""
    key = (type(p), type(q))
    fun = _KL_MEMOIZE.get(key)
    if fun is None:
        fun = _KL_MEMOIZE[key] = _dispatch_kl(*key)
    if fun is NotImplemented:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type "
            f"{q.__class__.__name__}"
        )
    return fun(p, q)


def _set(t: Tensor, mask: Tensor, value: float) -> Tensor:
    """`t` with `value` where `mask` holds (broadcast)."""
    return ops.where(mask, ops.full_like(t, value), t)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1 = _set(_set(t1, q.probs == 0, math.inf), p.probs == 0, 0.0)
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2 = _set(_set(t2, q.probs == 1, math.inf), p.probs == 1, 0.0)
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Tensor:
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = ops.lgamma(q.concentration1) + ops.lgamma(q.concentration0) + ops.lgamma(sum_p)
    t2 = ops.lgamma(p.concentration1) + ops.lgamma(p.concentration0) + ops.lgamma(sum_q)
    t3 = (p.concentration1 - q.concentration1) * ops.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * ops.digamma(p.concentration0)
    t5 = (sum_q - sum_p) * ops.digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p: Binomial, q: Binomial) -> Tensor:
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError(
            "KL between Binomials where q.total_count > p.total_count is not implemented"
        )
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return _set(kl, p.total_count > q.total_count, math.inf)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    t = _set(t, (q.probs == 0).expand_as(t), math.inf)
    t = _set(t, (p.probs == 0).expand_as(t), 0.0)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p: OneHotCategorical, q: OneHotCategorical) -> Tensor:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p: Cauchy, q: Cauchy) -> Tensor:
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    return t1 - (4 * p.scale * q.scale).log()


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = ops.lgamma(sum_p) - ops.lgamma(sum_q)
    t2 = (ops.lgamma(p.concentration) - ops.lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = ops.digamma(p.concentration) - ops.digamma(sum_p).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Tensor:
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p: Exponential, q: Gamma) -> Tensor:
    ratio = q.rate / p.rate
    t1 = -q.concentration * ratio.log()
    return (
        t1 + ratio + ops.lgamma(q.concentration) + q.concentration * euler_constant
        - (1 + euler_constant)
    )  # fmt: skip


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Gamma, q: Gamma) -> Tensor:
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = ops.lgamma(q.concentration) - ops.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * ops.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p: Gamma, q: Exponential) -> Tensor:
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p: Gumbel, q: Gumbel) -> Tensor:
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * euler_constant
    t3 = (ct2 + ops.lgamma(1 + ct1) - ct3).exp()
    return t1 + t2 + t3 - (1 + euler_constant)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p: Geometric, q: Geometric) -> Tensor:
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p: HalfNormal, q: HalfNormal) -> Tensor:
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Tensor:
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * (-loc_abs_diff / p.scale).exp()
    return t1 + t2 + t3 - 1


def _gaussian_kl(p_loc: Tensor, p_tril: Tensor, q_loc: Tensor, q_tril: Tensor, n: int) -> Tensor:
    """KL between N(p_loc, p_tril p_tril^T) and N(q_loc, q_tril q_tril^T), n-dimensional."""
    half_term1 = q_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) - p_tril.diagonal(
        dim1=-2, dim2=-1
    ).log().sum(-1)
    batch = tuple(ops.broadcast_shapes(q_tril.shape[:-2], p_tril.shape[:-2]))
    solved = solve_lower(q_tril.expand(*batch, n, n), p_tril.expand(*batch, n, n))
    term2 = solved.pow(2).sum(-1).sum(-1)
    term3 = _batch_mahalanobis(q_tril, q_loc - p_loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(
    p: MultivariateNormal, q: MultivariateNormal
) -> Tensor:
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two Multivariate Normals with different event shapes "
            "cannot be computed"
        )
    return _gaussian_kl(
        p.loc, p._unbroadcasted_scale_tril, q.loc, q._unbroadcasted_scale_tril, p.event_shape[0]
    )


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p: Pareto, q: Pareto) -> Tensor:
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    return _set(result, p.scale < q.scale, math.inf)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Poisson, q: Poisson) -> Tensor:
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p: TransformedDistribution, q: TransformedDistribution) -> Tensor:
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _set(result, (q.low > p.low) | (q.high < p.high), math.inf)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p: Uniform, q: Normal) -> Tensor:
    common_term = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
    t2 = common_term.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p: Beta, q: Uniform) -> Tensor:
    result = -p.entropy() + (q.high - q.low).log()
    return _set(result, (q.low > 0) | (q.high < 1), math.inf)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    return _sum_rightmost(result, p.reinterpreted_batch_ndims)
