"""Sequences built from ranges and powers: logspace, range (inclusive, deprecated in
PyTorch), vander and combinations, as composites over arange, linspace, cumprod and
index_select."""

from __future__ import annotations

import builtins
import itertools
import math
import warnings
from typing import Any

from ember import _dtype
from ember._ops import conversion as conv
from ember._ops import creation, indexing, scan_composites
from ember._ops import elementwise as ew
from ember._ops import shape as shape_ops
from ember._tensor import Tensor

__all__ = ["combinations", "logspace", "range", "vander"]


def logspace(
    start: float,
    end: float,
    steps: int,
    base: float = 10.0,
    *,
    dtype: _dtype.dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """`steps` values base**x for x evenly spaced from `start` to `end` inclusive."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = dtype if dtype is not None else _dtype.get_default_dtype()
    exponents = creation.linspace(start, end, steps, dtype=_dtype.float64, device=device)
    values = ew.pow(float(base), exponents)
    if not dt.is_floating_point:
        values = ew.add(values, 0.5).floor() if float(base) > 0 else values  # exact powers
    out = conv.cast(values, dt)
    if requires_grad:
        out.requires_grad_(True)
    return out


def range(
    start: float = 0,
    end: float | None = None,
    step: float = 1,
    *,
    dtype: _dtype.dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """start, start + step, ... up to and including `end` (of the default float dtype
    unless `dtype` says otherwise). Deprecated, as in PyTorch: use arange."""
    warnings.warn(
        "torch.range is deprecated and will be removed in a future release because its "
        "behavior is inconsistent with Python's range builtin. Instead, use torch.arange, "
        "which produces values in [start, end).",
        UserWarning,
        stacklevel=2,
    )
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    dt = dtype if dtype is not None else _dtype.get_default_dtype()
    count = math.floor((end - start) / step) + 1
    positions = creation.arange(count, dtype=_dtype.float64, device=device)
    out = conv.cast(ew.add(ew.mul(positions, float(step)), float(start)), dt)
    if requires_grad:
        out.requires_grad_(True)
    return out


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of the 1-d `x`: columns x**(N-1), ..., x**0 (or ascending)."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    columns = x._shape[0] if N is None else N
    if columns < 0:
        raise RuntimeError("N must be non-negative.")
    source = x if x._dtype.is_floating_point else conv.cast(x, _dtype.int64)
    rows = source._shape[0]
    if columns == 0:
        return creation.zeros((rows, 0), dtype=source._dtype, device=x._device)
    ones = creation.ones((rows, 1), dtype=source._dtype, device=x._device)
    repeated = shape_ops.expand(shape_ops.reshape(source, rows, 1), rows, columns - 1)
    powers = scan_composites.cumprod(shape_ops.cat([ones, repeated], 1), 1)
    return powers if increasing else powers.flip(1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """Every length-`r` combination of the 1-d `input`'s elements, one per row (as
    itertools.combinations, or combinations_with_replacement)."""
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input._shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return creation.zeros((0,), dtype=input._dtype, device=input._device)
    n = input._shape[0]
    choose = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    # The positions depend only on n and r, so they are made on the host and uploaded once.
    rows = list(choose(builtins.range(n), r))
    if not rows:
        return creation.zeros((0, r), dtype=input._dtype, device=input._device)
    positions = creation.tensor(rows, dtype=_dtype.int64, device=input._device)
    picked = indexing.index_select(input, 0, shape_ops.reshape(positions, -1))
    return shape_ops.reshape(picked, len(rows), r)
