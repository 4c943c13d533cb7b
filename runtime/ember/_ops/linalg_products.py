"""Vector and matrix products beyond matmul (dot, vdot, inner, outer/ger, mv, the add*mm
family, cross, dist, vecdot, multi_dot, matrix_power): composites of matmul and
elementwise ops, so every device computes them and autograd flows through their parts."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from ember._ops import conversion as conv
from ember._ops import creation
from ember._ops import elementwise as ew
from ember._ops import linalg as lin
from ember._ops import reduction as red
from ember._ops import shape as sh
from ember._ops._meta import broadcast_shapes
from ember._ops._surface import E
from ember._ops.norms import vector_norm
from ember._tensor import Tensor

# Top level names; vecdot and multi_dot live in ember.linalg only, as in PyTorch.
__all__ = [
    "addbmm", "addmm", "addmv", "addr", "baddbmm", "cross", "dist", "dot", "ger", "inner",
    "matrix_power", "mv", "outer", "vdot",
]  # fmt: skip


def _check_1d(op: str, a: Tensor, b: Tensor) -> None:
    if len(a._shape) != 1 or len(b._shape) != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {len(a._shape)}D and {len(b._shape)}D tensors"
        )
    if a._shape != b._shape:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a._shape[0]}] and src "
            f"[{b._shape[0]}] to have the same number of elements, but got "
            f"{a._shape[0]} and {b._shape[0]} elements respectively"
        )


def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """Inner product of two 1-D tensors of the same size."""
    _check_1d("dot", input, tensor)
    return lin.matmul(input, tensor)


def vdot(input: Tensor, other: Tensor) -> Tensor:
    """dot with the first operand conjugated (the same for real tensors)."""
    return dot(input, other)


def inner(input: Tensor, other: Tensor) -> Tensor:
    """Sum over the last dims of the product; a scalar operand multiplies."""
    if len(input._shape) == 0 or len(other._shape) == 0:
        return ew.mul(input, other)
    if input._shape[-1] != other._shape[-1]:
        raise RuntimeError(
            f"inner() the last dimension must match on both input tensors but got shapes "
            f"{list(input._shape)} and {list(other._shape)}"
        )
    if len(other._shape) == 1:
        return lin.matmul(input, other)
    rows = sh.reshape(other, (-1, other._shape[-1]))
    product = lin.matmul(input, sh.transpose(rows, 0, 1))
    return sh.reshape(product, (*input._shape[:-1], *other._shape[:-1]))


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """The outer product of two 1-D tensors."""
    if len(input._shape) != 1 or len(vec2._shape) != 1:
        raise RuntimeError(
            f"outer: expected 1D tensors, got {len(input._shape)}D and {len(vec2._shape)}D"
        )
    return ew.mul(sh.unsqueeze(input, 1), sh.unsqueeze(vec2, 0))


def ger(input: Tensor, vec2: Tensor) -> Tensor:
    """The older name of outer."""
    return outer(input, vec2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix (n, m) times vector (m,)."""
    if len(input._shape) != 2 or len(vec._shape) != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got {len(input._shape)}, {len(vec._shape)}"
        )
    if input._shape[1] != vec._shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({input._shape[0]}), mat ({input._shape[0]}x"
            f"{input._shape[1]}), vec ({vec._shape[0]})"
        )
    return lin.matmul(input, vec)


def _scaled_sum(base: Tensor, product: Tensor, beta: Any, alpha: Any) -> Tensor:
    """beta * base + alpha * product; beta == 0 ignores base (NaN and inf included)."""
    if alpha != 1:
        product = ew.mul(product, alpha)
    if beta == 0:
        return _broadcast_to(product, base)
    if beta != 1:
        base = ew.mul(base, beta)
    return ew.add(base, product)


def _broadcast_to(product: Tensor, base: Tensor) -> Tensor:
    # The result has product's shape; base only has to broadcast to it.
    sh.expand(base, product._shape)
    return product


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2)."""
    return _scaled_sum(input, lin.mm(mat1, mat2), beta, alpha)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * input + alpha * (mat @ vec)."""
    return _scaled_sum(input, mv(mat, vec), beta, alpha)


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * input + alpha * outer(vec1, vec2)."""
    return _scaled_sum(input, outer(vec1, vec2), beta, alpha)


def baddbmm(
    input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1
) -> Tensor:
    """beta * input + alpha * bmm(batch1, batch2)."""
    return _scaled_sum(input, lin.bmm(batch1, batch2), beta, alpha)


def addbmm(
    input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1
) -> Tensor:
    """beta * input + alpha * the sum over the batch of bmm(batch1, batch2)."""
    return _scaled_sum(input, red.sum(lin.bmm(batch1, batch2), 0), beta, alpha)


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """torch.cross: the 3-D cross product along dim (by default the first dim of size 3)."""
    if dim is None:
        warnings.warn(
            "Using ember.cross without specifying the dim arg is deprecated.\nPlease either "
            "pass the dim explicitly or simply use ember.linalg.cross.",
            UserWarning,
            stacklevel=2,
        )
        shape = input._shape if len(input._shape) >= len(other._shape) else other._shape
        dim = next((d for d, size in enumerate(shape) if size == 3), -1)
    return linalg_cross(input, other, dim=dim)


def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """torch.linalg.cross: the 3-D cross product along dim, with broadcasting."""
    if len(input._shape) != len(other._shape):
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if input._shape != other._shape:
        shape = broadcast_shapes("linalg.cross", input._shape, other._shape)
        input, other = sh.expand(input, shape), sh.expand(other, shape)
    d = dim
    if len(input._shape) == 0 or input._shape[d] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {d} must have length 3. Got "
            f"{input._shape[d] if input._shape else 0} and {other._shape[d] if other._shape else 0}"
        )
    a = [sh.select(input, d, i) for i in range(3)]
    b = [sh.select(other, d, i) for i in range(3)]
    parts = [
        ew.sub(ew.mul(a[1], b[2]), ew.mul(a[2], b[1])),
        ew.sub(ew.mul(a[2], b[0]), ew.mul(a[0], b[2])),
        ew.sub(ew.mul(a[0], b[1]), ew.mul(a[1], b[0])),
    ]
    return sh.stack(parts, d)


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The p-norm of input - other."""
    return vector_norm(ew.sub(input, other), p)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product of x and y along dim, with broadcasting."""
    return red.sum(ew.mul(x, y), dim)


def multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """A chain of matrix products; the first and last operands may be 1-D."""
    matrices = list(tensors)
    if len(matrices) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(matrices)}")
    result = matrices[0]
    for matrix in matrices[1:]:
        result = lin.matmul(result, matrix)
    return result


def matrix_power(A: Tensor, n: int) -> Tensor:
    """A to the integer power n by repeated squaring (batched); n < 0 powers A⁻¹."""
    if len(A._shape) < 2 or A._shape[-1] != A._shape[-2]:
        rows, cols = A._shape[-2:] if len(A._shape) > 1 else (0, 0)
        raise RuntimeError(
            "linalg.matrix_power: A must be batches of square matrices, but they are "
            f"{rows} by {cols} matrices"
        )
    if n < 0:
        return matrix_power(E.linalg.inv(A), -n)  # the solvers build on this module
    size = A._shape[-1]
    result: Tensor | None = None
    base = A
    while n:
        if n & 1:
            result = base if result is None else lin.matmul(result, base)
        n >>= 1
        if n:
            base = lin.matmul(base, base)
    if result is None:
        # A**0 is the identity even where A holds inf or NaN, as in PyTorch.
        eye = creation.eye(size, dtype=A._dtype, device=A._device)
        return conv.clone(sh.expand(eye, A._shape))
    return result
