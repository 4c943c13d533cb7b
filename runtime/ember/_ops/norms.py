"""Vector and matrix norms (torch.linalg.vector_norm / matrix_norm / norm and torch.norm),
composites of reductions so that every device computes them and autograd flows through
their parts."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ember import _dtype
from ember._ops import elementwise as ew
from ember._ops import reduction as red
from ember._ops import shape as sh
from ember._ops import unary
from ember._ops._surface import E
from ember._tensor import Tensor

# torch.norm is top level; the others live in ember.linalg.
__all__ = ["norm"]

DimArg = int | Sequence[int] | None


def _floating(op: str, x: Tensor, dtype: _dtype.dtype | None) -> Tensor:
    """x in its computing dtype: norms are defined for floating inputs only, as in PyTorch."""
    if dtype is not None:
        x = x.to(dtype)
    if not x._dtype.is_floating_point:
        raise RuntimeError(
            f"{op}: Expected a floating point or complex tensor as input. Got {_torch_name(x)}"
        )
    return x


def _torch_name(x: Tensor) -> str:
    """The dtype as PyTorch's error messages print it (Long, Int, ...)."""
    return red._TORCH_NAMES[x._dtype.name]


def vector_norm(
    x: Tensor,
    ord: float = 2,
    dim: DimArg = None,
    keepdim: bool = False,
    *,
    dtype: _dtype.dtype | None = None,
) -> Tensor:
    """The ord-norm of x over dim (all elements when dim is None), as a vector's norm."""
    x = _floating("linalg.vector_norm", x, dtype)
    dims: Any = () if dim is None else dim
    if x.numel() == 0 and (ord < 0 or ord == math.inf):
        raise RuntimeError(
            f"linalg.vector_norm cannot compute the {ord} norm on an empty tensor because "
            "the operation does not have an identity"
        )
    magnitude = unary.abs(x)
    if ord == math.inf:
        return red.amax(magnitude, dims, keepdim)
    if ord == -math.inf:
        return red.amin(magnitude, dims, keepdim)
    if ord == 0:
        return red.sum(ew.ne(x, 0).to(x._dtype), dims, keepdim)
    if ord == 1:
        return red.sum(magnitude, dims, keepdim)
    if ord == 2:
        return unary.sqrt(red.sum(ew.mul(x, x), dims, keepdim))
    return ew.pow(red.sum(ew.pow(magnitude, ord), dims, keepdim), 1.0 / ord)


def _matrix_dims(op: str, x: Tensor, dim: tuple[int, int]) -> tuple[int, int]:
    if len(x._shape) < 2:
        raise RuntimeError(
            f"{op}: The input tensor A must have at least 2 dimensions, got {len(x._shape)}-D"
        )
    rows, cols = (d % len(x._shape) for d in dim)
    if rows == cols:
        raise RuntimeError(f"{op}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return rows, cols


def matrix_norm(
    A: Tensor,
    ord: str | float = "fro",
    dim: tuple[int, int] = (-2, -1),
    keepdim: bool = False,
    *,
    dtype: _dtype.dtype | None = None,
) -> Tensor:
    """The ord-norm of the matrices in A's dims dim: 'fro', 1, -1, inf and -inf."""
    A = _floating("linalg.matrix_norm", A, dtype)
    rows, cols = _matrix_dims("linalg.matrix_norm", A, dim)
    if ord == "fro":
        return vector_norm(A, 2, (rows, cols), keepdim)
    if ord in (1, -1, math.inf, -math.inf):
        # 1: the largest column sum of |A|; inf: the largest row sum.
        summed, other = (rows, cols) if ord in (1, -1) else (cols, rows)
        sums = red.sum(unary.abs(A), summed, True)
        extreme = red.amax if ord in (1, math.inf) else red.amin
        result = extreme(sums, other, True)
        if not keepdim:
            result = result.squeeze((rows, cols))
        return result
    if ord in ("nuc", 2, -2):
        return _spectral_norm(A, ord, rows, cols, keepdim)
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def _spectral_norm(A: Tensor, ord: str | float, rows: int, cols: int, keepdim: bool) -> Tensor:
    """nuc (the sum), 2 (the largest) and -2 (the smallest) of the singular values."""
    # E.linalg: the decompositions build on this module, so svdvals resolves at call time
    values = E.linalg.svdvals(sh.movedim(A, (rows, cols), (-2, -1)))
    if ord == "nuc":
        result = red.sum(values, -1)
    else:
        result = (red.amax if ord == 2 else red.amin)(values, -1)
    if keepdim:
        for d in sorted((rows, cols)):
            result = sh.unsqueeze(result, d)
    return result


def linalg_norm(
    A: Tensor,
    ord: str | float | None = None,
    dim: DimArg = None,
    keepdim: bool = False,
    *,
    dtype: _dtype.dtype | None = None,
) -> Tensor:
    """torch.linalg.norm: a vector norm for 1-D dims, a matrix norm for 2-D ones."""
    if isinstance(ord, str) or (dim is not None and not isinstance(dim, int) and len(dim) == 2):
        if dim is None:
            dim = (-2, -1)
        return matrix_norm(A, "fro" if ord is None else ord, tuple(dim), keepdim, dtype=dtype)  # type: ignore[arg-type]
    if ord is not None and dim is None and len(A._shape) == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if ord is not None and dim is None and len(A._shape) != 1:
        raise RuntimeError(
            f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
            f"Got {len(A._shape)}D."
        )
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def norm(
    input: Tensor,
    p: str | float | None = "fro",
    dim: DimArg = None,
    keepdim: bool = False,
    dtype: _dtype.dtype | None = None,
) -> Tensor:
    """torch.norm: 'fro' over any dims is the 2-norm of their elements; numbers are vector
    norms over dim (all elements by default)."""
    if p == "nuc":
        pair = (-2, -1) if dim is None or isinstance(dim, int) else (int(dim[0]), int(dim[1]))
        return matrix_norm(input, "nuc", pair, keepdim, dtype=dtype)
    if p is None or p == "fro":
        p = 2
    if isinstance(p, str):
        raise RuntimeError(f"norm: invalid norm type {p!r}")
    return vector_norm(input, p, dim, keepdim, dtype=dtype)
