"""Normal(loc, scale)."""

from __future__ import annotations

import math
from numbers import Number, Real
from typing import Any, ClassVar

from ember import _ops as ops
from ember._tensor import Tensor
from ember._tensor_core import Size
from ember.autograd import no_grad
from ember.distributions import constraints
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.utils import _standard_normal, broadcast_all

__all__ = ["Normal"]


class Normal(ExponentialFamily):
    """The normal (Gaussian) distribution with mean `loc` and standard deviation `scale`."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        if isinstance(loc, Number) and isinstance(scale, Number):
            batch_shape = Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Normal:
        new = self._get_checked_instance(Normal, _instance)
        batch_shape = Size(tuple(batch_shape))
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        super(Normal, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return ops.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ops.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value: Tensor) -> Tensor:
        return self.loc + self.scale * ops.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        x, y = natural_params
        return -0.25 * x.pow(2) / y + 0.5 * (-math.pi / y).log()
