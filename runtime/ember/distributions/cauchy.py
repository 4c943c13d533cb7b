"""Cauchy(loc, scale)."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any, ClassVar

from ember import _ops as ops
from ember._tensor import Tensor
from ember._tensor_core import Size
from ember.distributions import constraints
from ember.distributions._math import atan
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """The Cauchy (Lorentz) distribution: density 1 / (pi scale (1 + ((x - loc)/scale)^2))."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        both = isinstance(loc, Number) and isinstance(scale, Number)
        batch_shape = Size() if both else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Cauchy:
        new = self._get_checked_instance(Cauchy, _instance)
        new.loc = self.loc.expand(tuple(batch_shape))
        new.scale = self.scale.expand(tuple(batch_shape))
        super(Cauchy, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return ops.full(self._extended_shape(), math.nan, dtype=self.loc.dtype,
                        device=self.loc.device)  # fmt: skip

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return ops.full(self._extended_shape(), math.inf, dtype=self.loc.dtype,
                        device=self.loc.device)  # fmt: skip

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = ops.empty(*shape, dtype=self.loc.dtype, device=self.loc.device).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (
            -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()
        )

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value: Tensor) -> Tensor:
        angle = math.pi * (value - 0.5)
        return angle.sin() / angle.cos() * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()
