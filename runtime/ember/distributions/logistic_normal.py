"""LogisticNormal(loc, scale): the stick-breaking image of a Normal on the simplex."""

from __future__ import annotations

from typing import Any, ClassVar

from ember._tensor import Tensor
from ember.distributions import constraints
from ember.distributions.independent import Independent
from ember.distributions.normal import Normal
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """X = StickBreakingTransform()(Y) with Y ~ Normal(loc, scale): a point of the simplex."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.simplex
    has_rsample = True
    base_dist: Independent

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        base_dist: Any = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogisticNormal:
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self) -> Tensor:
        normal: Any = self.base_dist.base_dist
        return normal.loc

    @property
    def scale(self) -> Tensor:
        normal: Any = self.base_dist.base_dist
        return normal.scale
