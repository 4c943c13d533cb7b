"""LAPACK-level linear-algebra kernels of the CPU device (see csrc/lapack.c).

The runtime passes batches of column-major matrices (ember._ops.names documents each
signature), which LAPACK reads in place: each kernel is one C call over the batch.
"""

from __future__ import annotations

from ember.plugins.sdk import KernelRegistry, Tensor, ops
from ember_cpu._lib import check, lib

__all__ = ["register"]


def _sizes(a: Tensor) -> tuple[int, int, int]:
    batch, m, n = a.shape
    return batch, m, n


def lu_factor(a: Tensor, pivots: Tensor, info: Tensor) -> None:
    """getrf over the batch."""
    batch, m, n = _sizes(a)
    status = lib.em_lu_factor(
        a.dtype.index, a.data_ptr(), pivots.data_ptr(), info.data_ptr(), batch, m, n
    )
    check(status, "lu_factor")


def cholesky(a: Tensor, info: Tensor) -> None:
    """potrf (lower) over the batch."""
    batch, n, _ = _sizes(a)
    check(lib.em_cholesky(a.dtype.index, a.data_ptr(), info.data_ptr(), batch, n), "cholesky")


def householder_qr(a: Tensor, tau: Tensor) -> None:
    """geqrf over the batch."""
    batch, m, n = _sizes(a)
    status = lib.em_householder_qr(a.dtype.index, a.data_ptr(), tau.data_ptr(), batch, m, n)
    check(status, "householder_qr")


def householder_product(a: Tensor, tau: Tensor) -> None:
    """orgqr over the batch."""
    batch, m, n = _sizes(a)
    k = tau.shape[-1]
    status = lib.em_householder_product(a.dtype.index, a.data_ptr(), tau.data_ptr(), batch, m, n, k)
    check(status, "householder_product")


def eigh(a: Tensor, w: Tensor, info: Tensor) -> None:
    """syevd (lower triangle) over the batch."""
    batch, n, _ = _sizes(a)
    status = lib.em_eigh(a.dtype.index, a.data_ptr(), w.data_ptr(), info.data_ptr(), batch, n)
    check(status, "eigh")


def svd(a: Tensor, u: Tensor, s: Tensor, vh: Tensor, info: Tensor, full_matrices: bool) -> None:
    """gesdd over the batch."""
    batch, m, n = _sizes(a)
    status = lib.em_svd(
        a.dtype.index, a.data_ptr(), u.data_ptr(), s.data_ptr(), vh.data_ptr(),
        info.data_ptr(), batch, m, n, int(full_matrices),
    )  # fmt: skip
    check(status, "svd")


def triangular_solve(a: Tensor, b: Tensor, upper: bool, unitriangular: bool) -> None:
    """trsm (left, no transpose) over the batch."""
    batch, n, k = _sizes(b)
    status = lib.em_triangular_solve(
        a.dtype.index, a.data_ptr(), b.data_ptr(), batch, n, k, int(upper), int(unitriangular)
    )
    check(status, "triangular_solve")


def register(registry: KernelRegistry) -> None:
    """Register this family's kernels for the cpu device."""
    registry.register(ops.LU_FACTOR, "cpu", lu_factor)
    registry.register(ops.CHOLESKY, "cpu", cholesky)
    registry.register(ops.HOUSEHOLDER_QR, "cpu", householder_qr)
    registry.register(ops.HOUSEHOLDER_PRODUCT, "cpu", householder_product)
    registry.register(ops.EIGH, "cpu", eigh)
    registry.register(ops.SVD, "cpu", svd)
    registry.register(ops.TRIANGULAR_SOLVE, "cpu", triangular_solve)
