"""Helpers shared by the distributions: broadcasting parameters, probabilities and
logits, cached properties (as torch.distributions.utils)."""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

from ember import _dtype
from ember import _ops as ops
from ember._dtype_info import finfo
from ember._tensor import Tensor
from ember.autograd import enable_grad
from ember.nn import functional as F

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "euler_constant",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """Tensors and numbers broadcast to one shape; numbers become tensors of the tensors'
    dtype and device (the default dtype when there is no tensor)."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError(
            "Input arguments must all be instances of numbers.Number, ember.Tensor or "
            "objects implementing __torch_function__."
        )
    if not all(isinstance(v, Tensor) for v in values):
        like = next((v for v in values if isinstance(v, Tensor)), None)
        dtype = _dtype.get_default_dtype() if like is None else like.dtype
        device = None if like is None else like.device
        values = tuple(
            v if isinstance(v, Tensor) else ops.tensor(v, dtype=dtype, device=device)
            for v in values
        )
    return tuple(ops.broadcast_tensors(*values))


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum out the `dim` rightmost dims."""
    if dim == 0:
        return value
    return value.reshape(*value.shape[: value.dim() - dim], -1).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from logits: sigmoid when binary, softmax over the last dim otherwise."""
    if is_binary:
        return ops.sigmoid(logits)
    return F.softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities clamped to [eps, 1 - eps] of their dtype."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Logits from probabilities (clamped away from 0 and 1 first)."""
    clamped = clamp_probs(probs)
    if is_binary:
        return clamped.log() - (-clamped).log1p()
    return clamped.log()


class lazy_property:
    """A property computed once per instance on first access, then stored as an attribute
    (so `probs` and `logits` derive from each other only when asked)."""

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower triangle (below diagonal `diag`) of the last two dims, row by row."""
    n = mat.shape[-1]
    if not -n <= diag < n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, columns = ops.tril_indices(n, n, offset=diag).unbind(0)
    return mat[..., rows, columns]


def _tril_count(n: int, diag: int) -> int:
    return sum(max(0, min(n, i + diag + 1)) for i in range(n))


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of tril_matrix_to_vec: a (..., n, n) lower-triangular matrix."""
    m = vec.shape[-1]
    n = 1
    while _tril_count(n, diag) < m:
        n += 1
    if _tril_count(n, diag) != m:
        raise ValueError(
            f"The size of last dimension is {m} which cannot be expressed as the lower "
            "triangular part of a square D x D matrix."
        )
    rows, columns = ops.tril_indices(n, n, offset=diag).unbind(0)
    flat_index = (rows * n + columns).to(_dtype.int64)
    out = ops.zeros(*vec.shape[:-1], n * n, dtype=vec.dtype, device=vec.device)
    index = flat_index.expand(*vec.shape[:-1], m)
    return out.scatter(-1, index, vec).reshape(*vec.shape[:-1], n, n)


def _standard_normal(shape: Any, like: Tensor) -> Tensor:
    """N(0, 1) noise of `shape` in `like`'s dtype and device (from the default generator)."""
    return ops.randn(*shape, dtype=like.dtype, device=like.device)


def _uniform(shape: Any, like: Tensor) -> Tensor:
    """U[0, 1) noise of `shape` in `like`'s dtype and device."""
    return ops.rand(*shape, dtype=like.dtype, device=like.device)
