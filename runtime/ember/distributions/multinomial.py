"""Multinomial(total_count, probs or logits): category counts of total_count draws."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from ember import _ops as ops
from ember._tensor import Tensor
from ember._tensor_core import Size
from ember.distributions import constraints
from ember.distributions.binomial import Binomial
from ember.distributions.categorical import Categorical
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Counts per category of `total_count` independent Categorical(probs) draws."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1),
    }
    total_count: int

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def __init__(
        self,
        total_count: int = 1,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Multinomial:
        new = self._get_checked_instance(Multinomial, _instance)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs)
        super(Multinomial, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> constraints.Constraint:
        return constraints.multinomial(self.total_count)

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    def sample(self, sample_shape: Any = ()) -> Tensor:
        sample_shape = tuple(sample_shape)
        samples = self._categorical.sample((self.total_count, *sample_shape))
        order = [*range(1, samples.dim()), 0]
        samples = samples.permute(*order)  # the draws last
        counts = ops.zeros(*self._extended_shape(sample_shape), dtype=samples.dtype,
                           device=samples.device)  # fmt: skip
        counts = counts.scatter_add(-1, samples, ops.ones_like(samples))
        return counts.type_as(self.probs)

    def entropy(self) -> Tensor:
        n = float(self.total_count)
        term1 = n * self._categorical.entropy() - math.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        weights = ops.lgamma(support + 1)
        return term1 + (binomial_probs * weights).sum(0).sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = ops.lgamma(value.sum(-1) + 1)
        log_factorial_xs = ops.lgamma(value + 1).sum(-1)
        impossible_zero = (value == 0) & (logits == -math.inf)
        logits = ops.where(impossible_zero, ops.zeros_like(logits), logits)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
