"""Weibull(scale, concentration): scale * Exponential(1) ** (1 / concentration)."""

from __future__ import annotations

from typing import Any, ClassVar

from ember import _ops as ops
from ember._tensor import Tensor
from ember.distributions import constraints
from ember.distributions.exponential import Exponential
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import AffineTransform, PowerTransform
from ember.distributions.utils import broadcast_all, euler_constant

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """The two-parameter Weibull distribution."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "scale": constraints.positive,
        "concentration": constraints.positive,
    }
    support = constraints.positive

    def __init__(self, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(ops.ones_like(self.scale), validate_args=validate_args)
        transforms = [
            PowerTransform(exponent=self.concentration_reciprocal),
            AffineTransform(loc=0, scale=self.scale),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Weibull:
        new = self._get_checked_instance(Weibull, _instance)
        shape = tuple(batch_shape)
        new.scale = self.scale.expand(shape)
        new.concentration = self.concentration.expand(shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(shape)
        transforms = [
            PowerTransform(exponent=new.concentration_reciprocal),
            AffineTransform(loc=0, scale=new.scale),
        ]
        TransformedDistribution.__init__(new, base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.scale * ops.exp(ops.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self) -> Tensor:
        return (
            self.scale
            * ((self.concentration - 1) / self.concentration) ** self.concentration_reciprocal
        )

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (
            ops.exp(ops.lgamma(1 + 2 * self.concentration_reciprocal))
            - ops.exp(2 * ops.lgamma(1 + self.concentration_reciprocal))
        )

    def entropy(self) -> Tensor:
        return (
            euler_constant * (1 - self.concentration_reciprocal)
            + (self.scale * self.concentration_reciprocal).log()
            + 1
        )
