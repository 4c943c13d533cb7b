"""ContinuousBernoulli(probs or logits): the continuous relaxation on [0, 1] with density
∝ p^x (1 - p)^(1 - x) (Loaiza-Ganem and Cunningham)."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any, ClassVar

from ember import _ops as ops
from ember._tensor import Tensor
from ember._tensor_core import Size
from ember.autograd import no_grad
from ember.distributions import constraints
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.utils import (
    _uniform,
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)
from ember.nn import functional as F

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """Near probs = 1/2 (within `lims`) the normaliser and moments use Taylor expansions,
    as in PyTorch, because the closed forms cancel catastrophically there."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(
        self,
        probs: Any = None,
        logits: Any = None,
        lims: tuple[float, float] = (0.499, 0.501),
        validate_args: bool | None = None,
    ) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            # Checked before the clamp below, which would make any value pass.
            if validate_args is not None and not bool(
                constraints.unit_interval.check(self.probs).all()
            ):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if is_scalar else self._param.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ContinuousBernoulli:
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        shape = tuple(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(shape)
            new._param = new.logits
        super(ContinuousBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _outside_unstable_region(self) -> Tensor:
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> Tensor:
        return ops.where(
            self._outside_unstable_region(),
            self.probs,
            self._lims[0] * ops.ones_like(self.probs),
        )

    def _cont_bern_log_norm(self) -> Tensor:
        """The log of the normalising constant, by the Taylor series near 1/2."""
        cut = self._cut_probs()
        below = ops.where(cut <= 0.5, cut, ops.zeros_like(cut))
        above = ops.where(cut >= 0.5, cut, ops.ones_like(cut))
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - ops.where(
            cut <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log()
        )
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return ops.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return ops.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    @property
    def variance(self) -> Tensor:
        cut = self._cut_probs()
        variances = cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2) + 1.0 / (
            (-cut).log1p() - cut.log()
        ).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return ops.where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape: Any = ()) -> Tensor:
        u = _uniform(self._extended_shape(sample_shape), self.probs)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self.icdf(_uniform(self._extended_shape(sample_shape), self.probs))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        bce = F.binary_cross_entropy_with_logits(logits, value, reduction="none")
        return -bce + self._cont_bern_log_norm()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = ops.where(self._outside_unstable_region(), cdfs, value)
        return ops.where(
            value <= 0.0,
            ops.zeros_like(value),
            ops.where(value >= 1.0, ops.ones_like(value), unbounded),
        )

    def icdf(self, value: Tensor) -> Tensor:
        cut = self._cut_probs()
        inverse = ((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p()) / (
            cut.log() - (-cut).log1p()
        )
        return ops.where(self._outside_unstable_region(), inverse, value)

    def entropy(self) -> Tensor:
        log_probs0 = (-self.probs).log1p()
        log_probs1 = self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.logits,)

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        (x,) = natural_params
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = ops.where(outside, x, (self._lims[0] - 0.5) * ops.ones_like(x))
        log_norm = (cut.exp() - 1.0).abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return ops.where(outside, log_norm, taylor)
