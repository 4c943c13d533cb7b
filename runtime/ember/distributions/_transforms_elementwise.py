"""Elementwise transforms: Exp, Power, Sigmoid, Tanh, Softplus, Abs, Affine and the
cumulative-distribution transform."""

from __future__ import annotations

import math
from numbers import Number, Real
from typing import Any

from ember import _ops as ops
from ember._dtype_info import finfo
from ember._tensor import Tensor
from ember.distributions import constraints
from ember.distributions._transform_base import Transform
from ember.distributions.utils import broadcast_all
from ember.nn import functional as F

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "CumulativeDistributionTransform",
    "ExpTransform",
    "PowerTransform",
    "SigmoidTransform",
    "SoftplusTransform",
    "TanhTransform",
]


class ExpTransform(Transform):
    """y = exp(x)."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExpTransform)

    def __hash__(self) -> int:
        return hash(ExpTransform)

    def _call(self, x: Tensor) -> Tensor:
        return x.exp()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return x


class PowerTransform(Transform):
    """y = x ** exponent, on the positive reals."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self) -> Any:
        return self.exponent.sign()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PowerTransform):
            return False
        return bool(ops.eq(self.exponent, other.exponent).all())

    def __hash__(self) -> int:
        return id(self)

    def _call(self, x: Tensor) -> Tensor:
        return x.pow(self.exponent)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape: Any) -> Any:
        return ops.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))

    def inverse_shape(self, shape: Any) -> Any:
        return ops.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))


def _clipped_sigmoid(x: Tensor) -> Tensor:
    info = finfo(x.dtype)
    return ops.sigmoid(x).clamp(min=info.tiny, max=1.0 - info.eps)


class SigmoidTransform(Transform):
    """y = 1 / (1 + exp(-x))."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SigmoidTransform)

    def __hash__(self) -> int:
        return hash(SigmoidTransform)

    def _call(self, x: Tensor) -> Tensor:
        return _clipped_sigmoid(x)

    def _inverse(self, y: Tensor) -> Tensor:
        info = finfo(y.dtype)
        y = y.clamp(min=info.tiny, max=1.0 - info.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -F.softplus(-x) - F.softplus(x)


class SoftplusTransform(Transform):
    """y = log(1 + exp(x))."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoftplusTransform)

    def __hash__(self) -> int:
        return hash(SoftplusTransform)

    def _call(self, x: Tensor) -> Tensor:
        return F.softplus(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -F.softplus(-x)


class TanhTransform(Transform):
    """y = tanh(x)."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TanhTransform)

    def __hash__(self) -> int:
        return hash(TanhTransform)

    def _call(self, x: Tensor) -> Tensor:
        return x.tanh()

    def _inverse(self, y: Tensor) -> Tensor:
        return 0.5 * ((1 + y).log() - (1 - y).log())  # atanh, without a clamp (as torch)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        # log(1 - tanh(x)^2) written stably.
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))


class AbsTransform(Transform):
    """y = |x| (not injective: the inverse picks the positive branch)."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbsTransform)

    def __hash__(self) -> int:
        return hash(AbsTransform)

    def _call(self, x: Tensor) -> Tensor:
        return x.abs()

    def _inverse(self, y: Tensor) -> Tensor:
        return y


class AffineTransform(Transform):
    """y = loc + scale * x, over `event_dim` rightmost dims."""

    bijective = True

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> constraints.Constraint:
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> constraints.Constraint:
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AffineTransform):
            return False
        for mine, theirs in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(mine, Number) and isinstance(theirs, Number):
                if mine != theirs:
                    return False
            elif not bool(ops.eq(ops.as_tensor(mine), ops.as_tensor(theirs)).all()):
                return False
        return True

    def __hash__(self) -> int:
        return id(self)

    @property
    def sign(self) -> Any:
        if isinstance(self.scale, Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x: Tensor) -> Tensor:
        return self.loc + self.scale * x

    def _inverse(self, y: Tensor) -> Tensor:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        shape: tuple[int, ...] = tuple(x.shape)
        scale = self.scale
        if isinstance(scale, Real):
            result = ops.full_like(x, math.log(abs(scale)))
        else:
            result = scale.abs().log()
        if self.event_dim:
            result_size = (*result.size()[: result.dim() - self.event_dim], -1)
            result = result.view(result_size).sum(-1)
            shape = shape[: len(shape) - self.event_dim]
        return result.expand(shape)

    def forward_shape(self, shape: Any) -> Any:
        return ops.broadcast_shapes(
            shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ())
        )

    def inverse_shape(self, shape: Any) -> Any:
        return ops.broadcast_shapes(
            shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ())
        )


class CumulativeDistributionTransform(Transform):
    """y = distribution.cdf(x): a univariate distribution's CDF as a transform."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]  # computed here, a plain attribute on the base
        return self.distribution.support

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return type(self)(self.distribution, cache_size=cache_size)

    def _call(self, x: Tensor) -> Tensor:
        return self.distribution.cdf(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return self.distribution.log_prob(x)
