"""RelaxedBernoulli (the binary Concrete / Gumbel-softmax) and its logit form."""

from __future__ import annotations

from numbers import Number
from typing import Any, ClassVar

from ember._tensor import Tensor
from ember._tensor_core import Size
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import SigmoidTransform
from ember.distributions.utils import (
    _uniform,
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(Distribution):
    """The logit of a RelaxedBernoulli sample: reparameterised, on the real line."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    support = constraints.real
    has_rsample = True

    def __init__(
        self,
        temperature: Tensor,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        self.temperature = temperature
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogitRelaxedBernoulli:
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        shape = tuple(batch_shape)
        new.temperature = self.temperature
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(shape)
            new._param = new.logits
        super(LogitRelaxedBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(_uniform(shape, probs))
        return (
            uniforms.log() - (-uniforms).log1p() + probs.log() - (-probs).log1p()
        ) / self.temperature

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """A continuous relaxation of Bernoulli on (0, 1), sharper as `temperature` falls."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    support = constraints.unit_interval
    has_rsample = True
    base_dist: LogitRelaxedBernoulli

    def __init__(
        self,
        temperature: Tensor,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> RelaxedBernoulli:
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self) -> Tensor:
        return self.base_dist.temperature

    @property
    def logits(self) -> Tensor:
        return self.base_dist.logits

    @property
    def probs(self) -> Tensor:
        return self.base_dist.probs
