"""Adaptive pooling beyond adaptive_avg_pool2d: avg 1d/3d, max 1d/2d/3d (with indices).

PyTorch's adaptive window i along a dim of size n -> m covers [floor(i n / m),
ceil((i + 1) n / m)). Windows differ in length by at most one, so each dim is gathered
into a fixed-width (m, width) block by index_select, padding a short window with copies of
its last element (harmless to a max, and argmax's first-occurrence rule still names the
real element) or with zero weight (for the mean). Autograd comes from the parts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ember import _dtype
from ember._ops import creation, indexing, reduction
from ember._tensor import Tensor
from ember.nn.functional._pool import adaptive_avg_pool2d

__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool3d",
    "adaptive_max_pool1d", "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices",
]  # fmt: skip

SizeArg = int | Sequence[int | None]


def _windows(n: int, m: int) -> tuple[list[list[int]], list[int]]:
    """(positions padded to a common width, true lengths) of the m adaptive windows."""
    starts = [(i * n) // m for i in range(m)]
    ends = [math.ceil((i + 1) * n / m) for i in range(m)]
    width = max(e - s for s, e in zip(starts, ends, strict=True))
    rows = [[min(s + k, e - 1) for k in range(width)] for s, e in zip(starts, ends, strict=True)]
    return rows, [e - s for s, e in zip(starts, ends, strict=True)]


def _sizes(name: str, input: Tensor, output_size: SizeArg, spatial: int) -> list[int]:
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(
            f"{name}(): Expected {spatial + 1}D or {spatial + 2}D tensor, but got "
            f"{list(input.shape)}"
        )
    sizes = [output_size] * spatial if isinstance(output_size, int) else list(output_size)
    if len(sizes) != spatial:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {spatial}")
    dims = input.shape[-spatial:]
    out = [dims[i] if v is None else int(v) for i, v in enumerate(sizes)]
    for i in range(input.ndim - spatial, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {list(input.shape)} with dimension {i} being empty"
            )
    if min(out) < 0:
        raise RuntimeError(f"{name}(): elements of output_size must be >= 0, got {out}")
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"\"{name}\" not implemented for '{input._dtype.name}'")
    return out


def _gather_windows(x: Tensor, dim: int, rows: list[list[int]]) -> Tensor:
    """x with dim (size n) replaced by (m, width) window dims."""
    flat = [p for row in rows for p in row]
    index = creation.tensor(flat, dtype=_dtype.int64, device=x._device)
    picked = indexing.index_select(x, dim, index)
    shape = list(picked.shape)
    return picked.reshape(*shape[:dim], len(rows), len(rows[0]), *shape[dim + 1 :])


def _adaptive_avg(input: Tensor, out: list[int]) -> Tensor:
    result = input
    spatial = len(out)
    for k, m in enumerate(out):
        dim = input.ndim - spatial + k
        rows, lengths = _windows(input.shape[dim], m)
        width = len(rows[0])
        weights = [[1.0 / n if j < n else 0.0 for j in range(width)] for n in lengths]
        shape = [1] * (result.ndim + 1)
        shape[dim], shape[dim + 1] = m, width
        w = creation.tensor(weights, dtype=input._dtype, device=input._device).reshape(shape)
        result = reduction.sum(_gather_windows(result, dim, rows) * w, dim + 1)
    return result


def adaptive_avg_pool1d(input: Tensor, output_size: SizeArg) -> Tensor:
    """Mean over adaptive windows of (N, C, L) or (C, L) input."""
    sizes = _sizes("adaptive_avg_pool1d", input, output_size, 1)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, sizes[0])).squeeze(-2)


def adaptive_avg_pool3d(input: Tensor, output_size: SizeArg) -> Tensor:
    """Mean over adaptive windows of (N, C, D, H, W) or (C, D, H, W) input."""
    return _adaptive_avg(input, _sizes("adaptive_avg_pool3d", input, output_size, 3))


def _adaptive_max(name: str, input: Tensor, output_size: SizeArg, spatial: int) -> Any:
    out = _sizes(name, input, output_size, spatial)
    lead = input.ndim - spatial
    dims = list(input.shape[lead:])
    if min(out) == 0:
        shape = (*input.shape[:lead], *out)
        empty = creation.zeros(shape, dtype=input._dtype, device=input._device)
        return empty, creation.zeros(shape, dtype=_dtype.int64, device=input._device)
    x = input
    tables: list[list[list[int]]] = []
    for k, m in enumerate(out):
        rows, _ = _windows(dims[k], m)
        tables.append(rows)
        x = _gather_windows(x, lead + 2 * k, rows)
    # (*lead, m0, w0, m1, w1, ...) -> (*lead, m0, m1, ..., w0 * w1 * ...)
    order = [*range(lead), *(lead + 2 * k for k in range(spatial))]
    order += [lead + 2 * k + 1 for k in range(spatial)]
    window = math.prod(len(t[0]) for t in tables)
    x = x.permute(*order).reshape(*input.shape[:lead], *out, window)
    values, local = reduction.max(x, -1)
    flat = _flat_positions(tables, dims)
    table = creation.tensor(flat, dtype=_dtype.int64, device=input._device).reshape(*out, window)
    table = table.expand(*input.shape[:lead], *out, window)
    indices = indexing.gather(table, -1, local.unsqueeze(-1)).squeeze(-1)
    return values, indices


def _flat_positions(tables: list[list[list[int]]], dims: list[int]) -> list[int]:
    """For each output cell and window slot, the input's flat spatial index (row-major)."""
    stride = math.prod(dims)
    result: list[list[int]] = [[0]]
    for rows, n in zip(tables, dims, strict=True):
        stride //= n
        result = [
            [base + p * stride for base in prev for p in row] for prev in result for row in rows
        ]
    # result is ordered (m0, m1, ...) with slots ordered (w0, w1, ...): row-major, as needed.
    return [p for cell in result for p in cell]


def adaptive_max_pool1d_with_indices(
    input: Tensor, output_size: SizeArg, return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """(max, flat index) over adaptive windows of (N, C, L) or (C, L) input."""
    result: tuple[Tensor, Tensor] = _adaptive_max("adaptive_max_pool1d", input, output_size, 1)
    return result


def adaptive_max_pool2d_with_indices(
    input: Tensor, output_size: SizeArg, return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """(max, flat index in the H x W plane) over adaptive windows."""
    result: tuple[Tensor, Tensor] = _adaptive_max("adaptive_max_pool2d", input, output_size, 2)
    return result


def adaptive_max_pool3d_with_indices(
    input: Tensor, output_size: SizeArg, return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """(max, flat index in the D x H x W volume) over adaptive windows."""
    result: tuple[Tensor, Tensor] = _adaptive_max("adaptive_max_pool3d", input, output_size, 3)
    return result


def adaptive_max_pool1d(input: Tensor, output_size: SizeArg, return_indices: bool = False) -> Any:
    """Max over adaptive windows of (N, C, L) or (C, L) input."""
    values, indices = adaptive_max_pool1d_with_indices(input, output_size)
    return (values, indices) if return_indices else values


def adaptive_max_pool2d(input: Tensor, output_size: SizeArg, return_indices: bool = False) -> Any:
    """Max over adaptive windows of (N, C, H, W) or (C, H, W) input."""
    values, indices = adaptive_max_pool2d_with_indices(input, output_size)
    return (values, indices) if return_indices else values


def adaptive_max_pool3d(input: Tensor, output_size: SizeArg, return_indices: bool = False) -> Any:
    """Max over adaptive windows of (N, C, D, H, W) or (C, D, H, W) input."""
    values, indices = adaptive_max_pool3d_with_indices(input, output_size)
    return (values, indices) if return_indices else values
