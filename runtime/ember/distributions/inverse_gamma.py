"""InverseGamma(concentration, rate): 1 / Gamma(concentration, rate)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from ember import _ops as ops
from ember._tensor import Tensor
from ember.distributions import constraints
from ember.distributions.gamma import Gamma
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """X = 1 / Y with Y ~ Gamma(concentration, rate)."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "concentration": constraints.positive,
        "rate": constraints.positive,
    }
    support = constraints.positive
    has_rsample = True
    base_dist: Gamma

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -ops.ones((), dtype=base_dist.rate.dtype, device=base_dist.rate.device)
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> InverseGamma:
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self) -> Tensor:
        return self.base_dist.concentration

    @property
    def rate(self) -> Tensor:
        return self.base_dist.rate

    @property
    def mean(self) -> Tensor:
        result = self.rate / (self.concentration - 1)
        return ops.where(self.concentration > 1, result, ops.full_like(result, math.inf))

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        result = self.rate.square() / ((self.concentration - 1).square() * (self.concentration - 2))
        return ops.where(self.concentration > 2, result, ops.full_like(result, math.inf))

    def entropy(self) -> Tensor:
        return (
            self.concentration
            + self.rate.log()
            + ops.lgamma(self.concentration)
            - (1 + self.concentration) * ops.digamma(self.concentration)
        )
