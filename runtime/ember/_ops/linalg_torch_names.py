"""The torch-level spellings of linear algebra (torch.det, torch.svd, torch.lu_solve, ...),
with their own argument conventions, over ember.linalg."""

from __future__ import annotations

from typing import Any, NamedTuple

from ember._ops import linalg_decompositions as dec
from ember._ops import linalg_primitives as raw
from ember._ops import linalg_solvers as sol
from ember._ops import linalg_spectral as spec
from ember._ops import norms
from ember._ops._surface import E
from ember._ops.linalg_checks import check_matrix
from ember._ops.linalg_lowrank import pca_lowrank, svd_lowrank
from ember._tensor import Tensor

__all__ = [
    "cholesky", "cholesky_inverse", "cholesky_solve", "det", "frobenius_norm", "geqrf",
    "inverse", "logdet", "lu", "lu_solve", "lu_unpack", "matrix_exp", "nuclear_norm", "orgqr",
    "ormqr", "pca_lowrank", "pinverse", "qr", "slogdet", "svd", "svd_lowrank",
    "triangular_solve",
]  # fmt: skip

det = sol.det
logdet = sol.logdet
slogdet = sol.slogdet
inverse = sol.inv
matrix_exp = spec.matrix_exp
cholesky_solve = sol.cholesky_solve
cholesky_inverse = sol.cholesky_inverse
lu_unpack = dec.lu_unpack
orgqr = dec.householder_product


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    V: Tensor


class TriangularSolveResult(NamedTuple):
    solution: Tensor
    cloned_coefficient: Tensor


def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """torch.cholesky: linalg.cholesky with the upper flag positional."""
    return dec.cholesky(input, upper=upper)


def qr(input: Tensor, some: bool = True) -> dec.QRResult:
    """torch.qr: some=True is mode 'reduced', False 'complete'."""
    return dec.qr(input, "reduced" if some else "complete")


def svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> SVDResult:
    """torch.svd: V rather than Vh; some=True the reduced factors; without compute_uv, U
    and V are zero-filled."""
    u, s, vh = dec.svd(input, full_matrices=not some)
    if not compute_uv:
        return SVDResult(E.zeros_like(u), s.detach(), E.zeros_like(vh.mT))
    return SVDResult(u, s, vh.mT)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """torch.pinverse: linalg.pinv with a relative cutoff."""
    return spec.pinv(input, rtol=rcond)


def triangular_solve(
    b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False, unitriangular: bool = False
) -> TriangularSolveResult:
    """torch.triangular_solve: (X with op(A) X = b, a copy of A)."""
    coefficient = A.mT if transpose else A
    x = sol.solve_triangular(coefficient, b, upper=upper != transpose, unitriangular=unitriangular)
    return TriangularSolveResult(x, A.clone())


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False) -> tuple[Tensor, ...]:
    """torch.lu: (LU, pivots) or (LU, pivots, infos)."""
    lu_matrix, pivots, info = dec.lu_factor_ex(A, pivot=pivot)
    if get_infos:
        return lu_matrix, pivots, info
    return dec.lu_factor(A, pivot=pivot)


def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """torch.lu_solve: linalg.lu_solve with b first."""
    return sol.lu_solve(LU_data, LU_pivots, b)


class GeqrfResult(NamedTuple):
    a: Tensor
    tau: Tensor


def geqrf(input: Tensor) -> GeqrfResult:
    """LAPACK's geqrf: R above the diagonal, the Householder vectors below, and tau."""
    check_matrix("geqrf", input, "input")
    reflectors, tau = raw.householder_qr_raw(input)
    return GeqrfResult(reflectors, tau)


def ormqr(
    input: Tensor, tau: Tensor, other: Tensor, left: bool = True, transpose: bool = False
) -> Tensor:
    """other multiplied by the Q of geqrf's (input, tau): Q C, Qᵀ C, C Q or C Qᵀ."""
    check_matrix("ormqr", input, "input")
    m, n = input.shape[-2:]
    columns = input[..., :, : min(m, n)]
    if m > columns.shape[-1]:
        pad = E.zeros((*input.shape[:-1], m - columns.shape[-1]), dtype=input.dtype,
                          device=input.device)  # fmt: skip
        columns = E.cat([columns, pad], dim=-1)
    q = raw.householder_product_raw(columns, tau)
    q = q.mT if transpose else q
    return q @ other if left else other @ q


def nuclear_norm(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """The sum of the singular values (torch.nuclear_norm, deprecated in PyTorch)."""
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    pair = (-2, -1) if dim is None else (int(dim[0]), int(dim[1]))
    return norms.matrix_norm(input, "nuc", pair, keepdim)


def frobenius_norm(input: Tensor, dim: Any = (-2, -1), keepdim: bool = False) -> Tensor:
    """The 2-norm of the elements over dim (torch.frobenius_norm, deprecated in PyTorch)."""
    return norms.vector_norm(input, 2, dim, keepdim)
