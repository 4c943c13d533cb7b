"""Random kernels of the OpenCL device (see cl/random.cl): uniform_, normal_, random_,
randperm_.

Philox4x32-10 from em_random.h (ember.plugins.kernels), which the CPU compiles too, so a
seed and offset give the CPU's numbers: bit for bit for uniform_, random_ and randperm_;
normal_ goes through the device's log and cos, which may differ from the C library's in
the last bits. randperm_ is the stable argsort of n Philox keys, computed with a bitonic
sort of (key, index) pairs: the same permutation as the CPU's radix sort, in parallel.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any, Final

import numpy as np
import pyopencl as cl

import ember
from ember.plugins import kernels, ops
from ember.plugins.sdk import KernelRegistry, Tensor, device_index
from ember_opencl._launch import GEOMETRY_C, at, ctype, geometry, kernel, launch, mem
from ember_opencl.backend import BACKEND

__all__ = ["normal_", "random_", "randperm_", "register", "uniform_"]

# Contraction off ahead of the shared source too: only its explicit fma() calls fuse.
_SHARED: Final = "#pragma OPENCL FP_CONTRACT OFF\n" + kernels.source("em_random.h")
_TEMPLATE: Final = _SHARED + (resources.files("ember_opencl") / "cl" / "random.cl").read_text()
_U64: Final = (1 << 64) - 1
_GRID: Final = 1 << 20  # most work items per launch; kernels loop past it
_SORT_GROUP: Final = 256  # bitonic sort: work-group size of the in-segment steps
_i64 = np.int64
_u32 = np.uint32
_u64 = np.uint64


@cache
def _source(element: str, dtype_code: int) -> str:
    return f"{GEOMETRY_C}#define EM_T {element}\n#define EM_DTYPE {dtype_code}\n{_TEMPLATE}"


def _kernel(t: Tensor, name: str) -> Any:
    dt = t.dtype
    return kernel(t.device, _source(ctype(dt), dt.index), name)


def _run(t: Tensor, name: str, seed: int, offset: int, extra: list[Any]) -> None:
    """Launch the elementwise random kernel `name` over t's logical elements."""
    n = 1
    for size in t.shape:
        n *= size
    seed &= _U64
    args = [
        mem(t),
        _i64(t.storage_offset()),
        geometry(t.shape or (1,), t.stride() or (0,)),
        _i64(n),
    ]
    args += [_u32(seed & 0xFFFF_FFFF), _u32(seed >> 32), _u64(offset & _U64), *extra]
    launch(t.device, _kernel(t, name), (min(n, _GRID),), args)


def _scalar(t: Tensor, value: float) -> Any:
    """A bound at the kernel's width: float64 for float64, float32 (rounded) otherwise."""
    return np.float64(value) if t.dtype is ember.float64 else np.float32(value)


def uniform_(t: Tensor, low: float, high: float, seed: int, offset: int) -> None:
    """t = uniform samples in [low, high) from counters offset, offset + 1, ..."""
    _run(t, "em_uniform", seed, offset, [_scalar(t, low), _scalar(t, high)])


def normal_(t: Tensor, mean: float, std: float, seed: int, offset: int) -> None:
    """t = normal samples (Box-Muller) from counters offset, offset + 1, ..."""
    _run(t, "em_normal", seed, offset, [_scalar(t, mean), _scalar(t, std)])


def random_(t: Tensor, low: int, high: int, seed: int, offset: int) -> None:
    """t = integers uniform in [low, high), any dtype."""
    if not (-(1 << 63) <= low < 1 << 63 and low < high and high - low <= 1 << 64):
        raise RuntimeError(f"random_: bounds [{low}, {high}) are outside the int64 range")
    _run(t, "em_random", seed, offset, [_i64(low), _u64((high - low) & _U64)])


# -- randperm_ -----------------------------------------------------------------------------


def _sort_group(t: Tensor, k: Any, pairs: int) -> int:
    """Work-group size of the in-segment steps: a power of two the device allows."""
    cl_device = BACKEND.cl_device(device_index(t.device))
    limit = min(_SORT_GROUP, pairs, cl_device.max_work_group_size)
    limit = min(limit, k.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, cl_device))
    group = 1
    while group * 2 <= limit:
        group *= 2
    return group


def randperm_(out: Tensor, seed: int, offset: int) -> None:
    """out (int64, 1-d) = a random permutation of 0..n-1: the argsort of n Philox keys."""
    if len(out.shape) != 1 or out.dtype is not ember.int64:
        raise RuntimeError("randperm_: expected a 1-d int64 output")
    n = out.shape[0]
    if n <= 0:
        return
    dev = out.device
    size = 2
    while size < n:
        size *= 2
    keys = ember.empty(size, dtype=ember.int64, device=dev)
    order = ember.empty(size, dtype=ember.int64, device=dev)
    seed &= _U64
    key_args = [_u32(seed & 0xFFFF_FFFF), _u32(seed >> 32), _u64(offset & _U64)]
    buffers = [mem(keys), mem(order)]
    launch(dev, _kernel(out, "em_randperm_keys"), (min(size, _GRID),),
           [*buffers, _i64(n), _i64(size), *key_args])  # fmt: skip
    local, step = _kernel(out, "em_bitonic_local"), _kernel(out, "em_bitonic_global")
    pairs = size // 2
    group = _sort_group(out, local, pairs)
    segment = 2 * group
    # Each work group sorts its own segment in one launch; longer merges need one launch
    # per step whose partners sit in different segments, then finish inside segments.
    launch(dev, local, (pairs,), [*buffers, _i64(2), _i64(segment)], local_size=(group,))
    merge = 2 * segment
    while merge <= size:
        distance = merge // 2
        while distance >= segment:
            launch(dev, step, (pairs,), [*buffers, _i64(merge), _i64(distance)])
            distance //= 2
        launch(dev, local, (pairs,), [*buffers, _i64(merge), _i64(merge)], local_size=(group,))
        merge *= 2
    store = _kernel(out, "em_randperm_store")
    launch(dev, store, (min(n, _GRID),),
           [*at(out), _i64(out.stride()[0]), mem(order), _i64(n)])  # fmt: skip


def register(registry: KernelRegistry) -> None:
    """Register this family's kernels for the opencl device."""
    registry.register(ops.UNIFORM, "opencl", uniform_)
    registry.register(ops.NORMAL, "opencl", normal_)
    registry.register(ops.RANDOM, "opencl", random_)
    registry.register(ops.RANDPERM, "opencl", randperm_)
