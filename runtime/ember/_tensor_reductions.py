"""Tensor methods of the reductions and of linear algebra."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

from ember import _upper
from ember._tensor_core import TensorCore

if TYPE_CHECKING:
    from ember._tensor import Tensor

__all__ = ["ReductionMethods"]

# Any, not the typed `_upper`: these methods pass `self` (typed as this mixin, not as
# Tensor) to ops; each is a one-line forward whose public signature is typed here.
_up: Any = _upper


class ReductionMethods(TensorCore):
    """t.sum(), t.max(dim), t.var(), t.cumsum(dim), t.matmul(u), ..."""

    __slots__ = ()

    # reductions
    def sum(self, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None) -> Tensor:
        return _up.ops.sum(self, dim, keepdim, dtype=dtype)

    def mean(self, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None) -> Tensor:
        return _up.ops.mean(self, dim, keepdim, dtype=dtype)

    def prod(self, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None) -> Tensor:
        return _up.ops.prod(self, dim, keepdim, dtype=dtype)

    def max(self, dim: Any = None, keepdim: builtins.bool = False) -> Any:
        return _up.ops.max(self, dim, keepdim)

    def min(self, dim: Any = None, keepdim: builtins.bool = False) -> Any:
        return _up.ops.min(self, dim, keepdim)

    def amax(self, dim: Any = (), keepdim: builtins.bool = False) -> Tensor:
        return _up.ops.amax(self, dim, keepdim)

    def amin(self, dim: Any = (), keepdim: builtins.bool = False) -> Tensor:
        return _up.ops.amin(self, dim, keepdim)

    def argmax(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        return _up.ops.argmax(self, dim, keepdim)

    def argmin(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        return _up.ops.argmin(self, dim, keepdim)

    def var(
        self,
        dim: Any = None,
        *,
        correction: Any = 1,
        keepdim: builtins.bool = False,
        unbiased: builtins.bool | None = None,
    ) -> Tensor:
        return _up.ops.var(self, dim, correction=correction, keepdim=keepdim, unbiased=unbiased)

    def std(
        self,
        dim: Any = None,
        *,
        correction: Any = 1,
        keepdim: builtins.bool = False,
        unbiased: builtins.bool | None = None,
    ) -> Tensor:
        return _up.ops.std(self, dim, correction=correction, keepdim=keepdim, unbiased=unbiased)

    def all(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        return _up.ops.all(self, dim, keepdim)

    def any(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        return _up.ops.any(self, dim, keepdim)

    def logsumexp(self, dim: Any, keepdim: builtins.bool = False) -> Tensor:
        return _up.ops.logsumexp(self, dim, keepdim)

    def cumsum(self, dim: int, *, dtype: Any = None) -> Tensor:
        return _up.ops.cumsum(self, dim, dtype=dtype)

    # linear algebra
    def matmul(self, other: Tensor) -> Tensor:
        return _up.ops.matmul(self, other)

    def mm(self, other: Tensor) -> Tensor:
        return _up.ops.mm(self, other)

    def bmm(self, other: Tensor) -> Tensor:
        return _up.ops.bmm(self, other)

    def norm(
        self, p: Any = "fro", dim: Any = None, keepdim: builtins.bool = False, dtype: Any = None
    ) -> Tensor:
        return _up.ops.norm(self, p, dim, keepdim, dtype)

    def dot(self, other: Tensor) -> Tensor:
        return _up.ops.dot(self, other)

    def vdot(self, other: Tensor) -> Tensor:
        return _up.ops.vdot(self, other)

    def inner(self, other: Tensor) -> Tensor:
        return _up.ops.inner(self, other)

    def outer(self, vec2: Tensor) -> Tensor:
        return _up.ops.outer(self, vec2)

    def ger(self, vec2: Tensor) -> Tensor:
        return _up.ops.ger(self, vec2)

    def mv(self, vec: Tensor) -> Tensor:
        return _up.ops.mv(self, vec)

    def cross(self, other: Tensor, dim: Any = None) -> Tensor:
        return _up.ops.cross(self, other, dim)

    def dist(self, other: Tensor, p: Any = 2) -> Tensor:
        return _up.ops.dist(self, other, p)

    def matrix_power(self, n: int) -> Tensor:
        return _up.ops.matrix_power(self, n)

    def det(self) -> Tensor:
        return _up.ops.det(self)

    def logdet(self) -> Tensor:
        return _up.ops.logdet(self)

    def slogdet(self) -> Any:
        return _up.ops.slogdet(self)

    def inverse(self) -> Tensor:
        return _up.ops.inverse(self)

    def cholesky(self, upper: bool = False) -> Tensor:
        return _up.ops.cholesky(self, upper)

    def cholesky_solve(self, input2: Tensor, upper: bool = False) -> Tensor:
        return _up.ops.cholesky_solve(self, input2, upper)

    def cholesky_inverse(self, upper: bool = False) -> Tensor:
        return _up.ops.cholesky_inverse(self, upper)

    def qr(self, some: bool = True) -> Any:
        return _up.ops.qr(self, some)

    def svd(self, some: bool = True, compute_uv: bool = True) -> Any:
        return _up.ops.svd(self, some, compute_uv)

    def pinverse(self, rcond: float = 1e-15) -> Tensor:
        return _up.ops.pinverse(self, rcond)

    def matrix_exp(self) -> Tensor:
        return _up.ops.matrix_exp(self)

    def lu(self, pivot: bool = True, get_infos: bool = False) -> Any:
        return _up.ops.lu(self, pivot, get_infos)

    def lu_solve(self, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
        return _up.ops.lu_solve(self, LU_data, LU_pivots)

    def geqrf(self) -> Any:
        return _up.ops.geqrf(self)

    def orgqr(self, input2: Tensor) -> Tensor:
        return _up.ops.orgqr(self, input2)

    def ormqr(
        self, input2: Tensor, input3: Tensor, left: bool = True, transpose: bool = False
    ) -> Tensor:
        return _up.ops.ormqr(self, input2, input3, left, transpose)

    def triangular_solve(
        self, A: Tensor, upper: bool = True, transpose: bool = False, unitriangular: bool = False
    ) -> Any:
        return _up.ops.triangular_solve(self, A, upper, transpose, unitriangular)

    def addmm(self, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _up.ops.addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def addmv(self, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _up.ops.addmv(self, mat, vec, beta=beta, alpha=alpha)

    def addr(self, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _up.ops.addr(self, vec1, vec2, beta=beta, alpha=alpha)

    def baddbmm(self, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _up.ops.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def addbmm(self, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _up.ops.addbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def addmm_(self, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _up.ops.addmm_(self, mat1, mat2, beta=beta, alpha=alpha)

    def addmv_(self, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _up.ops.addmv_(self, mat, vec, beta=beta, alpha=alpha)

    def addr_(self, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _up.ops.addr_(self, vec1, vec2, beta=beta, alpha=alpha)

    def baddbmm_(self, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _up.ops.baddbmm_(self, batch1, batch2, beta=beta, alpha=alpha)

    def addbmm_(self, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _up.ops.addbmm_(self, batch1, batch2, beta=beta, alpha=alpha)
