"""ember.linalg's decompositions: cholesky, qr, eigh, svd, lu and their relatives, with
PyTorch's semantics and derivatives (the formulas in linalg_decomposition_formulas).

Each differentiable one is an `ember.autograd.Function` over the LAPACK-level primitives
(linalg_primitives), so every device computes it and autograd records one node.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ember._ops import linalg_decomposition_formulas as formulas
from ember._ops import linalg_primitives as raw
from ember._ops._surface import E
from ember._ops.linalg_checks import check_matrix, check_square, failed_batches, raise_for_info
from ember._tensor import Tensor
from ember.autograd import Function

__all__ = [
    "cholesky", "cholesky_ex", "eigh", "eigvalsh", "householder_product", "lu", "lu_factor",
    "lu_factor_ex", "lu_unpack", "qr", "svd", "svdvals",
]  # fmt: skip


class CholeskyExResult(NamedTuple):
    L: Tensor
    info: Tensor


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


class LUFactorResult(NamedTuple):
    LU: Tensor
    pivots: Tensor


class LUFactorExResult(NamedTuple):
    LU: Tensor
    pivots: Tensor
    info: Tensor


class LUResult(NamedTuple):
    P: Tensor
    L: Tensor
    U: Tensor


_NOT_PD = (
    "The factorization could not be completed because the input is not positive-definite "
    "(the leading minor of order {code} is not positive-definite)."
)


class _Cholesky(Function):
    @staticmethod
    def forward(ctx: Any, a: Tensor) -> tuple[Tensor, Tensor]:
        factor, info = raw.cholesky_raw(a)
        factor = factor.tril()
        ctx.save_for_backward(factor)
        ctx.mark_non_differentiable(info)
        return factor, info

    @staticmethod
    def backward(ctx: Any, grad: Tensor, _: Any) -> Tensor:
        (factor,) = ctx.saved_tensors
        return formulas.cholesky_backward(grad, factor)


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False) -> CholeskyExResult:
    """The Cholesky factor and LAPACK's status per matrix (info > 0: not positive-definite)."""
    check_square("linalg.cholesky", A)
    factor, info = _Cholesky.apply(A)
    if check_errors:
        raise_for_info("linalg.cholesky", info, _NOT_PD)
    return CholeskyExResult(factor.mT if upper else factor, info)


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """A = L Lᵀ for symmetric positive-definite A (its lower triangle is read)."""
    factor, info = cholesky_ex(A, upper=upper)
    raise_for_info("linalg.cholesky", info, _NOT_PD)
    return factor


class _QR(Function):
    @staticmethod
    def forward(ctx: Any, a: Tensor, mode: str) -> tuple[Tensor, Tensor]:
        m, n = a.shape[-2:]
        reflectors, tau = raw.householder_qr_raw(a)
        r_rows = m if mode == "complete" else min(m, n)
        r = reflectors[..., :r_rows, :].triu()
        if mode == "r":
            q = E.empty(0, dtype=a.dtype, device=a.device)
        else:
            width = m if mode == "complete" else min(m, n)
            if width > n:
                pad = E.zeros((*a.shape[:-1], width - n), dtype=a.dtype, device=a.device)
                reflectors = E.cat([reflectors, pad], dim=-1)
            q = raw.householder_product_raw(reflectors[..., :width], tau)
        ctx.save_for_backward(q, r)
        ctx.mode = mode
        return q, r

    @staticmethod
    def backward(ctx: Any, grad_q: Tensor, grad_r: Tensor) -> tuple[Tensor, None]:
        q, r = ctx.saved_tensors
        m, n = q.shape[-2], r.shape[-1]
        if ctx.mode == "r":
            raise RuntimeError(
                "The derivative of linalg.qr depends on Q, which is not computed when "
                "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                "differentiate through linalg.qr."
            )
        if ctx.mode == "complete" and m > n:
            raise RuntimeError(
                "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
            )
        return formulas.qr_backward(grad_q, grad_r, q, r), None


def qr(A: Tensor, mode: str = "reduced") -> QRResult:
    """A = Q R, Q with orthonormal columns and R upper triangular (Householder, LAPACK's
    signs); mode 'reduced', 'complete' or 'r' (Q empty)."""
    check_matrix("linalg.qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' "
            "(default), 'r', or 'complete'"
        )
    q, r = _QR.apply(A, mode)
    return QRResult(q, r)


_EIGH_FAILED = (
    "The algorithm failed to converge because the input matrix is ill-conditioned or has "
    "too many repeated eigenvalues (error code: {code})."
)


class _Eigh(Function):
    @staticmethod
    def forward(ctx: Any, a: Tensor) -> tuple[Tensor, Tensor]:
        values, vectors, info = raw.eigh_raw(a)
        raise_for_info("linalg.eigh", info, _EIGH_FAILED)
        ctx.save_for_backward(values, vectors)
        return values, vectors

    @staticmethod
    def backward(ctx: Any, grad_values: Tensor, grad_vectors: Tensor) -> Tensor:
        values, vectors = ctx.saved_tensors
        return formulas.eigh_backward(grad_values, grad_vectors, values, vectors)


def _lower_triangle(op: str, A: Tensor, UPLO: str) -> Tensor:
    check_square(op, A)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return A if UPLO == "L" else A.mT


def eigh(A: Tensor, UPLO: str = "L") -> EighResult:
    """Eigenvalues (ascending) and orthonormal eigenvectors of symmetric A, from the
    triangle UPLO names."""
    values, vectors = _Eigh.apply(_lower_triangle("linalg.eigh", A, UPLO))
    return EighResult(values, vectors)


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues of symmetric A, ascending."""
    return eigh(A, UPLO).eigenvalues


_SVD_FAILED = (
    "The algorithm failed to converge because the input matrix is ill-conditioned or has "
    "too many repeated singular values (error code: {code})."
)


class _SVD(Function):
    @staticmethod
    def forward(ctx: Any, a: Tensor, full_matrices: bool) -> tuple[Tensor, Tensor, Tensor]:
        u, s, vh, info = raw.svd_raw(a, full_matrices)
        raise_for_info("linalg.svd", info, _SVD_FAILED)
        ctx.save_for_backward(u, s, vh)
        return u, s, vh

    @staticmethod
    def backward(ctx: Any, grad_u: Tensor, grad_s: Tensor, grad_vh: Tensor) -> tuple[Tensor, None]:
        u, s, vh = ctx.saved_tensors
        return formulas.svd_backward(grad_u, grad_s, grad_vh, u, s, vh), None


def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None) -> SVDResult:
    """A = U diag(S) Vh, S descending; full_matrices gives square U and Vh."""
    check_matrix("linalg.svd", A)
    u, s, vh = _SVD.apply(A, full_matrices)
    return SVDResult(u, s, vh)


def svdvals(A: Tensor, *, driver: str | None = None) -> Tensor:
    """The singular values of A, descending."""
    check_matrix("linalg.svdvals", A)
    return svd(A, full_matrices=False).S


class _LUFactor(Function):
    @staticmethod
    def forward(ctx: Any, a: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        lu_matrix, pivots, info = raw.lu_factor_raw(a)
        ctx.save_for_backward(lu_matrix, pivots)
        ctx.mark_non_differentiable(pivots, info)
        return lu_matrix, pivots, info

    @staticmethod
    def backward(ctx: Any, grad: Tensor, *_: Any) -> Tensor:
        lu_matrix, pivots = ctx.saved_tensors
        if lu_matrix.shape[-1] != lu_matrix.shape[-2]:
            raise NotImplementedError(
                "linalg.lu_factor: the derivative of a non-square LU is not implemented"
            )
        permutation = lu_unpack(lu_matrix, pivots, unpack_data=False).P
        return formulas.lu_backward(grad, lu_matrix, permutation)


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False) -> LUFactorExResult:
    """LU with partial pivoting in LAPACK's compact form, pivots (1-based, int32) and info."""
    check_matrix("torch.linalg.lu_factor_ex", A)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    lu_matrix, pivots, info = _LUFactor.apply(A)
    if check_errors:
        raise_for_info("torch.linalg.lu_factor_ex", info, "U[{code},{code}] is zero.")
    return LUFactorExResult(lu_matrix, pivots, info)


def lu_factor(A: Tensor, *, pivot: bool = True) -> LUFactorResult:
    """LU with partial pivoting, compact: (LU, pivots); a zero pivot raises."""
    lu_matrix, pivots, info = lu_factor_ex(A, pivot=pivot)
    for _, code in failed_batches(info):
        raise RuntimeError(
            f"torch.linalg.lu_factor: U[{code},{code}] is zero and using it on lu_solve would "
            "result in a division by zero. If you still want to perform the factorization, "
            "consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"
        )
    return LUFactorResult(lu_matrix, pivots)


def permutation_rows(pivots: Tensor, m: int) -> Tensor:
    """The row order P^T applies (int64, (*, m)) from LAPACK's sequential swaps.

    The swaps are bookkeeping on k small integers per matrix, inherently sequential: they
    run on the host, where one read of the pivots replaces k rounds of device ops."""
    batch_shape = tuple(pivots.shape[:-1])
    orders = []
    for swaps in pivots.reshape(-1, pivots.shape[-1]).tolist():
        order = list(range(m))
        for i, target in enumerate(swaps):
            order[i], order[target - 1] = order[target - 1], order[i]
        orders.append(order)
    result = E.tensor(orders, dtype=E.int64, device=pivots.device)
    return result.reshape(*batch_shape, m)


def lu_unpack(
    LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True
) -> LUResult:
    """(P, L, U) with A = P L U from lu_factor's compact result."""
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    empty = E.empty(0, dtype=LU_data.dtype, device=LU_data.device)
    lower = upper = permutation = empty
    if unpack_data:
        lower = LU_data[..., :, :k].tril(-1) + E.eye(
            m, k, dtype=LU_data.dtype, device=LU_data.device
        )
        upper = LU_data[..., :k, :].triu()
    if unpack_pivots:
        order = permutation_rows(LU_pivots, m)
        eye = E.eye(m, dtype=LU_data.dtype, device=LU_data.device)
        permutation = eye[order].mT
    return LUResult(permutation, lower, upper)


def lu(A: Tensor, *, pivot: bool = True) -> LUResult:
    """A = P L U, L unit lower (m, k), U upper (k, n), P a permutation."""
    check_matrix("linalg.lu", A)
    lu_matrix, pivots, _ = lu_factor_ex(A, pivot=pivot)
    return lu_unpack(lu_matrix, pivots)


def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first n columns of H1 ... Hk, Hi = I - tau_i v_i v_iᵀ, v_i in A's column i."""
    check_matrix("torch.linalg.householder_product", A, "input")
    m, n = A.shape[-2:]
    if m < n:
        raise RuntimeError(
            "torch.linalg.householder_product: input.shape[-2] must be greater than or equal "
            "to input.shape[-1]"
        )
    if tau.shape[-1] > n:
        raise RuntimeError(
            "torch.linalg.householder_product: input.shape[-1] must be greater than or equal "
            "to tau.shape[-1]"
        )
    tau = tau.to(A.dtype)
    if E.is_grad_enabled() and (A.requires_grad or tau.requires_grad):
        return formulas.householder_product_composite(A, tau)
    return raw.householder_product_raw(A, tau)
