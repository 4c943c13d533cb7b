"""Generic defaults of the LAPACK-level primitives, written in ember ops.

A device without native kernels for `lu_factor_`, `cholesky_`, ... (opencl, cuda, the
reference device) runs these: unblocked LU with partial pivoting, Cholesky-Banachiewicz,
Householder QR with LAPACK's conventions, cyclic Jacobi for eigh and one-sided
(Hestenes) Jacobi for the SVD. Each step is a few ops over the whole batch at once
(per-matrix choices such as pivots and rotation angles are tensors, applied with
`where`), and the only host reads are the Jacobi sweeps' convergence tests, so the cost
is O(n) (O(n^2) per sweep) op launches whatever the batch size. They suit the moderate
sizes such code meets; a device that cares about speed registers kernels. Signatures are
the kernels' (ember._ops.names); every operand is (B, ...) and written in place.
"""

from __future__ import annotations

from ember._ops._surface import E
from ember._tensor import Tensor

__all__ = [
    "cholesky", "eigh", "householder_product", "householder_qr", "lu_factor", "svd",
    "triangular_solve",
]  # fmt: skip

_SWEEPS = 60


def _index(n: int, like: Tensor) -> Tensor:
    return E.arange(n, device=like.device)


def _first_failure(info: Tensor, failed: Tensor, code: int) -> Tensor:
    """info with `code` where a matrix fails now and had not failed before (LAPACK
    reports the first)."""
    return E.where((info == 0) & failed, code, info)


def lu_factor(a: Tensor, pivots: Tensor, info: Tensor) -> None:
    """getrf: partial pivoting, every matrix's row swap done by one gather."""
    batch, m, n = a.shape
    work = a.clone()
    rows, cols = _index(m, a), _index(n, a)
    status = E.zeros(batch, dtype=E.int64, device=a.device)
    chosen = []
    for j in range(min(m, n)):
        p = work[:, j:, j].abs().argmax(-1) + j
        chosen.append(p)
        p_col = p.unsqueeze(-1)
        order = E.where(rows == j, p_col, E.where(rows == p_col, j, rows))
        work = work.gather(1, order.unsqueeze(-1).expand(batch, m, n))
        pivot = work[:, j, j]
        zero = pivot == 0
        status = _first_failure(status, zero, j + 1)
        # A zero pivot means a zero column below it: its multipliers stay zero.
        multipliers = E.where(
            rows > j, work[:, :, j] / E.where(zero, 1.0, pivot).unsqueeze(-1), 0.0
        )
        pivot_row = E.where(cols > j, work[:, j, :], 0.0)
        work = work - multipliers.unsqueeze(-1) * pivot_row.unsqueeze(-2)
        below = (rows > j).unsqueeze(-1) & (cols == j)
        work = E.where(below, multipliers.unsqueeze(-1), work)
    a.copy_(work)
    if chosen:
        pivots.copy_(E.stack(chosen, -1) + 1)
    info.copy_(status)


def cholesky(a: Tensor, info: Tensor) -> None:
    """potrf (lower), column by column over the batch."""
    batch, n, _ = a.shape
    source = a.clone()
    factor = E.zeros_like(a)
    status = E.zeros(batch, dtype=E.int64, device=a.device)
    for j in range(n):
        row = factor[:, j, :j]
        d = source[:, j, j] - (row * row).sum(-1)
        bad = ~(d > 0)
        status = _first_failure(status, bad, j + 1)
        root = E.where(bad, 1.0, d).sqrt()
        factor[:, j, j] = root
        if j + 1 < n:
            below = source[:, j + 1 :, j] - (factor[:, j + 1 :, :j] @ row.unsqueeze(-1)).squeeze(-1)
            factor[:, j + 1 :, j] = below / root.unsqueeze(-1)
    a.copy_(factor)
    info.copy_(status)


def householder_qr(a: Tensor, tau: Tensor) -> None:
    """geqrf: LAPACK's dlarfg per column (beta = -sign(alpha) |x|, tau = 0 when the part
    below the diagonal is already zero), applied to the columns after it."""
    m, n = a.shape[1:]
    for j in range(min(m, n)):
        alpha = a[:, j, j].clone()
        tail = a[:, j + 1 :, j].clone()
        tail_norm = E.linalg.vector_norm(tail, dim=-1)
        trivial = tail_norm == 0
        norm = (alpha * alpha + tail_norm * tail_norm).sqrt()
        beta = -E.where(alpha >= 0, norm, -norm)
        scale = E.where(trivial, 0.0, (beta - alpha) / E.where(trivial, 1.0, beta))
        v_tail = tail / E.where(trivial, 1.0, alpha - beta).unsqueeze(-1)
        a[:, j + 1 :, j] = v_tail
        a[:, j, j] = E.where(trivial, alpha, beta)
        tau[:, j] = scale
        if j + 1 < n:
            _reflect(a[:, j:, j + 1 :], v_tail, scale)


def _reflect(block: Tensor, v_tail: Tensor, scale: Tensor) -> None:
    """block -= tau v (vᵀ block) in place, v = (1, v_tail) per matrix."""
    one = E.ones((block.shape[0], 1), dtype=block.dtype, device=block.device)
    v = E.cat([one, v_tail], -1).unsqueeze(-1)
    block -= scale.unsqueeze(-1).unsqueeze(-1) * (v @ (v.mT @ block))


def householder_product(a: Tensor, tau: Tensor) -> None:
    """orgqr: H_k ... H_1 applied to the first columns of the identity."""
    batch, m, n = a.shape
    reflectors = a.clone()
    a.copy_(E.eye(m, n, dtype=a.dtype, device=a.device).expand(batch, m, n))
    for j in reversed(range(tau.shape[-1])):
        _reflect(a[:, j:, :], reflectors[:, j + 1 :, j], tau[:, j])


def _rotation(diagonal_gap: Tensor, coupling: Tensor, skip: Tensor) -> tuple[Tensor, Tensor]:
    """cos and sin of the Jacobi rotation zeroing `coupling`: t = sign(θ)/(|θ| + √(θ²+1)),
    θ = diagonal_gap / (2 coupling); the identity where `skip`."""
    theta = diagonal_gap / (2.0 * E.where(skip, 1.0, coupling))
    magnitude = 1.0 / (theta.abs() + (theta * theta + 1.0).sqrt())
    t = E.where(theta >= 0, magnitude, -magnitude)
    cos = 1.0 / (t * t + 1.0).sqrt()
    return E.where(skip, 1.0, cos), E.where(skip, 0.0, t * cos)


def _rotate_columns(x: Tensor, p: int, q: int, cos: Tensor, sin: Tensor) -> None:
    c, s = cos.unsqueeze(-1), sin.unsqueeze(-1)
    xp, xq = x[:, :, p].clone(), x[:, :, q].clone()
    x[:, :, p] = c * xp - s * xq
    x[:, :, q] = s * xp + c * xq


def eigh(a: Tensor, w: Tensor, info: Tensor) -> None:
    """syevd by cyclic Jacobi rotations over the batch; eigenvalues ascending."""
    batch, n, _ = a.shape
    lower = a.tril()
    s = lower + lower.tril(-1).mT
    v = E.eye(n, dtype=a.dtype, device=a.device).expand(batch, n, n).clone()
    eps = E.finfo(a.dtype).eps
    converged = False
    for _ in range(_SWEEPS):
        off = (s - E.diag_embed(s.diagonal(dim1=-2, dim2=-1))).square().sum((-2, -1))
        if bool((off <= eps * eps * s.square().sum((-2, -1))).all().item()):
            converged = True
            break
        for p in range(n - 1):
            for q in range(p + 1, n):
                coupling = s[:, p, q].clone()
                cos, sin = _rotation(s[:, q, q] - s[:, p, p], coupling, coupling == 0)
                _rotate_columns(s, p, q, cos, sin)
                _rotate_columns(s.mT, p, q, cos, sin)
                _rotate_columns(v, p, q, cos, sin)
    values, order = s.diagonal(dim1=-2, dim2=-1).sort(-1)
    w.copy_(values)
    a.copy_(v.gather(2, order.unsqueeze(-2).expand(batch, n, n)))
    info.fill_(0 if converged else 1)


def svd(a: Tensor, u: Tensor, s: Tensor, vh: Tensor, info: Tensor, full_matrices: bool) -> None:
    """gesdd by one-sided Jacobi over the batch; singular values descending."""
    batch, m, n = a.shape
    wide = m < n
    # Orthogonalise the columns of a tall matrix (a wide one's transpose).
    work = (a.mT if wide else a).clone()
    rows, cols = work.shape[1:]
    right = E.eye(cols, dtype=a.dtype, device=a.device).expand(batch, cols, cols).clone()
    converged = _one_sided_jacobi(work, right, cols)
    values, order = E.linalg.vector_norm(work, dim=1).sort(-1, descending=True)
    work = work.gather(2, order.unsqueeze(1).expand(batch, rows, cols))
    right = right.gather(2, order.unsqueeze(1).expand(batch, cols, cols))
    left = _orthonormal_columns(work, values, rows if full_matrices else cols)
    s.copy_(values)
    if wide:
        u.copy_(right)
        vh.copy_(left.mT)
    else:
        u.copy_(left)
        vh.copy_(right.mT)
    info.fill_(0 if converged else 1)


def _one_sided_jacobi(work: Tensor, right: Tensor, cols: int) -> bool:
    eps = E.finfo(work.dtype).eps
    for _ in range(_SWEEPS):
        rotated = E.zeros((), dtype=E.bool, device=work.device)
        for p in range(cols - 1):
            for q in range(p + 1, cols):
                ap, aq = work[:, :, p], work[:, :, q]
                alpha, beta, gamma = (ap * ap).sum(-1), (aq * aq).sum(-1), (ap * aq).sum(-1)
                skip = gamma.abs() <= eps * (alpha * beta).sqrt()
                rotated = rotated | (~skip).any()
                cos, sin = _rotation(beta - alpha, gamma, skip)
                _rotate_columns(work, p, q, cos, sin)
                _rotate_columns(right, p, q, cos, sin)
        if not bool(rotated.item()):
            return True
    return False


def _orthonormal_columns(work: Tensor, values: Tensor, width: int) -> Tensor:
    """The left singular vectors: work's columns normalised where the value is not
    negligible, the others (trailing, as the values are sorted) and, up to `width`, the
    complement completed orthonormally by a Householder QR of [basis | I]."""
    batch, rows, cols = work.shape
    tolerance = values[:, :1] * (rows * E.finfo(work.dtype).eps)
    keep = values > tolerance
    basis = E.where(keep.unsqueeze(1), work / E.where(keep, values, 1.0).unsqueeze(1), 0.0)
    eye = E.eye(rows, dtype=work.dtype, device=work.device).expand(batch, rows, rows)
    stacked = E.cat([basis, eye], dim=-1)
    tau = E.zeros((batch, rows), dtype=work.dtype, device=work.device)
    householder_qr(stacked, tau)
    # Where a column was kept, Q's column is it up to R's diagonal sign (±1).
    signs = E.where(keep, stacked.diagonal(dim1=-2, dim2=-1)[:, :cols].sign(), 1.0)
    q = stacked[:, :, :rows].clone()
    householder_product(q, tau)
    ones = (
        E.ones((batch, width - cols), dtype=work.dtype, device=work.device)
        if width > cols
        else None
    )
    column_signs = signs[:, :width] if ones is None else E.cat([signs, ones], -1)
    return q[:, :, :width] * column_signs.unsqueeze(1)


def triangular_solve(a: Tensor, b: Tensor, upper: bool, unitriangular: bool) -> None:
    """trsm by substitution, row by row over the whole batch."""
    n = a.shape[1]
    order = reversed(range(n)) if upper else range(n)
    for i in order:
        done = slice(i + 1, n) if upper else slice(0, i)
        row = b[:, i, :] - (a[:, i : i + 1, done] @ b[:, done, :]).squeeze(1)
        b[:, i, :] = row if unitriangular else row / a[:, i, i : i + 1]
