"""Dirichlet(concentration)."""

from __future__ import annotations

from typing import Any, ClassVar

from ember import _ops as ops
from ember._dtype_info import finfo
from ember._tensor import Tensor
from ember.distributions import constraints
from ember.distributions._math import xlogy
from ember.distributions.exp_family import ExponentialFamily
from ember.nn import functional as F

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """Points of the simplex with density ∝ prod x_i^(a_i - 1), a = `concentration`."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "concentration": constraints.independent(constraints.positive, 1)
    }
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Dirichlet:
        new = self._get_checked_instance(Dirichlet, _instance)
        new.concentration = self.concentration.expand(*batch_shape, *self.event_shape)
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """Normalised reparameterised gammas: the implicit gradient flows to concentration."""
        shape = self._extended_shape(sample_shape)
        gammas = ops._standard_gamma(self.concentration.expand(shape))
        info = finfo(gammas.dtype)
        return (gammas / gammas.sum(-1, True)).clamp(min=info.tiny, max=1 - info.eps)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (
            xlogy(self.concentration - 1.0, value).sum(-1)
            + ops.lgamma(self.concentration.sum(-1))
            - ops.lgamma(self.concentration).sum(-1)
        )

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> Tensor:
        shifted = (self.concentration - 1).clamp(min=0.0)
        mode = shifted / shifted.sum(-1, True)
        below_one = (self.concentration < 1).all(-1, keepdim=True)
        corner = F.one_hot(mode.argmax(-1), shifted.shape[-1]).to(mode.dtype)
        return ops.where(below_one, corner, mode)

    @property
    def variance(self) -> Tensor:
        total = self.concentration.sum(-1, True)
        return self.concentration * (total - self.concentration) / (total.pow(2) * (total + 1))

    def entropy(self) -> Tensor:
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (
            ops.lgamma(self.concentration).sum(-1)
            - ops.lgamma(a0)
            - (k - a0) * ops.digamma(a0)
            - ((self.concentration - 1.0) * ops.digamma(self.concentration)).sum(-1)
        )

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.concentration,)

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        (x,) = natural_params
        return ops.lgamma(x).sum(-1) - ops.lgamma(x.sum(-1))
