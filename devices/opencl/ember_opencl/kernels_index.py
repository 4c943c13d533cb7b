"""Indexing kernels of the OpenCL device (see cl/index.cl).

index_select, gather, scatter_, scatter_add_, take, index_put_ and nonzero, for every
dtype and any strides, with the CPU device's results: scatter_/scatter_add_ run one work
item per line along `dim` (in order, so duplicates resolve as on the CPU, bit for bit),
index_put_ lets the last duplicate win through a claim pass, and accumulating index_put_
adds with atomics (compare-and-swap on the containing 32-bit word for 1- and 2-byte
dtypes). Where atomics cannot be used (no cl_khr_int64_base_atomics for int64/float64, a
buffer not sized in whole 32-bit words) or the target overlaps itself, one work item does
the whole op in the CPU's order instead. The runtime range-checks indices beforehand.
The element functions (addressing, accumulation, nonzero's walk) are the shared
`em_index.h` of `ember.plugins.kernels`.
"""

from __future__ import annotations

import struct
from functools import cache
from importlib import resources
from math import prod
from typing import Any, Final

import numpy as np

import ember
from ember.plugins import kernels, ops
from ember.plugins.sdk import (
    KernelRegistry,
    Tensor,
    current_native_stream,
    device_index,
    merge_dims,
)
from ember_opencl._launch import GEOMETRY_C, MAX_DIMS, at, ctype, geometry, kernel, launch, mem
from ember_opencl.backend import BACKEND

__all__ = [
    "gather",
    "index_put_",
    "index_select",
    "nonzero",
    "register",
    "scatter_",
    "scatter_add_",
    "take",
]

_TEMPLATE: Final = (resources.files("ember_opencl") / "cl" / "index.cl").read_text()
_MOVE: Final = {1: "uchar", 2: "ushort", 4: "uint", 8: "ulong"}  # plain copies by item size
_SHAPE: Final = struct.Struct(f"{1 + 2 * MAX_DIMS}q")  # em_shape (EM_SHAPE_MAX_DIMS dims)
_WIDE: Final = (ember.int64.index, ember.float64.index)
_SUBWORD: Final = tuple(d.index for d in (ember.bool, ember.uint8, ember.int8, ember.float16))
_GRID: Final = 1 << 20  # most work items per launch; kernels loop past it
_SERIAL_PUT: Final = 4096  # index_put_ up to this many values: one work item, no claim pass
_CHUNK: Final = 256  # nonzero: fewest positions per chunk
_CHUNKS: Final = 4096  # nonzero: most chunks (the scan runs in one work group)
_SCAN_WIDTH: Final = 256  # the scan's work-group size (its __local array in index.cl)
_i64 = np.int64
_i32 = np.int32


@cache
def _source(move: str, element: str, dtype_code: int, atomic: bool, accumulate: bool) -> str:
    defines = f"#define EM_MOVE {move}\n#define EM_T {element}\n#define EM_DTYPE {dtype_code}\n"
    defines += f"#define EM_ATOMIC {int(atomic)}\n"
    if accumulate:
        defines += "#define EM_ACCUMULATE 1\n"
    return defines + kernels.source("em_index.h") + GEOMETRY_C + _TEMPLATE


def _mover(t: Tensor, name: str) -> Any:
    """Kernel `name` that moves elements of t's item size without looking at them."""
    move = _MOVE[t.dtype.itemsize]
    return kernel(t.device, _source(move, move, -1, False, False), name)


def _typed(t: Tensor, name: str, atomic: bool = False, accumulate: bool = False) -> Any:
    """Kernel `name` specialised for t's dtype (accumulation and nonzero)."""
    dt = t.dtype
    source = _source(_MOVE[dt.itemsize], ctype(dt), dt.index, atomic, accumulate)
    return kernel(t.device, source, name)


def _grid(n: int) -> tuple[int]:
    return (min(n, _GRID),)


def _flat_shape(shape: tuple[int, ...], strides: tuple[int, ...], merge: bool) -> bytes:
    """em_shape of a tensor read by row-major position; `merge` coalesces its dims (which
    keeps the positions but not the coordinates)."""
    dims = [(n, s, s) for n, s in zip(shape, strides, strict=True) if n != 1 or not merge]
    if merge:
        dims = merge_dims(dims)
    if len(dims) > MAX_DIMS:
        raise RuntimeError(f"opencl: indexing supports at most {MAX_DIMS} dims, got {len(dims)}")
    pad = [0] * (MAX_DIMS - len(dims))
    return _SHAPE.pack(len(dims), *(d[0] for d in dims), *pad, *(d[1] for d in dims), *pad)


def _overlaps_itself(t: Tensor) -> bool:
    """True unless t's elements provably sit at distinct addresses (strides are >= 0)."""
    reach = 0
    for s, n in sorted((s, n) for n, s in zip(t.shape, t.stride(), strict=True) if n > 1):
        if s <= reach:
            return True
        reach += s * (n - 1)
    return False


def _has_int64_atomics(t: Tensor) -> bool:
    return _int64_atomics(BACKEND.cl_device(device_index(t.device)))


@cache
def _int64_atomics(cl_device: Any) -> bool:
    return "cl_khr_int64_base_atomics" in cl_device.extensions.split()


# -- gather, index_select, take ----------------------------------------------------------


def _run_gather(
    out: Tensor, a: Tensor, index: Tensor, dim: int, index_strides: tuple[int, ...]
) -> None:
    shape = out.shape or (1,)
    a_strides = list(a.stride() or (0,))
    dstride = a_strides[dim]
    a_strides[dim] = 0
    n = prod(shape)
    g = geometry(shape, out.stride() or (0,), index_strides, tuple(a_strides))
    args = [*at(out), *at(index), *at(a)]
    launch(out.device, _mover(out, "em_gather"), _grid(n), [*args, _i64(dstride), g, _i64(n)])


def index_select(out: Tensor, a: Tensor, dim: int, index: Tensor) -> None:
    """index_select(out, a, dim, index): out = a with dim re-indexed by a 1-d int64 index."""
    ndim = max(len(out.shape), 1)
    step = index.stride()[0] if index.shape else 0
    index_strides = tuple(step if d == dim else 0 for d in range(ndim))
    _run_gather(out, a, index, dim, index_strides)


def gather(out: Tensor, a: Tensor, dim: int, index: Tensor) -> None:
    """gather(out, a, dim, index): out[p] = a[p with dim -> index[p]]; index has out's shape."""
    _run_gather(out, a, index, dim, index.stride() or (0,))


def take(out: Tensor, a: Tensor, index: Tensor) -> None:
    """take(out, a, index): out[p] = a.flatten()[index[p]] (row-major order of a's shape)."""
    shape = index.shape or (1,)
    n = prod(shape)
    g = geometry(shape, out.stride() or (0,), index.stride() or (0,))
    flat = _flat_shape(a.shape, a.stride(), merge=True)
    args = [*at(out), *at(index), *at(a)]
    launch(out.device, _mover(out, "em_take"), _grid(n), [*args, g, flat, _i64(n)])


# -- scatter_, scatter_add_ -------------------------------------------------------------


def _scatter(accumulate: bool, target: Tensor, dim: int, index: Tensor, src: Any) -> None:
    dev = target.device
    if not isinstance(src, Tensor):  # a Python scalar: a 0-d tensor read with zero strides
        src = ember.full((), src, dtype=target.dtype, device=dev)
    shape = index.shape or (1,)
    t_strides, i_strides = target.stride() or (0,), index.stride() or (0,)
    s_strides = src.stride() if len(src.stride()) == len(shape) else (0,) * len(shape)
    dstride = t_strides[dim]
    if _overlaps_itself(target):
        # Several elements share an address: only the CPU's full row-major order gives its
        # result, so one work item walks every element (the line is one element long).
        zeroed = tuple(0 if d == dim else s for d, s in enumerate(t_strides))
        g = geometry(shape, zeroed, i_strides, s_strides)
        lines, length, steps, grid = prod(shape), 1, (0, 0), (1,)
    else:
        keep = [d for d in range(len(shape)) if d != dim]
        outer = tuple(shape[d] for d in keep)
        g = geometry(outer, *(tuple(s[d] for d in keep) for s in (t_strides, i_strides, s_strides)))
        lines, length = prod(outer), shape[dim]
        steps, grid = (i_strides[dim], s_strides[dim]), _grid(prod(outer))
    if accumulate:
        k = _typed(target, "em_scatter", atomic=False, accumulate=True)
    else:
        k = _mover(target, "em_scatter")
    args = [*at(target), *at(index), *at(src), _i64(dstride), _i64(length), *map(_i64, steps)]
    launch(dev, k, grid, [*args, g, _i64(lines)])


def scatter_(target: Tensor, dim: int, index: Tensor, src: Tensor | complex) -> None:
    """scatter_(target, dim, index, src): target[p with dim -> index[p]] = src[p]."""
    _scatter(False, target, dim, index, src)


def scatter_add_(target: Tensor, dim: int, index: Tensor, src: Tensor | complex) -> None:
    """scatter_add_(target, dim, index, src): target[p with dim -> index[p]] += src[p]."""
    _scatter(True, target, dim, index, src)


# -- index_put_ ----------------------------------------------------------------------------


def _atomics_usable(target: Tensor) -> bool:
    code = target.dtype.index
    if code in _WIDE:
        return _has_int64_atomics(target)
    if code in _SUBWORD:
        # The compare-and-swap touches the whole 32-bit word around the element.
        return bool(mem(target).size % 4 == 0)
    return True


def index_put_(target: Tensor, index: Tensor, values: Tensor, accumulate: bool) -> None:
    """index_put_(target, index, values, accumulate): target.flatten()[index[i]] (+)= values[i]."""
    dev = target.device
    n = index.shape[0] if index.shape else 1
    flat = _flat_shape(target.shape, target.stride(), merge=True)
    head = [*at(target), flat, *at(index), _i64(index.stride()[0] if index.shape else 0)]
    head += [*at(values), _i64(values.stride()[0] if values.shape else 0)]
    if accumulate:
        atomic = _atomics_usable(target)
        k = _typed(target, "em_put_add", atomic=atomic, accumulate=True)
        launch(dev, k, _grid(n) if atomic else (1,), [*head, _i64(n)])
        return
    put = _mover(target, "em_put")
    if n <= _SERIAL_PUT or n >= 1 << 31 or _overlaps_itself(target):
        launch(dev, put, (1,), [*head, _i64(n), mem(index), _i32(1)])  # winner unused
        return
    positions = prod(target.shape)
    winner = ember.empty(positions, dtype=ember.int32, device=dev)
    fill, claim = _mover(target, "em_fill_int"), _mover(target, "em_put_claim")
    launch(dev, fill, _grid(positions), [mem(winner), _i32(-1), _i64(positions)])
    launch(dev, claim, _grid(n), [mem(winner), *head[3:6], _i64(n)])
    launch(dev, put, _grid(n), [*head, _i64(n), mem(winner), _i32(0)])


# -- nonzero -------------------------------------------------------------------------------


def nonzero(a: Tensor) -> Tensor:
    """nonzero(a): a new int64 tensor (n, a.ndim) of the non-zero positions, row-major."""
    dev, ndim = a.device, len(a.shape)
    numel = prod(a.shape)
    if numel == 0:
        return ember.empty((0, ndim), dtype=ember.int64, device=dev)
    chunk = max(_CHUNK, -(-numel // _CHUNKS))
    chunks = -(-numel // chunk)
    shape = _flat_shape(a.shape, a.stride(), merge=False)
    counts = ember.empty(chunks + 1, dtype=ember.int64, device=dev)
    head = [*at(a), shape, _i64(numel), _i64(chunk), _i64(chunks)]
    launch(dev, _typed(a, "em_nonzero_count"), (chunks,), [*head, mem(counts)])
    scan = _typed(a, "em_exclusive_scan")
    width = min(_SCAN_WIDTH, chunks)
    launch(dev, scan, (width,), [mem(counts), _i64(chunks)], local_size=(width,))
    # The one host wait of these kernels: the result's shape is the number of non-zeros,
    # which only the device knows. Read just that number (8 bytes) from the current stream.
    total = np.empty(1, np.int64)
    BACKEND.copy_to_host(
        mem(counts), chunks * 8, total, device_index(dev), current_native_stream(dev), False
    )
    count = int(total[0])
    out = ember.empty((count, ndim), dtype=ember.int64, device=dev)
    if count and ndim:
        fill = _typed(a, "em_nonzero_fill")
        launch(dev, fill, (chunks,), [*head, mem(counts), mem(out)])
    return out


def register(registry: KernelRegistry) -> None:
    """Register this family's kernels for the opencl device."""
    registry.register(ops.INDEX_SELECT, "opencl", index_select)
    registry.register(ops.GATHER, "opencl", gather)
    registry.register(ops.SCATTER, "opencl", scatter_)
    registry.register(ops.SCATTER_ADD, "opencl", scatter_add_)
    registry.register(ops.TAKE, "opencl", take)
    registry.register(ops.INDEX_PUT, "opencl", index_put_)
    registry.register(ops.NONZERO, "opencl", nonzero)
