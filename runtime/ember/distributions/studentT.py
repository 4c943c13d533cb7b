"""StudentT(df, loc, scale)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from ember import _ops as ops
from ember._tensor import Tensor
from ember.distributions import constraints
from ember.distributions.chi2 import Chi2
from ember.distributions.distribution import Distribution
from ember.distributions.utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t with `df` degrees of freedom, shifted by `loc` and scaled by `scale`."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "df": constraints.positive,
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True

    @property
    def mean(self) -> Tensor:
        return ops.where(self.df <= 1, ops.full_like(self.loc, math.nan), self.loc)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        finite = self.scale.pow(2) * self.df / (self.df - 2)
        infinite = ops.full_like(self.df, math.inf)
        out = ops.where(self.df > 2, finite, infinite)
        return ops.where(self.df <= 1, ops.full_like(self.df, math.nan), out)

    def __init__(
        self, df: Any, loc: Any = 0.0, scale: Any = 1.0, validate_args: bool | None = None
    ) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> StudentT:
        new = self._get_checked_instance(StudentT, _instance)
        shape = tuple(batch_shape)
        new.df = self.df.expand(shape)
        new.loc = self.loc.expand(shape)
        new.scale = self.scale.expand(shape)
        new._chi2 = self._chi2.expand(shape)
        super(StudentT, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, self.df)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * (z / self.df).rsqrt()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (
            self.scale.log()
            + 0.5 * self.df.log()
            + 0.5 * math.log(math.pi)
            + ops.lgamma(0.5 * self.df)
            - ops.lgamma(0.5 * (self.df + 1.0))
        )
        return -0.5 * (self.df + 1.0) * (y**2.0 / self.df).log1p() - z

    def entropy(self) -> Tensor:
        lbeta = ops.lgamma(0.5 * self.df) + math.lgamma(0.5) - ops.lgamma(0.5 * (self.df + 1))
        return (
            self.scale.log()
            + 0.5 * (self.df + 1) * (ops.digamma(0.5 * (self.df + 1)) - ops.digamma(0.5 * self.df))
            + 0.5 * self.df.log()
            + lbeta
        )
