"""Poisson(rate)."""

from __future__ import annotations

from numbers import Number
from typing import Any, ClassVar

from ember import _ops as ops
from ember._tensor import Tensor
from ember._tensor_core import Size
from ember.autograd import no_grad
from ember.distributions import constraints
from ember.distributions._math import xlogy
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """Counts with P(k) = rate^k exp(-rate) / k!."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Poisson:
        new = self._get_checked_instance(Poisson, _instance)
        new.rate = self.rate.expand(tuple(batch_shape))
        super(Poisson, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return ops.poisson(self.rate.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return xlogy(value, rate) - rate - ops.lgamma(value + 1)

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.rate.log(),)

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        (x,) = natural_params
        return x.exp()
