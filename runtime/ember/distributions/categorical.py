"""Categorical(probs or logits): category indices 0..K-1 with the given weights."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from ember import _dtype
from ember import _ops as ops
from ember._dtype_info import finfo
from ember._tensor import Tensor
from ember._tensor_core import Size
from ember.autograd import no_grad
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    """Indices into the last dim of `probs` (non-negative, normalised here) or `logits`
    (unnormalised log-probabilities); exactly one must be given."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1),
    }
    has_enumerate_support = True

    def __init__(
        self, probs: Any = None, logits: Any = None, validate_args: bool | None = None
    ) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndim > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Categorical:
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = Size(tuple(batch_shape))
        param_shape = (*batch_shape, self._num_events)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(param_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(param_shape)
            new._param = new.logits
        new._num_events = self._num_events
        super(Categorical, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def mean(self) -> Tensor:
        return ops.full(self._extended_shape(), math.nan, dtype=self.probs.dtype,
                        device=self.probs.device)  # fmt: skip

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(dim=-1)

    @property
    def variance(self) -> Tensor:
        return ops.full(self._extended_shape(), math.nan, dtype=self.probs.dtype,
                        device=self.probs.device)  # fmt: skip

    def sample(self, sample_shape: Any = ()) -> Tensor:
        sample_shape = Size(tuple(sample_shape))
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = ops.multinomial(probs_2d, sample_shape.numel(), True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = ops.broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self) -> Tensor:
        min_real = finfo(self.logits.dtype).min
        logits = self.logits.clamp(min=min_real)
        p_log_p = logits * self.probs
        return -p_log_p.sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        num_events = self._num_events
        values = ops.arange(num_events, dtype=_dtype.int64, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1, *self._batch_shape))
        return values
