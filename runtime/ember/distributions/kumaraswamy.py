"""Kumaraswamy(concentration1, concentration0)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from ember import _ops as ops
from ember._tensor import Tensor
from ember.distributions import constraints
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import AffineTransform, PowerTransform
from ember.distributions.uniform import Uniform
from ember.distributions.utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a: Tensor, b: Tensor, n: int) -> Tensor:
    """E[X^n] of Kumaraswamy(a, b)."""
    arg1 = 1 + n / a
    log_value = ops.lgamma(arg1) + ops.lgamma(b) - ops.lgamma(arg1 + b)
    return b * log_value.exp()


class Kumaraswamy(TransformedDistribution):
    """X = (1 - U^(1/c0))^(1/c1) for U uniform: a Beta-like law with a closed-form CDF."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(
        self, concentration1: Any, concentration0: Any, validate_args: bool | None = None
    ) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(
            ops.full_like(self.concentration0, 0),
            ops.full_like(self.concentration0, 1),
            validate_args=validate_args,
        )
        transforms = [
            PowerTransform(exponent=self.concentration0.reciprocal()),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=self.concentration1.reciprocal()),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Kumaraswamy:
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(tuple(batch_shape))
        new.concentration0 = self.concentration0.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        log_mode = (
            self.concentration0.reciprocal() * (-self.concentration0).log1p()
            - (-self.concentration0 * self.concentration1).log1p()
        )
        undefined = (self.concentration0 < 1) | (self.concentration1 < 1)
        return ops.where(undefined, ops.full_like(log_mode, math.nan), log_mode).exp()

    @property
    def variance(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self) -> Tensor:
        t0 = 1 - self.concentration0.reciprocal()
        t1 = 1 - self.concentration1.reciprocal()
        h0 = ops.digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * h0 - self.concentration1.log() - self.concentration0.log()
