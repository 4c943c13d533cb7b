"""VonMises(loc, concentration): the circular normal distribution on [-pi, pi)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from ember import _dtype
from ember import _ops as ops
from ember._tensor import Tensor
from ember.autograd import no_grad
from ember.distributions import constraints
from ember.distributions._math import acos
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

# Abramowitz and Stegun 9.8.1-9.8.4: I0 and I1 below and above x = 3.75.
_I0_COEF_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2]
_I0_COEF_LARGE = [0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2,
                  -0.2057706e-1, 0.2635537e-1, -0.1647633e-1, 0.392377e-2]  # fmt: skip
_I1_COEF_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3]
_I1_COEF_LARGE = [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1,
                  0.2282967e-1, -0.2895312e-1, 0.1787654e-1, -0.420059e-2]  # fmt: skip
_COEF_SMALL = [_I0_COEF_SMALL, _I1_COEF_SMALL]
_COEF_LARGE = [_I0_COEF_LARGE, _I1_COEF_LARGE]


def _eval_poly(y: Tensor, coef: list[float]) -> Tensor:
    result = y * 0.0 + coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x: Tensor, order: int = 0) -> Tensor:
    """log I_order(x) for x > 0, order 0 or 1."""
    y = (x / 3.75).pow(2)
    small = _eval_poly(y, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _COEF_LARGE[order]).log()
    return ops.where(x < 3.75, small, large)


def _rejection_sample(loc: Tensor, concentration: Tensor, proposal_r: Tensor, x: Tensor) -> Tensor:
    """Best and Fisher's wrapped-Cauchy rejection sampler, in rounds until all accept."""
    done = ops.zeros(*x.shape, dtype=_dtype.bool, device=loc.device)
    while not bool(done.all()):
        u1, u2, u3 = ops.rand(3, *x.shape, dtype=loc.dtype, device=loc.device).unbind(0)
        z = (math.pi * u1).cos()
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        take = accept & ~done
        x = ops.where(take, (u3 - 0.5).sign() * acos(f.clamp(min=-1.0, max=1.0)), x)
        done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """Density exp(concentration cos(x - loc)) / (2 pi I0(concentration)) on the circle."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "loc": constraints.real,
        "concentration": constraints.positive,
    }
    support = constraints.real
    has_rsample = False

    def __init__(self, loc: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, (), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> VonMises:
        new = self._get_checked_instance(VonMises, _instance)
        new.loc = self.loc.expand(tuple(batch_shape))
        new.concentration = self.concentration.expand(tuple(batch_shape))
        super(VonMises, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * (value - self.loc).cos()
        return (
            log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)
        )

    @lazy_property
    def _loc(self) -> Tensor:
        return self.loc.to(_dtype.float64)

    @lazy_property
    def _concentration(self) -> Tensor:
        return self.concentration.to(_dtype.float64)

    @lazy_property
    def _proposal_r(self) -> Tensor:
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho**2) / (2 * rho)
        return ops.where(kappa < 1e-5, 1 / kappa + kappa, proposal_r)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            x = ops.zeros(*shape, dtype=_dtype.float64, device=self.loc.device)
            drawn = _rejection_sample(self._loc, self._concentration, self._proposal_r, x)
            return drawn.to(self.loc.dtype)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:
        ratio = _log_modified_bessel_fn(self.concentration, order=1) - _log_modified_bessel_fn(
            self.concentration, order=0
        )
        return 1 - ratio.exp()
