"""NegativeBinomial(total_count, probs or logits): successes before total_count failures."""

from __future__ import annotations

from typing import Any, ClassVar

from ember import _ops as ops
from ember._tensor import Tensor
from ember.autograd import no_grad
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.gamma import Gamma
from ember.distributions.utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits
from ember.nn import functional as F

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """Successes (each of probability `probs`) before `total_count` failures."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(
        self,
        total_count: Any,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> NegativeBinomial:
        new = self._get_checked_instance(NegativeBinomial, _instance)
        shape = tuple(batch_shape)
        new.total_count = self.total_count.expand(shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(shape)
            new._param = new.logits
        super(NegativeBinomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / ops.sigmoid(-self.logits)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @lazy_property
    def _gamma(self) -> Gamma:
        return Gamma(self.total_count, (-self.logits).exp(), validate_args=False)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with no_grad():
            rate = self._gamma.sample(sample_shape)
            return ops.poisson(rate)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized = self.total_count * F.logsigmoid(-self.logits) + value * F.logsigmoid(
            self.logits
        )
        log_normalization = (
            -ops.lgamma(self.total_count + value)
            + ops.lgamma(1.0 + value)
            + ops.lgamma(self.total_count)
        )
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized - log_normalization
