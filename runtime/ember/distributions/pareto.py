"""Pareto(scale, alpha): scale * exp(Exponential(alpha))."""

from __future__ import annotations

from typing import Any, ClassVar

from ember._tensor import Tensor
from ember.distributions import constraints
from ember.distributions.exponential import Exponential
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import AffineTransform, ExpTransform
from ember.distributions.utils import broadcast_all

__all__ = ["Pareto"]


class Pareto(TransformedDistribution):
    """The Pareto type-I distribution: density alpha scale^alpha / x^(alpha + 1), x >= scale."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "alpha": constraints.positive,
        "scale": constraints.positive,
    }

    def __init__(self, scale: Any, alpha: Any, validate_args: bool | None = None) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base_dist = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Pareto:
        new = self._get_checked_instance(Pareto, _instance)
        new.scale = self.scale.expand(tuple(batch_shape))
        new.alpha = self.alpha.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.greater_than_eq(self.scale)

    def entropy(self) -> Tensor:
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
