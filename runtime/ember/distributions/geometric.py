"""Geometric(probs or logits): failures before the first success."""

from __future__ import annotations

from numbers import Number
from typing import Any, ClassVar

from ember import _ops as ops
from ember._dtype_info import finfo
from ember._tensor import Tensor
from ember._tensor_core import Size
from ember.autograd import no_grad
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits
from ember.nn import functional as F

__all__ = ["Geometric"]


class Geometric(Distribution):
    """P(k) = (1 - p)^k p for k = 0, 1, ..."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(
        self, probs: Any = None, logits: Any = None, validate_args: bool | None = None
    ) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        param = self.probs if probs is not None else self.logits
        given = probs if probs is not None else logits
        batch_shape = Size() if isinstance(given, Number) else param.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            raise ValueError(
                f"Expected parameter probs ({type(self.probs).__name__} of shape "
                f"{tuple(self.probs.shape)}) of distribution {self!r} to satisfy the constraint "
                f"{constraints.unit_interval!r} and to be positive, but found invalid "
                f"values:\n{self.probs}"
            )

    def expand(self, batch_shape: Any, _instance: Any = None) -> Geometric:
        new = self._get_checked_instance(Geometric, _instance)
        shape = tuple(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(shape)
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(shape)
        super(Geometric, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return ops.zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        tiny = finfo(self.probs.dtype).tiny
        with no_grad():
            u = ops.empty(*shape, dtype=self.probs.dtype, device=self.probs.device)
            u = u.uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        certain_zero = (probs == 1) & (value == 0)
        probs = ops.where(certain_zero, ops.zeros_like(probs), probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        return (
            F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
            / self.probs
        )
