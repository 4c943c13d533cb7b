"""Laplace(loc, scale)."""

from __future__ import annotations

from numbers import Number
from typing import Any, ClassVar

from ember import _ops as ops
from ember._dtype_info import finfo
from ember._tensor import Tensor
from ember._tensor_core import Size
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.utils import _uniform, broadcast_all

__all__ = ["Laplace"]


class Laplace(Distribution):
    """Density exp(-|x - loc| / scale) / (2 scale)."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return (2**0.5) * self.scale

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        both = isinstance(loc, Number) and isinstance(scale, Number)
        batch_shape = Size() if both else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Laplace:
        new = self._get_checked_instance(Laplace, _instance)
        new.loc = self.loc.expand(tuple(batch_shape))
        new.scale = self.scale.expand(tuple(batch_shape))
        super(Laplace, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = finfo(self.loc.dtype).eps
        u = _uniform(shape, self.loc) * (2.0 - 2 * eps) + (-1.0 + eps)  # in (-1, 1)
        return self.loc - self.scale * u.sign() * ops.log1p(-u.abs())

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return 0.5 - 0.5 * z.sign() * ops.expm1(-z.abs())

    def icdf(self, value: Tensor) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * ops.log1p(-2 * term.abs())

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()
