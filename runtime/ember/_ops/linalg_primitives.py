"""The LAPACK-level primitives behind ember.linalg, as functions on ember tensors.

Each lays its input out as a batch of column-major matrices (what LAPACK reads in place),
allocates the outputs and runs the device's kernel, or, on a device without one, the
generic default written in ember ops (`linalg_generic`). Results keep that layout: a
(*, m, n) result's last two dims have strides (1, m). Nothing here raises on numerically
bad input; callers read `info` (`linalg_checks`).
"""

from __future__ import annotations

import math

from ember._ops import linalg_generic as generic
from ember._ops import names
from ember._ops._surface import E
from ember._tensor import Tensor

__all__ = [
    "cholesky_raw", "column_major", "eigh_raw", "householder_product_raw",
    "householder_qr_raw", "lu_factor_raw", "svd_raw", "triangular_solve_raw",
]  # fmt: skip


def column_major(a: Tensor) -> Tensor:
    """A fresh copy of a (*, m, n) as a (B, m, n) batch of column-major matrices."""
    m, n = a.shape[-2:]
    batch = math.prod(a.shape[:-2])
    out = E.empty((batch, n, m), dtype=a.dtype, device=a.device)
    out.copy_(a.detach().reshape(batch, m, n).mT)
    return out.mT


def _empty(shape: tuple[int, ...], like: Tensor, dtype: E.dtype | None = None) -> Tensor:
    return E.empty(shape, dtype=dtype or like.dtype, device=like.device)


def _column_major_empty(batch: int, m: int, n: int, like: Tensor) -> Tensor:
    return _empty((batch, n, m), like).mT


def _unbatch(t: Tensor, batch_shape: tuple[int, ...]) -> Tensor:
    return t.reshape(*batch_shape, *t.shape[1:]) if t.dim() else t


def lu_factor_raw(a: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """getrf: (LU, pivots int32, info int32) of a (*, m, n)."""
    lu = column_major(a)
    batch, m, n = lu.shape
    pivots = _empty((batch, min(m, n)), a, E.int32)
    info = E.zeros((batch,), dtype=E.int32, device=a.device)
    if lu.numel():
        kernel = names.LU_FACTOR.kernels.get(a.device.type, generic.lu_factor)
        kernel(lu, pivots, info)
    else:
        pivots.copy_(E.arange(1, min(m, n) + 1, device=a.device).expand(batch, -1))
    shape = a.shape[:-2]
    return _unbatch(lu, shape), _unbatch(pivots, shape), _unbatch(info, shape)


def cholesky_raw(a: Tensor) -> tuple[Tensor, Tensor]:
    """potrf: (L with an unspecified strict upper triangle, info) of a (*, n, n)."""
    factor = column_major(a)
    info = E.zeros((factor.shape[0],), dtype=E.int32, device=a.device)
    if factor.numel():
        names.CHOLESKY.kernels.get(a.device.type, generic.cholesky)(factor, info)
    shape = a.shape[:-2]
    return _unbatch(factor, shape), _unbatch(info, shape)


def householder_qr_raw(a: Tensor) -> tuple[Tensor, Tensor]:
    """geqrf: (R and the reflectors, tau) of a (*, m, n)."""
    qr = column_major(a)
    batch, m, n = qr.shape
    tau = E.zeros((batch, min(m, n)), dtype=a.dtype, device=a.device)
    if qr.numel():
        names.HOUSEHOLDER_QR.kernels.get(a.device.type, generic.householder_qr)(qr, tau)
    shape = a.shape[:-2]
    return _unbatch(qr, shape), _unbatch(tau, shape)


def householder_product_raw(a: Tensor, tau: Tensor) -> Tensor:
    """orgqr: the first n columns of H1 ... Hk from the reflectors of a (*, m, n), m >= n."""
    q = column_major(a)
    batch = q.shape[0]
    k = tau.shape[-1]
    taus = tau.detach().reshape(batch, k).contiguous()
    if q.numel():
        kernel = names.HOUSEHOLDER_PRODUCT.kernels.get(a.device.type, generic.householder_product)
        kernel(q, taus)
    return _unbatch(q, a.shape[:-2])


def eigh_raw(a: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """syevd: (eigenvalues ascending, eigenvectors, info) of the lower triangle of a."""
    vectors = column_major(a)
    batch, n, _ = vectors.shape
    w = _empty((batch, n), a)
    info = E.zeros((batch,), dtype=E.int32, device=a.device)
    if vectors.numel():
        names.EIGH.kernels.get(a.device.type, generic.eigh)(vectors, w, info)
    shape = a.shape[:-2]
    return _unbatch(w, shape), _unbatch(vectors, shape), _unbatch(info, shape)


def svd_raw(a: Tensor, full_matrices: bool) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """gesdd: (U, S descending, Vh, info) of a (*, m, n)."""
    work = column_major(a)
    batch, m, n = work.shape
    k = min(m, n)
    u = _column_major_empty(batch, m, m if full_matrices else k, a)
    vh = _column_major_empty(batch, n if full_matrices else k, n, a)
    s = _empty((batch, k), a)
    info = E.zeros((batch,), dtype=E.int32, device=a.device)
    if work.numel():
        kernel = names.SVD.kernels.get(a.device.type, generic.svd)
        kernel(work, u, s, vh, info, full_matrices)
    elif u.numel() or vh.numel():
        # An empty a: identities complete the bases, as LAPACK would.
        u.copy_(E.eye(u.shape[1], u.shape[2], dtype=a.dtype, device=a.device))
        vh.copy_(E.eye(vh.shape[1], vh.shape[2], dtype=a.dtype, device=a.device))
    shape = a.shape[:-2]
    return _unbatch(u, shape), _unbatch(s, shape), _unbatch(vh, shape), _unbatch(info, shape)


def triangular_solve_raw(a: Tensor, b: Tensor, upper: bool, unitriangular: bool) -> Tensor:
    """trsm: A^-1 b for the triangle of a (B, n, n) and b (B, n, k), both batched alike."""
    x = column_major(b)
    if x.numel():
        factor = column_major(a)
        kernel = names.TRIANGULAR_SOLVE.kernels.get(a.device.type, generic.triangular_solve)
        kernel(factor, x, upper, unitriangular)
    return _unbatch(x, b.shape[:-2])
