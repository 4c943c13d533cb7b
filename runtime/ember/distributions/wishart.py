"""Wishart(df, covariance_matrix | precision_matrix | scale_tril)."""

from __future__ import annotations

import math
import warnings
from typing import Any

from ember import _ops as ops
from ember._dtype_info import finfo
from ember._tensor import Tensor
from ember.distributions import constraints
from ember.distributions._cholesky import cholesky, solve_lower
from ember.distributions.chi2 import Chi2
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.multivariate_normal import _cholesky_inverse, _precision_to_scale_tril
from ember.distributions.utils import lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)
_MAX_RESAMPLING_ROUNDS = 10


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    """The multivariate digamma: sum over i < p of digamma(x - i / 2)."""
    offsets = ops.arange(p, dtype=x.dtype, device=x.device) / 2
    return ops.digamma(x.unsqueeze(-1) - offsets).sum(-1)


def _logdet(spd: Tensor) -> Tensor:
    return 2 * cholesky(spd).diagonal(dim1=-2, dim2=-1).log().sum(-1)


class Wishart(ExponentialFamily):
    """Positive-definite p x p matrices: sum of `df` outer products of N(0, covariance)
    vectors (for integer df); sampled by Bartlett's decomposition."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": constraints.greater_than(self.event_shape[-1] - 1),
        }

    def __init__(
        self,
        df: Tensor | float,
        covariance_matrix: Tensor | None = None,
        precision_matrix: Tensor | None = None,
        scale_tril: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise AssertionError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                "specified."
            )
        param = given[0]
        if param.dim() < 2:
            raise ValueError(
                "scale_tril must be at least two-dimensional, with optional leading batch "
                "dimensions"
            )
        if not isinstance(df, Tensor):
            batch_shape = tuple(param.shape[:-2])
            self.df = ops.tensor(float(df), dtype=param.dtype, device=param.device)
        else:
            batch_shape = tuple(ops.broadcast_shapes(param.shape[:-2], df.shape))
            self.df = df.expand(batch_shape)
        event_shape = tuple(param.shape[-2:])
        if bool((self.df <= event_shape[-1] - 1).any()):
            raise ValueError(
                f"Value of df={df} expected to be greater than ndim - 1 = {event_shape[-1] - 1}."
            )
        expanded = param.expand(*batch_shape, -1, -1)
        if scale_tril is not None:
            self.scale_tril = expanded
        elif covariance_matrix is not None:
            self.covariance_matrix = expanded
        else:
            self.precision_matrix = expanded
        if bool((self.df < event_shape[-1]).any()):
            warnings.warn(
                "Low df values detected. Singular samples are highly likely to occur for "
                "ndim - 1 < df < ndim.",
                stacklevel=2,
            )
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            assert precision_matrix is not None
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._bartlett_chi2()

    def _bartlett_chi2(self) -> Chi2:
        p = self._event_shape[-1]
        tril = self._unbroadcasted_scale_tril
        offsets = ops.arange(p, dtype=tril.dtype, device=tril.device)
        return Chi2(self.df.unsqueeze(-1) - offsets.expand(*self._batch_shape, -1))

    def expand(self, batch_shape: Any, _instance: Any = None) -> Wishart:
        new = self._get_checked_instance(Wishart, _instance)
        shape = tuple(batch_shape)
        cov_shape = (*shape, *self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(shape)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._bartlett_chi2()
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple[int, ...]:
        return (*self._batch_shape, *self._event_shape)

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        tril = self._unbroadcasted_scale_tril
        return ops.matmul(tril, tril.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        return _cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    def _df_matrix(self) -> Tensor:
        # A number df stays 0-d (as torch's); expanded here so batched moments work.
        return self.df.expand(self._batch_shape).reshape(*self._batch_shape, 1, 1)

    @property
    def mean(self) -> Tensor:
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = ops.where(factor <= 0, ops.full_like(factor, math.nan), factor)
        return factor.expand(self._batch_shape).reshape(*self._batch_shape, 1, 1) * (
            self.covariance_matrix
        )

    @property
    def variance(self) -> Tensor:
        v = self.covariance_matrix
        diag = v.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (v.pow(2) + diag.unsqueeze(-1) * diag.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape: tuple[int, ...]) -> Tensor:
        p = self._event_shape[-1]
        chi = self._dist_chi2.rsample(sample_shape).sqrt()
        chi = chi.clamp(min=finfo(chi.dtype).eps)
        below = ops.randn(*sample_shape, *self._batch_shape, p, p, dtype=chi.dtype,
                          device=chi.device).tril(-1)  # fmt: skip
        chol = ops.matmul(self._unbroadcasted_scale_tril, below + ops.diag_embed(chi))
        return ops.matmul(chol, chol.mT)

    def rsample(self, sample_shape: Any = (), max_try_correction: int | None = None) -> Tensor:
        """Bartlett samples; a numerically singular one is redrawn, up to
        `max_try_correction` rounds."""
        rounds = _MAX_RESAMPLING_ROUNDS if max_try_correction is None else max_try_correction
        shape = tuple(sample_shape)
        sample = self._bartlett_sampling(shape)
        for _ in range(rounds):
            singular = ~self.support.check(sample.detach())
            if not bool(singular.any()):
                break
            warnings.warn("Singular sample detected.", stacklevel=2)
            mask = singular.unsqueeze(-1).unsqueeze(-1)
            sample = ops.where(mask, self._bartlett_sampling(shape), sample)
        return sample

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        tril = self._unbroadcasted_scale_tril
        half_log_det = tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        # trace(Sigma^-1 value) = trace(L^-1 value L^-T)
        whitened = solve_lower(tril, solve_lower(tril, value).mT)
        trace = whitened.diagonal(dim1=-2, dim2=-1).sum(-1)
        return (
            -nu * (p * _LOG_2 / 2 + half_log_det)
            - ops.mvlgamma(nu / 2, p)
            + (nu - p - 1) / 2 * _logdet(value)
            - trace / 2
        )

    def entropy(self) -> Tensor:
        nu = self.df
        p = self._event_shape[-1]
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return (
            (p + 1) * (p * _LOG_2 / 2 + half_log_det)
            + ops.mvlgamma(nu / 2, p)
            - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p)
            + nu * p / 2
        )

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        x, y = natural_params
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-_logdet(-2 * x) + _LOG_2 * p) + ops.mvlgamma(
            y + (p + 1) / 2, p
        )
