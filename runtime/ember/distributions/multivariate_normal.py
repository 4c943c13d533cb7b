"""MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from ember import _ops as ops
from ember._tensor import Tensor
from ember.distributions import constraints
from ember.distributions._cholesky import cholesky, solve_lower
from ember.distributions.distribution import Distribution
from ember.distributions.utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat: Tensor, bvec: Tensor) -> Tensor:
    """Batched matrix-vector product, broadcasting the batch dims."""
    return ops.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL: Tensor, bx: Tensor) -> Tensor:
    """x^T (L L^T)^-1 x, batched: the squared norm of L^-1 x."""
    solved = solve_lower(bL, bx.unsqueeze(-1)).squeeze(-1)
    return solved.pow(2).sum(-1)


def _identity_like(matrix: Tensor) -> Tensor:
    n = matrix.shape[-1]
    return ops.eye(n, dtype=matrix.dtype, device=matrix.device).expand(matrix.shape)


def _cholesky_inverse(lower: Tensor) -> Tensor:
    """(L L^T)^-1 from its lower factor L."""
    inverse_lower = solve_lower(lower, _identity_like(lower))
    return ops.matmul(inverse_lower.mT, inverse_lower)


def _precision_to_scale_tril(precision: Tensor) -> Tensor:
    return cholesky(_cholesky_inverse(cholesky(precision)))


class MultivariateNormal(Distribution):
    """The multivariate normal with mean `loc` and a covariance given by exactly one of
    `covariance_matrix`, `precision_matrix` or its lower Cholesky factor `scale_tril`."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc: Tensor,
        covariance_matrix: Tensor | None = None,
        precision_matrix: Tensor | None = None,
        scale_tril: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m is not None for m in (covariance_matrix, scale_tril, precision_matrix)]
        if sum(given) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                "specified."
            )
        for name, matrix in (
            ("scale_tril", scale_tril),
            ("covariance_matrix", covariance_matrix),
            ("precision_matrix", precision_matrix),
        ):
            if matrix is None:
                continue
            if matrix.dim() < 2:
                raise ValueError(
                    f"{name} matrix must be at least two-dimensional, with optional leading "
                    "batch dimensions"
                )
            batch_shape = tuple(ops.broadcast_shapes(matrix.shape[:-2], loc.shape[:-1]))
            setattr(self, name, matrix.expand(*batch_shape, -1, -1))
        self.loc = loc.expand(*batch_shape, -1)
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            assert precision_matrix is not None
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MultivariateNormal:
        new = self._get_checked_instance(MultivariateNormal, _instance)
        loc_shape = (*batch_shape, *self.event_shape)
        cov_shape = (*batch_shape, *self.event_shape, *self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        super(MultivariateNormal, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple[int, ...]:
        return (*self._batch_shape, *self._event_shape, *self._event_shape)

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        lower = self._unbroadcasted_scale_tril
        return ops.matmul(lower, lower.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        return _cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return (
            self._unbroadcasted_scale_tril.pow(2)
            .sum(-1)
            .expand(*self._batch_shape, *self._event_shape)
        )

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, self.loc)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        mahalanobis = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + mahalanobis) - half_log_det

    def entropy(self) -> Tensor:
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        entropy = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return entropy
        return entropy.expand(self._batch_shape)
