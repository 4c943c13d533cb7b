"""ember.linalg's functions built on the SVD, eigh and solve: lstsq (gelsd-like, through
the SVD), pinv, matrix_rank, cond, matrix_exp, tensorinv, tensorsolve, plus vander,
diagonal and the out-of-scope eig/eigvals. Composites: autograd flows through their
parts."""

from __future__ import annotations

import math
from typing import NamedTuple

from ember._ops._surface import E
from ember._ops.linalg_checks import check_matrix, check_square
from ember._ops.linalg_decompositions import eigh, svd
from ember._ops.linalg_solvers import inv, solve
from ember._tensor import Tensor

__all__ = [
    "cond", "diagonal", "eig", "eigvals", "lstsq", "matrix_exp", "matrix_rank", "pinv",
    "tensorinv", "tensorsolve", "vander",
]  # fmt: skip


class LstsqResult(NamedTuple):
    solution: Tensor
    residuals: Tensor
    rank: Tensor
    singular_values: Tensor


Tolerance = float | Tensor | None
_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _tolerance(
    s: Tensor, atol: float | Tensor | None, rtol: float | Tensor | None, size: int
) -> Tensor:
    """max(atol, rtol * s_max), PyTorch's defaults: rtol = eps * max(m, n) when neither is
    given, 0 when only atol is."""
    if rtol is None:
        rtol = 0.0 if atol is not None else E.finfo(s.dtype).eps * size
    largest = s.amax(-1, keepdim=True) if s.shape[-1] else E.zeros_like(s[..., :1])
    tolerance = largest * rtol
    if atol is not None:
        tolerance = E.maximum(tolerance, E.as_tensor(atol, dtype=s.dtype, device=s.device))
    return tolerance


def lstsq(
    A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None
) -> LstsqResult:
    """The minimum-norm least-squares solution of A X = B (through the SVD, as gelsd).

    As PyTorch: rank for every driver but 'gels'; singular values for 'gelsd'/'gelss';
    residuals (squared column norms of A X - B) when m > n, A has full rank and the driver
    is not 'gelsy' (the default)."""
    op = "torch.linalg.lstsq"
    check_matrix(op, A, "input")
    check_matrix(op, B if B.dim() > 1 else B.unsqueeze(-1), "other")
    driver = "gelsy" if driver is None else driver
    if driver not in _DRIVERS:
        raise RuntimeError(f"{op}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    vector = B.dim() == A.dim() - 1
    b = B.unsqueeze(-1) if vector else B
    if b.shape[-2] != A.shape[-2]:
        raise RuntimeError(f"{op}: input.size(-2) should match other.size(-2)")
    m, n = A.shape[-2:]
    u, s, vh = svd(A, full_matrices=False)
    if rcond is None:
        rcond = E.finfo(A.dtype).eps * max(m, n)
    keep = s > _tolerance(s, None, rcond, max(m, n))
    inverse_s = E.where(keep, 1.0 / E.where(keep, s, E.ones_like(s)), E.zeros_like(s))
    solution = vh.mT @ (inverse_s.unsqueeze(-1) * (u.mT @ b))
    rank = keep.sum(-1)
    empty = E.empty(0, dtype=A.dtype, device=A.device)
    residuals = empty
    if m > n and driver != "gelsy" and bool((rank == n).all().item()):
        residuals = (A @ solution - b).square().sum(-2)
        residuals = residuals.squeeze(-1) if vector else residuals
    return LstsqResult(
        solution.squeeze(-1) if vector else solution,
        residuals,
        rank if driver != "gels" else E.empty(0, dtype=E.int64, device=A.device),
        s if driver in ("gelsd", "gelss") else empty,
    )


def _inverse_values(s: Tensor, tolerance: Tensor) -> Tensor:
    keep = s > tolerance
    return E.where(keep, 1.0 / E.where(keep, s, E.ones_like(s)), E.zeros_like(s))


def pinv(
    A: Tensor, *, atol: Tolerance = None, rtol: Tolerance = None, hermitian: bool = False
) -> Tensor:
    """The Moore-Penrose pseudo-inverse (singular values below max(atol, rtol s_max) cut)."""
    check_matrix("linalg.pinv", A, "input")
    m, n = A.shape[-2:]
    if hermitian:
        values, vectors = eigh(A)
        magnitudes = values.abs()
        inverse = _inverse_values(magnitudes, _tolerance(magnitudes, atol, rtol, n))
        inverse = inverse * values.sign()
        return (vectors * inverse.unsqueeze(-2)) @ vectors.mT
    u, s, vh = svd(A, full_matrices=False)
    inverse = _inverse_values(s, _tolerance(s, atol, rtol, max(m, n)))
    return (vh.mT * inverse.unsqueeze(-2)) @ u.mT


def matrix_rank(
    A: Tensor, *, atol: Tolerance = None, rtol: Tolerance = None, hermitian: bool = False
) -> Tensor:
    """The number of singular values above max(atol, rtol s_max) (int64)."""
    check_matrix("linalg.matrix_rank", A, "input")
    m, n = A.shape[-2:]
    s = eigh(A).eigenvalues.abs() if hermitian else svd(A, full_matrices=False).S
    return (s > _tolerance(s, atol, rtol, max(m, n))).sum(-1)


def cond(A: Tensor, p: str | float | None = None) -> Tensor:
    """The condition number in the p-norm: s_max / s_min for None and 2 (s_min / s_max for
    -2), else ‖A‖_p ‖A⁻¹‖_p for square A."""
    check_matrix("linalg.cond", A)
    if p is None or p in (2, -2):
        s = svd(A, full_matrices=False).S
        ratio = s[..., 0] / s[..., -1]
        return 1.0 / ratio if p == -2 else ratio
    check_square("linalg.cond", A)
    return E.linalg.matrix_norm(A, p) * E.linalg.matrix_norm(inv(A), p)


def matrix_exp(A: Tensor) -> Tensor:
    """e^A by scaling and squaring around a degree-18 Taylor polynomial."""
    check_square("linalg.matrix_exp", A)
    if A.numel() == 0:
        return A.clone()
    norm = float(A.detach().abs().sum(-2).amax().item())
    squarings = max(0, math.ceil(math.log2(norm))) if norm > 0 and math.isfinite(norm) else 0
    scaled = A / (2.0**squarings)
    eye = E.eye(A.shape[-1], dtype=A.dtype, device=A.device)
    result = eye + scaled / 18.0
    for k in range(17, 0, -1):
        result = eye + (scaled @ result) / float(k)
    for _ in range(squarings):
        result = result @ result
    return result


def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """The inverse of A read as a matrix from its first ind dims to the rest."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != cols:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            f"prod(self.shape[:ind]), but got {cols} != {rows}"
        )
    return inv(A.reshape(rows, cols)).reshape(*A.shape[ind:], *A.shape[:ind])


def tensorsolve(A: Tensor, B: Tensor, dims: tuple[int, ...] | None = None) -> Tensor:
    """X with tensordot(A, X, X.ndim) = B."""
    if dims is not None:
        moved = [d % A.dim() for d in dims]
        A = A.movedim(moved, list(range(A.dim() - len(moved), A.dim())))
    rest = A.shape[B.dim() :]
    rows, cols = B.numel(), math.prod(rest)
    if math.prod(A.shape) != rows * cols or rows != cols:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(result.shape) == prod(other.shape)"
            f", but got {cols} != {rows}"
        )
    return solve(A.reshape(rows, cols), B.reshape(rows)).reshape(rest)


def vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """The Vandermonde matrix of increasing powers: x[..., i]^j for j < N."""
    if x.dim() < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    count = x.shape[-1] if N is None else N
    if count <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = E.arange(count, device=x.device)
    return x.unsqueeze(-1) ** powers


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonal of each matrix (torch.diagonal with matrix-friendly defaults)."""
    return A.diagonal(offset, dim1, dim2)


def _complex_out_of_scope(op: str) -> NotImplementedError:
    return NotImplementedError(
        f"{op}: the eigenvalues of a general matrix are complex, and Ember has no complex "
        "dtypes; for a symmetric matrix use linalg.eigh / linalg.eigvalsh"
    )


def eig(A: Tensor) -> tuple[Tensor, Tensor]:
    """Out of scope: PyTorch returns complex tensors, which Ember does not have."""
    check_square("linalg.eig", A, "input")
    raise _complex_out_of_scope("linalg.eig")


def eigvals(A: Tensor) -> Tensor:
    """Out of scope: PyTorch returns complex tensors, which Ember does not have."""
    check_square("linalg.eigvals", A, "input")
    raise _complex_out_of_scope("linalg.eigvals")
