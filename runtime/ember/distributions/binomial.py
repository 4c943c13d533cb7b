"""Binomial(total_count, probs or logits)."""

from __future__ import annotations

from typing import Any, ClassVar

from ember import _ops as ops
from ember._tensor import Tensor
from ember._tensor_core import Size
from ember.autograd import no_grad
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Binomial"]


def _clamp_by_zero(x: Tensor) -> Tensor:
    """max(x, 0) with gradient 1/2 at 0 (as torch's)."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(Distribution):
    """Successes among `total_count` independent trials of probability `probs`."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(
        self,
        total_count: Any = 1,
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

    def expand(self, batch_shape: Any, _instance: Any = None) -> Binomial:
        new = self._get_checked_instance(Binomial, _instance)
        shape = tuple(batch_shape)
        new.total_count = self.total_count.expand(shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(shape)
            new._param = new.logits
        super(Binomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return ops.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = ops.lgamma(self.total_count + 1)
        log_factorial_k = ops.lgamma(value + 1)
        log_factorial_nmk = ops.lgamma(self.total_count - value + 1)
        normalize_term = (
            self.total_count * _clamp_by_zero(self.logits)
            + self.total_count * ops.log1p(ops.exp(-self.logits.abs()))
            - log_factorial_n
        )
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def _homogeneous_count(self, what: str) -> int:
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return total_count

    def entropy(self) -> Tensor:
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        total_count = self._homogeneous_count("enumerate_support")
        values = ops.arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1, *self._batch_shape))
        return values
