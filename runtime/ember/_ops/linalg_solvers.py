"""ember.linalg's solvers and what derives from LU: solve, inv, det, slogdet,
solve_triangular, lu_solve, cholesky_solve and cholesky_inverse, with PyTorch's
semantics (broadcast batch dims, vector right-hand sides) and derivatives."""

from __future__ import annotations

from typing import Any, NamedTuple

from ember._ops import linalg_decomposition_formulas as formulas
from ember._ops import linalg_primitives as raw
from ember._ops._surface import E
from ember._ops.linalg_checks import (
    check_matrix,
    check_square,
    raise_for_info,
    torch_dtype_name,
)
from ember._ops.linalg_decompositions import permutation_rows
from ember._tensor import Tensor
from ember.autograd import Function

__all__ = [
    "cholesky_inverse", "cholesky_solve", "det", "inv", "inv_ex", "logdet", "lu_solve",
    "slogdet", "solve", "solve_ex", "solve_triangular",
]  # fmt: skip


class SolveExResult(NamedTuple):
    result: Tensor
    info: Tensor


class InvExResult(NamedTuple):
    inverse: Tensor
    info: Tensor


class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


_SOLVE_FAILED = "The solver failed because the input matrix is singular."


def _broadcast_batches(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """a (*, n, n) and b (*, n, k) expanded to one batch shape."""
    batch = E.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return a.expand(*batch, *a.shape[-2:]), b.expand(*batch, *b.shape[-2:])


class _TriangularSolve(Function):
    @staticmethod
    def forward(ctx: Any, a: Tensor, b: Tensor, upper: bool, left: bool, unit: bool) -> Tensor:
        if left:
            x = raw.triangular_solve_raw(a, b, upper, unit)
        else:
            x = raw.triangular_solve_raw(a.mT, b.mT, not upper, unit).mT
        ctx.save_for_backward(a, x)
        ctx.flags = (upper, left, unit)
        return x

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None, None, None, None]:
        a, x = ctx.saved_tensors
        upper, left, unit = ctx.flags
        grad_a, grad_b = formulas.solve_triangular_backward(grad, a, x, upper, left, unit)
        needs_a, needs_b = ctx.needs_input_grad[:2]
        return (grad_a if needs_a else None), (grad_b if needs_b else None), None, None, None


def solve_triangular(
    A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False
) -> Tensor:
    """X with A X = B (left) or X A = B, A triangular; its other triangle is ignored."""
    op = "linalg.solve_triangular"
    check_square(op, A)
    check_matrix(op, B, "B")
    if B.dtype != A.dtype:
        raise RuntimeError(
            f"{op}: Expected A and B to have the same dtype, but found A of type "
            f"{torch_dtype_name(A.dtype)} and B of type {torch_dtype_name(B.dtype)} instead"
        )
    rows = B.shape[-2] if left else B.shape[-1]
    if rows != A.shape[-1]:
        side = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"{op}: Incompatible shapes of A and B for the equation {side} "
            f"({A.shape[-2]}x{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})"
        )
    a, b = _broadcast_batches(A, B)
    result: Tensor = _TriangularSolve.apply(a, b, upper, left, unitriangular)
    return result


def _lu_parts_solve(lu: Tensor, pivots: Tensor, b: Tensor, adjoint: bool) -> Tensor:
    """A X = B (or Aᵀ X = B) from A = P L U, through differentiable triangular solves."""
    n = lu.shape[-1]
    order = permutation_rows(pivots, n).unsqueeze(-1).expand(*pivots.shape[:-1], n, b.shape[-1])
    if not adjoint:
        permuted = b.gather(-2, order)
        y = solve_triangular(lu, permuted, upper=False, unitriangular=True)
        return solve_triangular(lu, y, upper=True)
    y = solve_triangular(lu.mT, b, upper=False)
    z = solve_triangular(lu.mT, y, upper=True, unitriangular=True)
    return E.zeros_like(z).scatter(-2, order, z)


def _as_matrix_rhs(A: Tensor, B: Tensor) -> bool:
    """PyTorch's rule: B is a (batch of) vector(s) when 1-D or A's batch of vectors."""
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


class _Solve(Function):
    @staticmethod
    def forward(ctx: Any, a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
        lu, pivots, info = raw.lu_factor_raw(a)
        x = _lu_parts_solve(lu, pivots, b, adjoint=False)
        ctx.save_for_backward(a, x)
        ctx.mark_non_differentiable(info)
        return x, info

    @staticmethod
    def backward(ctx: Any, grad: Tensor, _: Any) -> tuple[Tensor | None, Tensor | None]:
        a, x = ctx.saved_tensors
        grad_b = solve(a.mT, grad)
        grad_a = -(grad_b @ x.mT) if ctx.needs_input_grad[0] else None
        return grad_a, grad_b


def solve_ex(
    A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False
) -> SolveExResult:
    """solve and LAPACK's status per matrix (info > 0: singular)."""
    op = "linalg.solve"
    check_square(op, A)
    check_floating_pair(op, A, B)
    if not left:
        x, info = solve_ex(A.mT, B.mT, check_errors=check_errors)
        return SolveExResult(x.mT, info)
    vector = _as_matrix_rhs(A, B)
    b = B.unsqueeze(-1) if vector else B
    if b.dim() < 2 or b.shape[-2] != A.shape[-1]:
        rows, cols = (B.shape[-1], 1) if vector else (*b.shape[-2:], 1)[:2]
        raise RuntimeError(
            f"{op}: Incompatible shapes of A and B for the equation AX = B "
            f"({A.shape[-2]}x{A.shape[-1]} and {rows}x{cols})"
        )
    a, b = _broadcast_batches(A, b)
    x, info = _Solve.apply(a, b)
    if check_errors:
        raise_for_info("torch.linalg.solve_ex", info, _SOLVE_FAILED)
    return SolveExResult(x.squeeze(-1) if vector else x, info)


def check_floating_pair(op: str, A: Tensor, B: Tensor) -> None:
    """B a floating tensor of A's dtype."""
    if not isinstance(B, Tensor):
        raise TypeError(f"{op}(): argument 'B' must be Tensor, not {type(B).__name__}")
    if B.dtype != A.dtype:
        raise RuntimeError(
            f"{op}: Expected A and B to have the same dtype, but found A of type "
            f"{torch_dtype_name(A.dtype)} and B of type {torch_dtype_name(B.dtype)} instead"
        )


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """X with A X = B (left) or X A = B, for square invertible A (LU with pivoting)."""
    x, info = solve_ex(A, B, left=left)
    raise_for_info("torch.linalg.solve", info, _SOLVE_FAILED)
    return x


_SINGULAR = (
    "The diagonal element {code} is zero, the inversion could not be completed because "
    "the input matrix is singular."
)


def inv_ex(A: Tensor, *, check_errors: bool = False) -> InvExResult:
    """The inverse and LAPACK's status per matrix (info > 0: singular)."""
    check_square("linalg.inv", A)
    eye = E.eye(A.shape[-1], dtype=A.dtype, device=A.device)
    a, b = _broadcast_batches(A, eye)
    x, info = _Solve.apply(a, b)
    if check_errors:
        raise_for_info("linalg.inv", info, _SINGULAR)
    return InvExResult(x, info)


def inv(A: Tensor) -> Tensor:
    """The inverse of square A; a singular A raises LinAlgError."""
    x, info = inv_ex(A)
    raise_for_info("linalg.inv", info, _SINGULAR)
    return x


def _lu_sign_and_diagonal(a: Tensor) -> tuple[Tensor, Tensor]:
    lu, pivots, _ = raw.lu_factor_raw(a)
    n = a.shape[-1]
    swaps = (pivots.long() != E.arange(1, n + 1, device=a.device)).sum(-1)
    sign = 1.0 - 2.0 * (swaps % 2).to(a.dtype)
    return sign, lu.diagonal(dim1=-2, dim2=-1)


class _Slogdet(Function):
    @staticmethod
    def forward(ctx: Any, a: Tensor) -> tuple[Tensor, Tensor]:
        sign, diagonal = _lu_sign_and_diagonal(a)
        sign = sign * diagonal.sign().prod(-1)
        logabsdet = diagonal.abs().log().sum(-1)
        ctx.save_for_backward(a)
        ctx.mark_non_differentiable(sign)
        return sign, logabsdet

    @staticmethod
    def backward(ctx: Any, _: Any, grad: Tensor) -> Tensor:
        (a,) = ctx.saved_tensors
        return grad.unsqueeze(-1).unsqueeze(-1) * inv(a).mT


def slogdet(A: Tensor) -> SlogdetResult:
    """(sign, log |det A|); sign 0 and -inf for a singular A."""
    check_square("linalg.slogdet", A)
    sign, logabsdet = _Slogdet.apply(A)
    return SlogdetResult(sign, logabsdet)


class _Det(Function):
    @staticmethod
    def forward(ctx: Any, a: Tensor) -> Tensor:
        sign, diagonal = _lu_sign_and_diagonal(a)
        value = sign * diagonal.prod(-1)
        ctx.save_for_backward(a, value)
        return value

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        a, value = ctx.saved_tensors
        inverse, info = inv_ex(a)
        scale = (grad * value).unsqueeze(-1).unsqueeze(-1)
        if not bool((info != 0).any().item()):
            return scale * inverse.mT  # the cofactor formula det(A) A⁻ᵀ
        return grad.unsqueeze(-1).unsqueeze(-1) * _adjugate_transposed(a)


def _adjugate_transposed(a: Tensor) -> Tensor:
    """adj(A)ᵀ = det(U Vh) U diag(the products of all singular values but one) Vh: what
    the cofactor formula tends to, defined for singular A too."""
    u, s, vh = E.linalg.svd(a)
    eye = E.eye(s.shape[-1], dtype=E.bool, device=s.device)
    others = E.where(eye, E.ones_like(s).unsqueeze(-1), s.unsqueeze(-2)).prod(-1)
    with E.no_grad():
        orientation = _signed_det(u.detach()) * _signed_det(vh.detach())
    return orientation.unsqueeze(-1).unsqueeze(-1) * ((u * others.unsqueeze(-2)) @ vh)


def _signed_det(a: Tensor) -> Tensor:
    sign, diagonal = _lu_sign_and_diagonal(a)
    return sign * diagonal.prod(-1)


def det(A: Tensor) -> Tensor:
    """The determinant of square A (through LU)."""
    check_square("linalg.det", A)
    result: Tensor = _Det.apply(A)
    return result


def logdet(input: Tensor) -> Tensor:
    """log det A: NaN for a negative determinant, -inf for a singular A."""
    check_square("logdet", input)
    sign, logabsdet = slogdet(input)
    return logabsdet + sign.log()


def lu_solve(
    LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False
) -> Tensor:
    """X with A X = B (or Aᵀ X = B, or X A = B) from lu_factor's (LU, pivots)."""
    op = "linalg.lu_solve"
    check_square(op, LU, "LU")
    check_matrix(op, B, "B")
    if not left:
        return lu_solve(LU, pivots, B.mT, adjoint=not adjoint).mT
    if B.shape[-2] != LU.shape[-1]:
        raise RuntimeError(
            f"{op}: Incompatible shapes of A and B for the equation AX = B "
            f"({LU.shape[-2]}x{LU.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})"
        )
    batch = E.broadcast_shapes(LU.shape[:-2], pivots.shape[:-1], B.shape[:-2])
    lu = LU.expand(*batch, *LU.shape[-2:])
    piv = pivots.expand(*batch, pivots.shape[-1])
    b = B.expand(*batch, *B.shape[-2:])
    return _lu_parts_solve(lu, piv, b, adjoint)


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
    """X with A X = B, A = L Lᵀ (or Uᵀ U) given its Cholesky factor."""
    lower = L.mT if upper else L
    y = solve_triangular(lower, B, upper=False)
    return solve_triangular(lower.mT, y, upper=True)


def cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:
    """A⁻¹ from A's Cholesky factor."""
    check_square("cholesky_inverse", L, "input")
    eye = E.eye(L.shape[-1], dtype=L.dtype, device=L.device)
    return cholesky_solve(eye.expand(*L.shape), L, upper)
