"""Derivative formulas of the decompositions, PyTorch's (torch/csrc/autograd/
FunctionsManual.cpp), written in ember ops so that they run on every device.

Each takes the forward's outputs and their gradients (zeros where an output got none)
and returns the input's gradient. Real matrices only, so Hermitian means symmetric.
"""

from __future__ import annotations

from ember._ops._surface import E
from ember._tensor import Tensor

__all__ = [
    "cholesky_backward", "eigh_backward", "householder_product_composite", "lu_backward",
    "qr_backward", "solve_triangular_backward", "svd_backward",
]  # fmt: skip


def _with_diagonal(x: Tensor, diagonal: Tensor) -> Tensor:
    """x with its diagonal replaced (out of place, so it stays differentiable)."""
    eye = E.eye(x.shape[-1], dtype=E.bool, device=x.device)
    return E.where(eye, E.diag_embed(diagonal), x)


def cholesky_backward(grad_l: Tensor, factor: Tensor) -> Tensor:
    """A = L Lᵀ: gA = L⁻ᵀ Φ(Lᵀ gL) L⁻¹, Φ keeping the lower triangle with half the
    diagonal, symmetrised."""
    inner = (factor.mT @ grad_l).tril()
    inner = 0.5 * (inner + inner.tril(-1).mT)
    inner = E.linalg.solve_triangular(factor.mT, inner, upper=True)
    return E.linalg.solve_triangular(factor, inner, upper=False, left=False)


def eigh_backward(
    grad_values: Tensor, grad_vectors: Tensor, values: Tensor, vectors: Tensor
) -> Tensor:
    """A = V diag(L) Vᵀ: gA = V (skew(Vᵀ gV) / E + diag(gL)) Vᵀ, E_ij = L_j - L_i."""
    inner = vectors.mT @ grad_vectors
    inner = 0.5 * (inner - inner.mT)
    gaps = values.unsqueeze(-2) - values.unsqueeze(-1)
    gaps = _with_diagonal(gaps, E.ones_like(values))
    inner = _with_diagonal(inner / gaps, grad_values)
    return vectors @ inner @ vectors.mT


def svd_backward(
    grad_u: Tensor, grad_s: Tensor, grad_vh: Tensor, u: Tensor, s: Tensor, vh: Tensor
) -> Tensor:
    """A = U diag(S) Vh for distinct singular values (the first k columns of U and rows
    of Vh; full_matrices' extra ones do not enter):
    gA = U [(skew(Uᵀ gU) S + S skew(Vᵀ gV)) / E + diag(gS)] Vh
         + (I - U Uᵀ) gU S⁻¹ Vh + U S⁻¹ gVᵀ (I - V Vᵀ),
    with skew(X) = X - Xᵀ and E_jk = S_k² - S_j² (1 on the diagonal)."""
    k = s.shape[-1]
    u, grad_u = u[..., :k], grad_u[..., :k]
    vh, grad_vh = vh[..., :k, :], grad_vh[..., :k, :]
    v, grad_v = vh.mT, grad_vh.mT
    uu = u.mT @ grad_u
    vv = vh @ grad_v
    squares = s * s
    gaps = squares.unsqueeze(-2) - squares.unsqueeze(-1)
    gaps = _with_diagonal(gaps, E.ones_like(s))
    inner = ((uu - uu.mT) * s.unsqueeze(-2) + s.unsqueeze(-1) * (vv - vv.mT)) / gaps
    inner = _with_diagonal(inner, grad_s)
    grad = u @ inner @ vh
    if u.shape[-2] > k:
        scaled = grad_u / s.unsqueeze(-2)
        grad = grad + (scaled - u @ (u.mT @ scaled)) @ vh
    if v.shape[-2] > k:
        scaled = grad_v / s.unsqueeze(-2)
        grad = grad + u @ (scaled - v @ (vh @ scaled)).mT
    return grad


def _symmetric_from_lower(x: Tensor) -> Tensor:
    return x.tril() + x.tril(-1).mT


def _qr_backward_tall(grad_q: Tensor, grad_r: Tensor, q: Tensor, r: Tensor) -> Tensor:
    """m >= n: gA = [gQ + Q copyltu(M)] R⁻ᵀ, M = R gRᵀ - gQᵀ Q."""
    m = r @ grad_r.mT - grad_q.mT @ q
    left = grad_q + q @ _symmetric_from_lower(m)
    return E.linalg.solve_triangular(r, left.mT, upper=True).mT


def qr_backward(grad_q: Tensor, grad_r: Tensor, q: Tensor, r: Tensor) -> Tensor:
    """A = Q R (reduced); a wide A = [X | Y] splits as X = Q U and Y = Q V."""
    m, n = q.shape[-2], r.shape[-1]
    if m >= n:
        return _qr_backward_tall(grad_q, grad_r, q, r)
    grad_u, grad_v = grad_r[..., :m], grad_r[..., m:]
    y = q @ r[..., m:]
    grad_x = _qr_backward_tall(grad_q + y @ grad_v.mT, grad_u, q, r[..., :m])
    return E.cat([grad_x, q @ grad_v], dim=-1)


def solve_triangular_backward(
    grad: Tensor, a: Tensor, x: Tensor, upper: bool, left: bool, unitriangular: bool
) -> tuple[Tensor, Tensor]:
    """X = A⁻¹ B (left) or B A⁻¹: gB = A⁻ᵀ gX (or gX A⁻ᵀ); gA = -gB Xᵀ (or -Xᵀ gB),
    kept to A's triangle."""
    grad_b = E.linalg.solve_triangular(
        a.mT, grad, upper=not upper, left=left, unitriangular=unitriangular
    )
    grad_a = -(grad_b @ x.mT) if left else -(x.mT @ grad_b)
    grad_a = (
        grad_a.triu(1 if unitriangular else 0) if upper else grad_a.tril(-1 if unitriangular else 0)
    )
    return grad_a, grad_b


def lu_backward(grad_lu: Tensor, lu: Tensor, permutation: Tensor) -> Tensor:
    """A = P L U, square, from the packed gradient (gL below the diagonal, gU on and
    above): gA = P L⁻ᵀ (tril(Lᵀ gL, -1) + triu(gU Uᵀ)) U⁻ᵀ."""
    lower = lu.tril(-1) + E.eye(lu.shape[-1], dtype=lu.dtype, device=lu.device)
    upper = lu.triu()
    inner = (lower.mT @ grad_lu.tril(-1)).tril(-1) + (grad_lu.triu() @ upper.mT).triu()
    inner = E.linalg.solve_triangular(lower.mT, inner, upper=True, unitriangular=True)
    inner = E.linalg.solve_triangular(upper.mT, inner, upper=False, left=False)
    return permutation @ inner


def householder_product_composite(a: Tensor, tau: Tensor) -> Tensor:
    """H1 ... Hk applied to the first columns of I in ember ops, so that autograd records
    every step (the kernel path detaches)."""
    m, n = a.shape[-2:]
    rows = E.arange(m, device=a.device).unsqueeze(-1)
    q = E.eye(m, n, dtype=a.dtype, device=a.device).expand(*a.shape[:-2], m, n)
    for j in reversed(range(tau.shape[-1])):
        column = a[..., :, j : j + 1]
        v = E.where(rows > j, column, (rows == j).to(a.dtype))
        q = q - tau[..., j, None, None] * (v @ (v.mT @ q))
    return q
