"""FisherSnedecor(df1, df2): the F distribution."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from ember import _ops as ops
from ember._dtype_info import finfo
from ember._tensor import Tensor
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.gamma import Gamma
from ember.distributions.utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """The ratio of two scaled chi-squared variables with `df1` and `df2` degrees of freedom."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "df1": constraints.positive,
        "df2": constraints.positive,
    }
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1: Any, df2: Any, validate_args: bool | None = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(self.df1.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> FisherSnedecor:
        new = self._get_checked_instance(FisherSnedecor, _instance)
        shape = tuple(batch_shape)
        new.df1 = self.df1.expand(shape)
        new.df2 = self.df2.expand(shape)
        new._gamma1 = self._gamma1.expand(shape)
        new._gamma2 = self._gamma2.expand(shape)
        super(FisherSnedecor, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        df2 = ops.where(self.df2 <= 2, ops.full_like(self.df2, math.nan), self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self) -> Tensor:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return ops.where(self.df1 <= 2, ops.full_like(mode, math.nan), mode)

    @property
    def variance(self) -> Tensor:
        df2 = ops.where(self.df2 <= 4, ops.full_like(self.df2, math.nan), self.df2)
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = finfo(x2.dtype).tiny
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = ops.lgamma(ct1 + ct2) - ops.lgamma(ct1) - ops.lgamma(ct2)
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3
