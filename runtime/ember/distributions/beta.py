"""Beta(concentration1, concentration0): the first coordinate of a 2-d Dirichlet."""

from __future__ import annotations

from numbers import Real
from typing import Any, ClassVar

from ember import _ops as ops
from ember._tensor import Tensor
from ember.distributions import constraints
from ember.distributions.dirichlet import Dirichlet
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.utils import broadcast_all

__all__ = ["Beta"]


class Beta(ExponentialFamily):
    """Density ∝ x^(c1 - 1) (1 - x)^(c0 - 1) on [0, 1]."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(
        self, concentration1: Any, concentration0: Any, validate_args: bool | None = None
    ) -> None:
        if isinstance(concentration1, Real) and isinstance(concentration0, Real):
            pair = ops.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            pair = ops.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(pair, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Beta:
        new = self._get_checked_instance(Beta, _instance)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        super(Beta, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = ops.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()

    @property
    def concentration1(self) -> Tensor:
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self) -> Tensor:
        return self._dirichlet.concentration[..., 1]

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        x, y = natural_params
        return ops.lgamma(x) + ops.lgamma(y) - ops.lgamma(x + y)
