"""Gamma(concentration, rate)."""

from __future__ import annotations

from numbers import Number
from typing import Any, ClassVar, Self

from ember import _ops as ops
from ember._dtype_info import finfo
from ember._tensor import Tensor
from ember._tensor_core import Size
from ember.distributions import constraints
from ember.distributions._math import xlogy
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.utils import broadcast_all

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """Density rate^a x^(a-1) exp(-rate x) / Γ(a), a = `concentration`."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "concentration": constraints.positive,
        "rate": constraints.positive,
    }
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        both = isinstance(concentration, Number) and isinstance(rate, Number)
        batch_shape = Size() if both else self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Self:
        new = self._get_checked_instance(Gamma, _instance)
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new.rate = self.rate.expand(tuple(batch_shape))
        super(Gamma, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        value = ops._standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return value.clamp(min=finfo(value.dtype).tiny)

    def log_prob(self, value: Any) -> Tensor:
        value = ops.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (
            xlogy(self.concentration, self.rate)
            + xlogy(self.concentration - 1, value)
            - self.rate * value
            - ops.lgamma(self.concentration)
        )

    def entropy(self) -> Tensor:
        return (
            self.concentration
            - self.rate.log()
            + ops.lgamma(self.concentration)
            + (1.0 - self.concentration) * ops.digamma(self.concentration)
        )

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        x, y = natural_params
        return ops.lgamma(x + 1) + (x + 1) * (-y.reciprocal()).log()
