"""Exponential(rate)."""

from __future__ import annotations

from numbers import Number
from typing import Any, ClassVar

from ember import _ops as ops
from ember._tensor import Tensor
from ember._tensor_core import Size
from ember.distributions import constraints
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.utils import broadcast_all

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """Density rate * exp(-rate * x) on x >= 0."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return ops.zeros_like(self.rate)

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Exponential:
        new = self._get_checked_instance(Exponential, _instance)
        new.rate = self.rate.expand(tuple(batch_shape))
        super(Exponential, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        noise = ops.empty(*shape, dtype=self.rate.dtype, device=self.rate.device).exponential_()
        return noise / self.rate

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - ops.exp(-self.rate * value)

    def icdf(self, value: Tensor) -> Tensor:
        return -ops.log1p(-value) / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - self.rate.log()

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (-self.rate,)

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        (x,) = natural_params
        return -(-x).log()
