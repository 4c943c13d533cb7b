"""The structured initialisers of torch.nn.init: orthogonal_, sparse_, dirac_, and the
deprecated aliases without the trailing underscore that PyTorch still exports."""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from typing import Any

from ember._ops import elementwise as ew
from ember._ops import linalg, random, unary
from ember._ops.creation import empty, zeros
from ember._ops.reduction import sum as reduce_sum
from ember._tensor import Tensor
from ember.autograd._mode import no_grad

__all__ = ["deprecated_alias", "dirac_", "orthogonal_", "sparse_"]


def _orthonormal_rows(matrix: Tensor) -> Tensor:
    """Q with orthonormal rows spanning `matrix`'s rows (n x m, n <= m), by classical
    Gram-Schmidt applied twice per row ("CGS2", as stable as Householder for full-rank input).

    Each row's R diagonal is its positive norm, so this is the QR whose R has a positive
    diagonal: PyTorch's `q * sign(diag(r))`, which makes Q Haar-distributed for Gaussian input.
    A private composite so that init works standalone; it can switch to ember.linalg.qr
    (Q, R = qr(matrix.T); Q *= sign(diag(R))) once that lands.
    """
    rows = matrix.shape[0]
    q = zeros(tuple(matrix.shape), dtype=matrix.dtype, device=matrix.device)
    for j in range(rows):
        v = matrix[j].clone()
        if j > 0:
            basis = q[:j]
            for _ in range(2):
                coefficients = linalg.matmul(basis, v)
                v = ew.sub(v, linalg.matmul(coefficients, basis))
        v = ew.div(v, unary.sqrt(reduce_sum(ew.mul(v, v))))
        q[j] = v
    return q


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Any = None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix, uniform over the orthogonal group, times `gain`.

    Dimensions after the first are flattened; the rows (or columns, if fewer) are orthonormal.
    """
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with no_grad():
        flattened = random.normal_(
            empty((rows, cols), dtype=tensor.dtype, device=tensor.device), 0.0, 1.0,
            generator=generator,
        )  # fmt: skip
        if rows <= cols:
            q = _orthonormal_rows(flattened)
        else:
            q = _orthonormal_rows(flattened.t().contiguous()).t()
        tensor.copy_(ew.mul(q, gain).reshape(tuple(tensor.shape)))
    return tensor


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Any = None) -> Tensor:
    """Fill a 2-D tensor with N(0, std²) samples, then zero ceil(sparsity * rows) random
    entries of every column."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        random.normal_(tensor, 0.0, std, generator=generator)
        if num_zeros > 0:
            for col in range(cols):
                chosen = random.randperm(rows, generator=generator, device=tensor.device)
                tensor[chosen[:num_zeros], col] = 0.0
    return tensor


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-D convolution weight with the Dirac delta: each of the first
    min(out_channels / groups, in_channels) channels of a group passes its input through."""
    dimensions = tensor.ndim
    if dimensions not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    centre = tuple(size // 2 for size in sizes[2:])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min(out_per_group, sizes[1])):
                tensor[(g * out_per_group + d, d, *centre)] = 1.0
    return tensor


def deprecated_alias(method: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """`nn.init.x` for `nn.init.x_`: the same function with PyTorch's FutureWarning."""
    new_name = method.__name__
    old_name = new_name[:-1]

    @functools.wraps(method)
    def deprecated_init(*args: Any, **kwargs: Any) -> Tensor:
        warnings.warn(
            f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
            FutureWarning,
            stacklevel=2,
        )
        return method(*args, **kwargs)

    deprecated_init.__name__ = old_name
    deprecated_init.__qualname__ = old_name
    deprecated_init.__doc__ = f"Deprecated alias of `{new_name}`."
    return deprecated_init
