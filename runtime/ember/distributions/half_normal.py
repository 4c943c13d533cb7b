"""HalfNormal(scale) and HalfCauchy(scale): |X| for X centred Normal or Cauchy."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from ember import _ops as ops
from ember._tensor import Tensor
from ember.distributions import constraints
from ember.distributions.cauchy import Cauchy
from ember.distributions.normal import Normal
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import AbsTransform

__all__ = ["HalfCauchy", "HalfNormal"]


class _Folded(TransformedDistribution):
    """|X| for a base symmetric about 0: density 2 f(x) on x >= 0."""

    support = constraints.nonnegative
    base_dist: Normal | Cauchy
    has_rsample = True

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mode(self) -> Tensor:
        return ops.zeros_like(self.scale)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return ops.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Folded):
    """|X| for X ~ Normal(0, scale)."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {"scale": constraints.positive}

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        base_dist = Normal(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfNormal:
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)


class HalfCauchy(_Folded):
    """|X| for X ~ Cauchy(0, scale)."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {"scale": constraints.positive}

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfCauchy:
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        return ops.full(self._extended_shape(), math.inf, dtype=self.scale.dtype,
                        device=self.scale.device)  # fmt: skip

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance
