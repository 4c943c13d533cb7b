"""GeneralizedPareto(loc, scale, concentration)."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any, ClassVar

from ember import _ops as ops
from ember._tensor import Tensor
from ember._tensor_core import Size
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.utils import _uniform, broadcast_all

__all__ = ["GeneralizedPareto"]

_ZERO_TOLERANCE = 1e-8  # torch.isclose(c, 0)'s absolute tolerance: c counts as exactly 0


class GeneralizedPareto(Distribution):
    """The tail law with survival (1 + c z)^(-1/c), z = (x - loc) / scale (exp(-z) at c = 0):
    Exponential at c = 0, Pareto for c > 0, bounded above for c < 0."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(
        self, loc: Any, scale: Any, concentration: Any, validate_args: bool | None = None
    ) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalars = all(isinstance(v, Number) for v in (loc, scale, concentration))
        batch_shape = Size() if scalars else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> GeneralizedPareto:
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        shape = tuple(batch_shape)
        new.loc = self.loc.expand(shape)
        new.scale = self.scale.expand(shape)
        new.concentration = self.concentration.expand(shape)
        super(GeneralizedPareto, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _zero_and_safe(self) -> tuple[Tensor, Tensor]:
        """Where the concentration is 0, and the concentration with those set to 1."""
        zero = self.concentration.abs() <= _ZERO_TOLERANCE
        return zero, ops.where(zero, ops.ones_like(self.concentration), self.concentration)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self.icdf(_uniform(self._extended_shape(sample_shape), self.loc))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, safe = self._zero_and_safe()
        y = 1 / safe + ops.ones_like(z)
        nonzero = ops.where(y == 0, y, y * (safe * z).log1p())
        return -self.scale.log() - ops.where(zero, z, nonzero)

    def log_survival_function(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, safe = self._zero_and_safe()
        return ops.where(zero, -z, -(safe * z).log1p() / safe)

    def log_cdf(self, value: Tensor) -> Tensor:
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value: Tensor) -> Tensor:
        return self.log_cdf(value).exp()

    def icdf(self, value: Tensor) -> Tensor:
        zero, safe = self._zero_and_safe()
        logu = (-value).log1p()
        nonzero = self.loc + self.scale / safe * (-safe * logu).expm1()
        return ops.where(zero, self.loc - self.scale * logu, nonzero)

    @property
    def mean(self) -> Tensor:
        valid = self.concentration < 1
        safe = ops.where(valid, self.concentration, ops.full_like(self.concentration, 0.5))
        result = self.loc + self.scale / (1 - safe)
        return ops.where(valid, result, ops.full_like(result, math.nan))

    @property
    def variance(self) -> Tensor:
        valid = self.concentration < 0.5
        safe = ops.where(valid, self.concentration, ops.full_like(self.concentration, 0.25))
        result = self.scale**2 / ((1 - safe) ** 2 * (1 - 2 * safe))
        return ops.where(valid, result, ops.full_like(result, math.nan))

    def entropy(self) -> Tensor:
        return (self.scale.log() + self.concentration + 1).expand(self._batch_shape)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        lower = self.loc
        upper = ops.where(
            self.concentration < 0,
            lower - self.scale / self.concentration,
            ops.full_like(lower, math.inf),
        )
        return constraints.interval(lower, upper)
