"""LowRankMultivariateNormal(loc, cov_factor, cov_diag): covariance W W^T + diag(D)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from ember import _ops as ops
from ember._tensor import Tensor
from ember.distributions import constraints
from ember.distributions._cholesky import cholesky, solve_lower
from ember.distributions.distribution import Distribution
from ember.distributions.multivariate_normal import _batch_mahalanobis, _batch_mv
from ember.distributions.utils import _standard_normal, lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _plus_identity(k: Tensor) -> Tensor:
    return k + ops.eye(k.shape[-1], dtype=k.dtype, device=k.device)


def _batch_capacitance_tril(w: Tensor, d: Tensor) -> Tensor:
    """The Cholesky factor of the capacitance I + W^T D^-1 W (m x m)."""
    wt_dinv = w.mT / d.unsqueeze(-2)
    return cholesky(_plus_identity(ops.matmul(wt_dinv, w)))


def _batch_lowrank_logdet(d: Tensor, capacitance_tril: Tensor) -> Tensor:
    """log det(W W^T + D) by the matrix determinant lemma."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + d.log().sum(-1)


def _batch_lowrank_mahalanobis(w: Tensor, d: Tensor, x: Tensor, capacitance_tril: Tensor) -> Tensor:
    """x^T (W W^T + D)^-1 x by the Woodbury identity."""
    wt_dinv = w.mT / d.unsqueeze(-2)
    wt_dinv_x = _batch_mv(wt_dinv, x)
    return (x.pow(2) / d).sum(-1) - _batch_mahalanobis(capacitance_tril, wt_dinv_x)


class LowRankMultivariateNormal(Distribution):
    """A multivariate normal whose covariance is low rank plus diagonal."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc: Tensor,
        cov_factor: Tensor,
        cov_diag: Tensor,
        validate_args: bool | None = None,
    ) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError(
                "cov_factor must be at least two-dimensional, with optional leading batch "
                "dimensions"
            )
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(
                f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m"
            )
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = ops.broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1)
            )
        except RuntimeError as e:
            raise ValueError(
                f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                f"cov_diag {cov_diag.shape}"
            ) from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LowRankMultivariateNormal:
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        loc_shape = (*batch_shape, *self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(*loc_shape, self.cov_factor.shape[-1])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        super(LowRankMultivariateNormal, new).__init__(
            batch_shape, self.event_shape, validate_args=False
        )
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple[int, ...]:
        return (*self._batch_shape, *self._event_shape, *self._event_shape)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:
        total = self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag
        return total.expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def scale_tril(self) -> Tensor:
        diag_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        dinvsqrt_w = self._unbroadcasted_cov_factor / diag_sqrt
        k = _plus_identity(ops.matmul(dinvsqrt_w, dinvsqrt_w.mT))
        return (diag_sqrt * cholesky(k)).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        w = self._unbroadcasted_cov_factor
        covariance = ops.matmul(w, w.mT) + ops.diag_embed(self._unbroadcasted_cov_diag)
        return covariance.expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        wt_dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        a = solve_lower(self._capacitance_tril, wt_dinv)
        precision = ops.diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - ops.matmul(a.mT, a)
        return precision.expand(self._matrix_shape())

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        w_shape = (*shape[:-1], self.cov_factor.shape[-1])
        eps_w = _standard_normal(w_shape, self.loc)
        eps_d = _standard_normal(shape, self.loc)
        return (
            self.loc
            + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
            + self._unbroadcasted_cov_diag.sqrt() * eps_d
        )

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        mahalanobis = _batch_lowrank_mahalanobis(w, d, diff, self._capacitance_tril)
        log_det = _batch_lowrank_logdet(d, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + mahalanobis)

    def entropy(self) -> Tensor:
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_diag, self._capacitance_tril)
        entropy = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        if len(self._batch_shape) == 0:
            return entropy
        return entropy.expand(self._batch_shape)
