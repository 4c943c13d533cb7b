"""Generic defaults of the LAPACK-level primitives, written in ember ops.

A device without native kernels for `lu_factor_`, `cholesky_`, ... (opencl, cuda) runs
these: unblocked LU with partial pivoting, Cholesky-Banachiewicz, Householder QR with
LAPACK's conventions, cyclic Jacobi for eigh and one-sided (Hestenes) Jacobi for the SVD.
They work one matrix of the batch at a time and read the pivots and rotation angles on
the host, so they suit the small matrices such code meets; a device that cares about
speed registers a kernel. Signatures are the kernels' (ember._ops.names).
"""

from __future__ import annotations

import math

import ember
from ember._tensor import Tensor

__all__ = [
    "cholesky", "eigh", "householder_product", "householder_qr", "lu_factor", "svd",
    "triangular_solve",
]  # fmt: skip

_SWEEPS = 60


def _set_ints(target: Tensor, values: list[list[int]] | list[int]) -> None:
    target.copy_(ember.tensor(values, dtype=target.dtype).reshape(target.shape))


def lu_factor(a: Tensor, pivots: Tensor, info: Tensor) -> None:
    """getrf, one matrix at a time."""
    batch, m, n = a.shape
    pivot_rows: list[list[int]] = []
    infos: list[int] = []
    for z in range(batch):
        rows, status = _lu_one(a[z], m, n)
        pivot_rows.append(rows)
        infos.append(status)
    _set_ints(pivots, pivot_rows)
    _set_ints(info, infos)


def _lu_one(lu: Tensor, m: int, n: int) -> tuple[list[int], int]:
    rows: list[int] = []
    status = 0
    for j in range(min(m, n)):
        p = j + int(lu[j:, j].abs().argmax().item())
        rows.append(p + 1)
        if p != j:
            row = lu[j].clone()
            lu[j] = lu[p]
            lu[p] = row
        pivot = float(lu[j, j].item())
        if pivot == 0.0:
            status = status or j + 1
            continue
        if j + 1 < m:
            lu[j + 1 :, j] = lu[j + 1 :, j] / pivot
            if j + 1 < n:
                lu[j + 1 :, j + 1 :] -= ember.outer(lu[j + 1 :, j], lu[j, j + 1 :])
    return rows, status


def cholesky(a: Tensor, info: Tensor) -> None:
    """potrf (lower), one matrix at a time."""
    _set_ints(info, [_cholesky_one(a[z], a.shape[1]) for z in range(a.shape[0])])


def _cholesky_one(factor: Tensor, n: int) -> int:
    for j in range(n):
        row = factor[j, :j]
        d = float((factor[j, j] - (row * row).sum()).item())
        if not d > 0.0:
            return j + 1
        root = math.sqrt(d)
        factor[j, j] = root
        if j + 1 < n:
            factor[j + 1 :, j] = (factor[j + 1 :, j] - factor[j + 1 :, :j] @ row) / root
    return 0


def householder_qr(a: Tensor, tau: Tensor) -> None:
    """geqrf, one matrix at a time."""
    batch, m, n = a.shape
    for z in range(batch):
        for j in range(min(m, n)):
            tau[z, j] = _reflect(a[z], j, m, n)


def _reflect(qr: Tensor, j: int, m: int, n: int) -> float:
    """LAPACK's dlarfg on column j below row j, applied to the columns after it."""
    alpha = float(qr[j, j].item())
    tail = qr[j + 1 :, j]
    tail_norm = float(ember.linalg.vector_norm(tail).item()) if j + 1 < m else 0.0
    if tail_norm == 0.0:
        return 0.0
    beta = -math.copysign(math.hypot(alpha, tail_norm), alpha)
    scale = (beta - alpha) / beta
    qr[j + 1 :, j] = tail / (alpha - beta)
    qr[j, j] = beta
    if j + 1 < n:
        v = ember.cat([ember.ones(1, dtype=qr.dtype, device=qr.device), qr[j + 1 :, j]])
        block = qr[j:, j + 1 :]
        block -= scale * ember.outer(v, v @ block)
    return scale


def householder_product(a: Tensor, tau: Tensor) -> None:
    """orgqr, one matrix at a time: apply H_k ... H_1 to the first columns of I."""
    batch, m, n = a.shape
    k = tau.shape[-1]
    for z in range(batch):
        reflectors = a[z].clone()
        q = ember.eye(m, n, dtype=a.dtype, device=a.device)
        for j in reversed(range(k)):
            v = ember.cat([ember.ones(1, dtype=a.dtype, device=a.device), reflectors[j + 1 :, j]])
            block = q[j:, :]
            block -= tau[z, j] * ember.outer(v, v @ block)
        a[z] = q


def eigh(a: Tensor, w: Tensor, info: Tensor) -> None:
    """syevd by cyclic Jacobi rotations, one matrix at a time; eigenvalues ascending."""
    batch, n, _ = a.shape
    statuses = []
    for z in range(batch):
        lower = a[z].tril()
        s = lower + lower.tril(-1).mT
        v = ember.eye(n, dtype=a.dtype, device=a.device)
        statuses.append(_jacobi(s, v, n))
        values, order = s.diagonal().sort()
        w[z] = values
        a[z] = v[:, order]
    _set_ints(info, statuses)


def _rotate(x: Tensor, p: int, q: int, c: float, s: float, columns: bool) -> None:
    xp = (x[:, p] if columns else x[p]).clone()
    xq = (x[:, q] if columns else x[q]).clone()
    if columns:
        x[:, p] = c * xp - s * xq
        x[:, q] = s * xp + c * xq
    else:
        x[p] = c * xp - s * xq
        x[q] = s * xp + c * xq


def _jacobi(s: Tensor, v: Tensor, n: int) -> int:
    eps = ember.finfo(s.dtype).eps
    for _ in range(_SWEEPS):
        off = float((s - s.diagonal().diag()).square().sum().item())
        if off <= (eps * eps) * float(s.square().sum().item()) or off == 0.0:
            return 0
        for p in range(n - 1):
            for q in range(p + 1, n):
                (spp, spq), (_, sqq) = s[[p, q]][:, [p, q]].tolist()
                if spq == 0.0:
                    continue
                theta = (sqq - spp) / (2.0 * spq)
                t = math.copysign(1.0, theta) / (abs(theta) + math.hypot(theta, 1.0))
                c = 1.0 / math.hypot(t, 1.0)
                _rotate(s, p, q, c, t * c, columns=False)
                _rotate(s, p, q, c, t * c, columns=True)
                _rotate(v, p, q, c, t * c, columns=True)
    return 1


def svd(a: Tensor, u: Tensor, s: Tensor, vh: Tensor, info: Tensor, full_matrices: bool) -> None:
    """gesdd by one-sided Jacobi, one matrix at a time; singular values descending."""
    batch, m, n = a.shape
    statuses = []
    for z in range(batch):
        wide = m < n
        # Orthogonalise the columns of a tall matrix (a wide one's transpose).
        work = (a[z].mT if wide else a[z]).clone()
        cols = work.shape[1]
        right = ember.eye(cols, dtype=a.dtype, device=a.device)
        statuses.append(_one_sided_jacobi(work, right, cols))
        values, order = ember.linalg.vector_norm(work, dim=0).sort(descending=True)
        left = _orthonormal_columns(work[:, order], values, full_matrices)
        right = right[:, order]
        s[z] = values
        if wide:
            u[z] = right[:, : u.shape[2]]
            vh[z] = left[:, : vh.shape[1]].mT
        else:
            u[z] = left[:, : u.shape[2]]
            vh[z] = right[:, : vh.shape[1]].mT
    _set_ints(info, statuses)


def _one_sided_jacobi(work: Tensor, right: Tensor, cols: int) -> int:
    eps = ember.finfo(work.dtype).eps
    for _ in range(_SWEEPS):
        rotated = False
        for p in range(cols - 1):
            for q in range(p + 1, cols):
                (alpha, gamma), (_, beta) = (work[:, [p, q]].mT @ work[:, [p, q]]).tolist()
                if abs(gamma) <= eps * math.sqrt(alpha * beta) or gamma == 0.0:
                    continue
                rotated = True
                zeta = (beta - alpha) / (2.0 * gamma)
                t = math.copysign(1.0, zeta) / (abs(zeta) + math.hypot(zeta, 1.0))
                c = 1.0 / math.hypot(t, 1.0)
                _rotate(work, p, q, c, t * c, columns=True)
                _rotate(right, p, q, c, t * c, columns=True)
        if not rotated:
            return 0
    return 1


def _orthonormal_columns(work: Tensor, values: Tensor, full: bool) -> Tensor:
    """The left singular vectors: work's columns normalised where the value is not
    negligible, the rest (and, for full, the complement) completed orthonormally."""
    rows = work.shape[0]
    tolerance = float(values[0].item()) * rows * ember.finfo(work.dtype).eps
    rank = int((values > tolerance).sum().item())
    basis = work[:, :rank] / values[:rank]
    return _complete(basis, rows if full else work.shape[1])


def _complete(basis: Tensor, width: int) -> Tensor:
    """basis (m, r) orthonormal, extended to `width` orthonormal columns."""
    rows, rank = basis.shape
    if rank >= width:
        return basis[:, :width]
    stacked = ember.cat([basis, ember.eye(rows, dtype=basis.dtype, device=basis.device)], dim=1)
    q = stacked.clone().unsqueeze(0)
    tau = ember.zeros((1, rows), dtype=basis.dtype, device=basis.device)
    householder_qr(q, tau)
    full = q[:, :, :rows].clone()
    householder_product(full, tau)
    return ember.cat([basis, full[0, :, rank:width]], dim=1)


def triangular_solve(a: Tensor, b: Tensor, upper: bool, unitriangular: bool) -> None:
    """trsm by substitution, row by row over the whole batch."""
    n = a.shape[1]
    order = reversed(range(n)) if upper else range(n)
    for i in order:
        done = slice(i + 1, n) if upper else slice(0, i)
        row = b[:, i, :] - (a[:, i : i + 1, done] @ b[:, done, :]).squeeze(1)
        b[:, i, :] = row if unitriangular else row / a[:, i, i : i + 1]
