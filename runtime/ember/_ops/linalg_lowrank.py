"""torch.svd_lowrank and torch.pca_lowrank: Halko et al.'s randomized range finder
(Algorithm 5.1, arXiv:0909.4061) with PyTorch's steps, over ember.linalg's QR and SVD;
the random test matrix comes from ember's generator, so ember.manual_seed fixes it."""

from __future__ import annotations

from ember._ops._surface import E
from ember._ops.linalg_checks import check_matrix
from ember._ops.linalg_decompositions import qr, svd
from ember._tensor import Tensor

__all__ = ["pca_lowrank", "svd_lowrank"]


def _approximate_basis(a: Tensor, q: int, niter: int, m: Tensor | None) -> Tensor:
    """Q with q orthonormal columns whose span approximates the range of a - m."""

    def times(x: Tensor, transposed: bool = False) -> Tensor:
        operand = a.mT if transposed else a
        product = operand @ x
        return product if m is None else product - (m.mT if transposed else m) @ x

    test = E.randn(a.shape[-1], q, dtype=a.dtype, device=a.device)
    basis = qr(times(test)).Q
    for _ in range(niter):
        basis = qr(times(basis, transposed=True)).Q
        basis = qr(times(basis)).Q
    return basis


def svd_lowrank(
    A: Tensor, q: int | None = 6, niter: int | None = 2, M: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """(U, S, V) of a rank-q approximation of A - M (V, not Vh, as torch.svd)."""
    check_matrix("svd_lowrank", A, "A")
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    rows, cols = A.shape[-2:]
    m = None if M is None else M.broadcast_to(A.shape)
    if rows < cols:
        A = A.mT
        m = None if m is None else m.mT
    basis = _approximate_basis(A, q, niter, m)
    projected = basis.mT @ A
    if m is not None:
        projected = projected - basis.mT @ m
    u, s, vh = svd(projected, full_matrices=False)
    u, v = basis @ u, vh.mT
    return (v, s, u) if rows < cols else (u, s, v)


def pca_lowrank(
    A: Tensor, q: int | None = None, center: bool = True, niter: int = 2
) -> tuple[Tensor, Tensor, Tensor]:
    """(U, S, V) of the principal components of A's rows (centered unless center=False)."""
    check_matrix("pca_lowrank", A, "A")
    rows, cols = A.shape[-2:]
    if q is None:
        q = min(6, rows, cols)
    elif not 0 <= q <= min(rows, cols):
        raise ValueError(
            f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(rows, cols)}"
        )
    if niter < 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter)
    return svd_lowrank(A - A.mean(dim=-2, keepdim=True), q, niter=niter)
