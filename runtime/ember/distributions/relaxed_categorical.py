"""RelaxedOneHotCategorical (the Concrete / Gumbel-softmax distribution) and its log form."""

from __future__ import annotations

from typing import Any, ClassVar

from ember import _ops as ops
from ember._tensor import Tensor
from ember._tensor_core import Size
from ember.distributions import constraints
from ember.distributions.categorical import Categorical
from ember.distributions.distribution import Distribution
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import ExpTransform
from ember.distributions.utils import _uniform, broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical sample (reparameterised)."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "probs": constraints.simplex,
        "logits": constraints.real_vector,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        temperature: Tensor,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ExpRelaxedCategorical:
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        super(ExpRelaxedCategorical, new).__init__(
            batch_shape, self.event_shape, validate_args=False
        )
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        uniforms = clamp_probs(_uniform(shape, self.logits))
        gumbels = -((-(uniforms.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value: Tensor) -> Tensor:
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = ops.lgamma(
            ops.full_like(self.temperature, float(k))
        ) - self.temperature.log() * (-(k - 1))
        score = logits - value * self.temperature
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """A continuous relaxation of OneHotCategorical on the simplex (Gumbel-softmax)."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "probs": constraints.simplex,
        "logits": constraints.real_vector,
    }
    support = constraints.simplex
    has_rsample = True
    base_dist: ExpRelaxedCategorical

    def __init__(
        self,
        temperature: Tensor,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        base_dist = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> RelaxedOneHotCategorical:
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
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
