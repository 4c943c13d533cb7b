"""The LAPACK-level linear-algebra kernels of the reference device: numpy.linalg where it
has the routine (eigh, svd, QR's raw Householder form), NumPy loops vectorised over the
batch elsewhere (LU with partial pivoting, Cholesky, orgqr, triangular solves).

The runtime passes batches of column-major matrices (ember._ops.names documents each
signature); a NumPy view of them indexes as [batch, row, column] whatever the layout.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ember.plugins import ops
from ember.plugins.sdk import Tensor


def _np(t: Tensor) -> np.ndarray:
    return t.numpy(force=True)


def _lu_factor(a: Tensor, pivots: Tensor, info: Tensor) -> None:
    lu, piv, status = _np(a), _np(pivots), _np(info)
    batch, m, n = lu.shape
    rows = np.arange(batch)
    status[:] = 0
    for j in range(min(m, n)):
        p = j + np.argmax(np.abs(lu[:, j:, j]), axis=1)
        piv[:, j] = p + 1
        pivot_rows = lu[rows, p].copy()
        lu[rows, p] = lu[:, j]
        lu[:, j] = pivot_rows
        pivot = lu[:, j, j]
        zero = pivot == 0
        status[(status == 0) & zero] = j + 1
        scale = np.where(zero, 1.0, pivot)[:, None]
        lu[:, j + 1 :, j] = np.where(zero[:, None], lu[:, j + 1 :, j], lu[:, j + 1 :, j] / scale)
        update = lu[:, j + 1 :, j, None] * lu[:, j, None, j + 1 :]
        lu[:, j + 1 :, j + 1 :] -= np.where(zero[:, None, None], 0.0, update)


def _cholesky(a: Tensor, info: Tensor) -> None:
    factor, status = _np(a), _np(info)
    n = factor.shape[1]
    status[:] = 0
    for j in range(n):
        row = factor[:, j, :j]
        d = factor[:, j, j] - np.einsum("bk,bk->b", row, row)
        bad = ~(d > 0)
        status[(status == 0) & bad] = j + 1
        root = np.sqrt(np.where(bad, 1.0, d))
        factor[:, j, j] = root
        below = factor[:, j + 1 :, j] - np.einsum("bik,bk->bi", factor[:, j + 1 :, :j], row)
        factor[:, j + 1 :, j] = below / root[:, None]
    # Past a failure LAPACK stops; what it leaves is unspecified, and the runtime raises.


def _householder_qr(a: Tensor, tau: Tensor) -> None:
    qr, taus = _np(a), _np(tau)
    for z in range(qr.shape[0]):
        h, t = np.linalg.qr(qr[z], mode="raw")
        qr[z] = h.T
        taus[z] = t


def _householder_product(a: Tensor, tau: Tensor) -> None:
    q, taus = _np(a), _np(tau)
    m, n = q.shape[1:]
    reflectors = q.copy()
    q[:] = np.eye(m, n, dtype=q.dtype)
    for j in reversed(range(taus.shape[1])):
        v = reflectors[:, j:, j].copy()
        v[:, 0] = 1.0
        block = q[:, j:, :]
        block -= (
            taus[:, j, None, None] * v[:, :, None] * np.einsum("bi,bin->bn", v, block)[:, None, :]
        )


def _eigh(a: Tensor, w: Tensor, info: Tensor) -> None:
    vectors, values, status = _np(a), _np(w), _np(info)
    for z in range(vectors.shape[0]):
        try:
            values[z], vectors[z] = np.linalg.eigh(vectors[z], UPLO="L")
            status[z] = 0
        except np.linalg.LinAlgError:
            status[z] = 1


def _svd(a: Tensor, u: Tensor, s: Tensor, vh: Tensor, info: Tensor, full: bool) -> None:
    work, left, values, right, status = _np(a), _np(u), _np(s), _np(vh), _np(info)
    for z in range(work.shape[0]):
        try:
            left[z], values[z], right[z] = np.linalg.svd(work[z], full_matrices=full)
            status[z] = 0
        except np.linalg.LinAlgError:
            status[z] = 1


def _triangular_solve(a: Tensor, b: Tensor, upper: bool, unitriangular: bool) -> None:
    factor, x = _np(a), _np(b)
    n = factor.shape[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in reversed(range(n)) if upper else range(n):
            done = slice(i + 1, n) if upper else slice(0, i)
            row = x[:, i, :] - np.einsum("bj,bjk->bk", factor[:, i, done], x[:, done, :])
            x[:, i, :] = row if unitriangular else row / factor[:, i, i, None]


KERNELS: dict[str, Callable[..., Any]] = {
    ops.LU_FACTOR: _lu_factor,
    ops.CHOLESKY: _cholesky,
    ops.HOUSEHOLDER_QR: _householder_qr,
    ops.HOUSEHOLDER_PRODUCT: _householder_product,
    ops.EIGH: _eigh,
    ops.SVD: _svd,
    ops.TRIANGULAR_SOLVE: _triangular_solve,
}
