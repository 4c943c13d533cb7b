"""Uniform(low, high) on the half-open interval [low, high)."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from ember import _ops as ops
from ember._tensor import Tensor
from ember._tensor_core import Size
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.utils import _uniform, broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    """Uniform samples in [low, high)."""

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        return {
            "low": constraints.less_than(self.high),
            "high": constraints.greater_than(self.low),
        }

    has_rsample = True

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        return self.high * math.nan

    @property
    def stddev(self) -> Tensor:
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low).pow(2) / 12

    def __init__(self, low: Any, high: Any, validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        if isinstance(low, Number) and isinstance(high, Number):
            batch_shape = Size()
        else:
            batch_shape = self.low.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Uniform:
        new = self._get_checked_instance(Uniform, _instance)
        batch_shape = Size(tuple(batch_shape))
        new.low = self.low.expand(batch_shape)
        new.high = self.high.expand(batch_shape)
        super(Uniform, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.interval(self.low, self.high)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return self.low + _uniform(shape, self.low) * (self.high - self.low)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        lb = ops.le(self.low, value).type_as(self.low)
        ub = ops.gt(self.high, value).type_as(self.low)
        return (lb * ub).log() - (self.high - self.low).log()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        result = (value - self.low) / (self.high - self.low)
        return result.clamp(min=0, max=1)

    def icdf(self, value: Tensor) -> Tensor:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()
