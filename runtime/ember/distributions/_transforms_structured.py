"""Transforms over an event: Softmax, StickBreaking, LowerCholesky, PositiveDefinite,
CorrCholesky, and the per-slice Cat and Stack."""

from __future__ import annotations

import math
from typing import Any

from ember import _ops as ops
from ember._dtype_info import finfo
from ember._tensor import Tensor
from ember.distributions import constraints
from ember.distributions._cholesky import cholesky
from ember.distributions._transform_base import Transform
from ember.distributions._transforms_elementwise import _clipped_sigmoid
from ember.distributions.utils import _sum_rightmost, tril_matrix_to_vec, vec_to_tril_matrix
from ember.nn import functional as F

__all__ = [
    "CatTransform",
    "CorrCholeskyTransform",
    "LowerCholeskyTransform",
    "PositiveDefiniteTransform",
    "SoftmaxTransform",
    "StackTransform",
    "StickBreakingTransform",
]


def _need_a_dim(shape: Any) -> None:
    if len(shape) < 1:
        raise ValueError("Too few dimensions on input")


def _positions(x: Tensor, count: int) -> Tensor:
    """1, 2, ..., count in x's dtype and device."""
    return ops.arange(1, count + 1, dtype=x.dtype, device=x.device)


class SoftmaxTransform(Transform):
    """Unconstrained vectors to the simplex by exp and normalisation (not bijective)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoftmaxTransform)

    def __hash__(self) -> int:
        return hash(SoftmaxTransform)

    def _call(self, x: Tensor) -> Tensor:
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def forward_shape(self, shape: Any) -> Any:
        _need_a_dim(shape)
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        _need_a_dim(shape)
        return shape


class StickBreakingTransform(Transform):
    """R^K to the (K+1)-simplex by stick breaking (bijective)."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StickBreakingTransform)

    def __hash__(self) -> int:
        return hash(StickBreakingTransform)

    def _call(self, x: Tensor) -> Tensor:
        offset = x.shape[-1] + 1 - _positions(x, x.shape[-1])
        z = _clipped_sigmoid(x - offset.log())
        z_cumprod = (1 - z).cumprod(-1)
        return F.pad(z, [0, 1], value=1) * F.pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y: Tensor) -> Tensor:
        y_crop = y[..., :-1]
        offset = y.shape[-1] - _positions(y, y_crop.shape[-1])
        sf = (1 - y_crop.cumsum(-1)).clamp(min=finfo(y.dtype).tiny)
        return y_crop.log() - sf.log() + offset.log()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        offset = x.shape[-1] + 1 - _positions(x, x.shape[-1])
        x = x - offset.log()
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape: Any) -> Any:
        _need_a_dim(shape)
        return (*shape[:-1], shape[-1] + 1)

    def inverse_shape(self, shape: Any) -> Any:
        _need_a_dim(shape)
        return (*shape[:-1], shape[-1] - 1)


class LowerCholeskyTransform(Transform):
    """Square matrices to lower-triangular ones with a positive diagonal (exp of it)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LowerCholeskyTransform)

    def __hash__(self) -> int:
        return hash(LowerCholeskyTransform)

    def _call(self, x: Tensor) -> Tensor:
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Square matrices to positive-definite ones: L @ L.mT of their LowerCholesky."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PositiveDefiniteTransform)

    def __hash__(self) -> int:
        return hash(PositiveDefiniteTransform)

    def _call(self, x: Tensor) -> Tensor:
        lower = LowerCholeskyTransform()(x)
        return ops.matmul(lower, lower.mT)

    def _inverse(self, y: Tensor) -> Tensor:
        return LowerCholeskyTransform().inv(cholesky(y))


class CorrCholeskyTransform(Transform):
    """Vectors of D(D-1)/2 reals to Cholesky factors of D x D correlation matrices."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CorrCholeskyTransform)

    def __hash__(self) -> int:
        return hash(CorrCholeskyTransform)

    def _call(self, x: Tensor) -> Tensor:
        x = x.tanh()
        eps = finfo(x.dtype).eps
        x = x.clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        z1m_cumprod_sqrt = (1 - r**2).sqrt().cumprod(-1)
        r = r + ops.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return r * F.pad(z1m_cumprod_sqrt[..., :-1], [1, 0], value=1)

    def _inverse(self, y: Tensor) -> Tensor:
        y_cumsum = 1 - (y * y).cumsum(-1)
        y_cumsum_shifted = F.pad(y_cumsum[..., :-1], [1, 0], value=1)
        y_vec = tril_matrix_to_vec(y, diag=-1)
        y_cumsum_vec = tril_matrix_to_vec(y_cumsum_shifted, diag=-1)
        t = y_vec / y_cumsum_vec.sqrt()
        return (t.log1p() - t.neg().log1p()) / 2

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        y1m_cumsum = 1 - (y * y).cumsum(-1)
        y1m_cumsum_tril = tril_matrix_to_vec(y1m_cumsum, diag=-2)
        stick_breaking_logdet = 0.5 * y1m_cumsum_tril.log().sum(-1)
        tanh_logdet = -2 * (x + F.softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape: Any) -> Any:
        _need_a_dim(shape)
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattend lower-diagonal number")
        return (*shape[:-1], d, d)

    def inverse_shape(self, shape: Any) -> Any:
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return (*shape[:-2], d * (d - 1) // 2)


class CatTransform(Transform):
    """transforms[i] applied to consecutive slices of `dim` of lengths `lengths[i]`."""

    def __init__(
        self,
        tseq: list[Transform],
        dim: int = 0,
        lengths: list[int] | None = None,
        cache_size: int = 0,
    ) -> None:
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise ValueError("CatTransform: one length per transform")
        self.dim = dim

    @property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self) -> int:
        return sum(self.lengths)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _slices(self, z: Tensor) -> list[Tensor]:
        out, start = [], 0
        for length in self.lengths:
            out.append(z.narrow(self.dim, start, length))
            start += length
        return out

    def _call(self, x: Tensor) -> Tensor:
        parts = [t(s) for t, s in zip(self.transforms, self._slices(x), strict=True)]
        return ops.cat(parts, self.dim)

    def _inverse(self, y: Tensor) -> Tensor:
        parts = [t.inv(s) for t, s in zip(self.transforms, self._slices(y), strict=True)]
        return ops.cat(parts, self.dim)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        terms = []
        for t, xs, ys in zip(self.transforms, self._slices(x), self._slices(y), strict=True):
            term = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < self.event_dim:
                term = _sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
        dim = self.dim - x.dim() if self.dim >= 0 else self.dim
        dim = dim + self.event_dim
        if dim < 0:
            return ops.cat(terms, dim)
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total

    @property
    def bijective(self) -> bool:  # type: ignore[override]  # computed here, a plain attribute on the base
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """transforms[i] applied to slice i of `dim`."""

    def __init__(self, tseq: list[Transform], dim: int = 0, cache_size: int = 0) -> None:
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, z: Tensor) -> list[Tensor]:
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _call(self, x: Tensor) -> Tensor:
        parts = [t(s) for t, s in zip(self.transforms, self._slices(x), strict=True)]
        return ops.stack(parts, self.dim)

    def _inverse(self, y: Tensor) -> Tensor:
        parts = [t.inv(s) for t, s in zip(self.transforms, self._slices(y), strict=True)]
        return ops.stack(parts, self.dim)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        terms = [
            t.log_abs_det_jacobian(xs, ys)
            for t, xs, ys in zip(self.transforms, self._slices(x), self._slices(y), strict=True)
        ]
        return ops.stack(terms, self.dim)

    @property
    def bijective(self) -> bool:  # type: ignore[override]  # computed here, a plain attribute on the base
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:
        return constraints.stack([t.codomain for t in self.transforms], self.dim)
