"""Fused softmax and log-softmax kernels of the OpenCL device (see cl/softmax.cl).

Registered under the names of the composite ops of ember.nn.functional._activation, they
replace its six-op composition; the runtime still records the derivative around them. The
rows along `dim` are planned like the reductions' walks along one dim
(_reduce_geometry.line_geometry), one work item per row, or a few long rows split in chunks;
tensors are read through their public API.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Final

import numpy as np

import ember
import ember.nn.functional
from ember.plugins.sdk import KernelRegistry, Tensor
from ember_opencl._launch import mem, prelude
from ember_opencl._reduce_geometry import (
    PLANS,
    Plan,
    line_geometry,
    line_plan,
    remember,
    run_line_plan,
    source,
)

Kernel = Callable[[Tensor, Tensor, int], None]
_KERNELS: Final = ("softmax_rows", "softmax_split", "softmax_split_write")

__all__ = ["register"]


def _vectors(dt: ember.dtype) -> str:
    """Defines for 256-bit vectors of the compute type (PoCL mishandles wider ones)."""
    if dt is ember.float64:
        width, vector, load, store = 4, "double4", "vload4(0, (p) + (i))", "vstore4"
    elif dt is ember.float16:
        width, vector, load, store = 8, "float8", "vload_half8(0, (p) + (i))", "vstore_half8_rte"
    else:
        width, vector, load, store = 8, "float8", "vload8(0, (p) + (i))", "vstore8"
    return (
        f"#define VW {width}\n#define A_V {vector}\n#define A_LOADV(p, i) {load}\n"
        f"#define A_STOREV(p, i, v) {store}((v), 0, (p) + (i))\n"
        f"#define C_STOREV(v, t) vstore{width}((v), 0, (t))\n"
    )


@functools.cache
def _softmax_source(dt: ember.dtype, log_out: int) -> str:
    return source("softmax.cl", prelude(dt, "A") + _vectors(dt) + f"#define LOG_OUT {log_out}\n")


def _plan(log_out: int, out: Tensor, a: Tensor, dim: int) -> Plan:
    if not a.dtype.is_floating_point:
        raise RuntimeError(f"softmax expects a floating dtype, got {a.dtype.name}")
    shape, a_strides, out_strides = a.shape, a.stride(), out.stride()
    kept = [(n, a_strides[d], out_strides[d]) for d, n in enumerate(shape) if d != dim and n != 1]
    walked = (shape[dim], a_strides[dim], out_strides[dim]) if shape else (1, 0, 0)
    # split rows leave a (maximum, sum of exponentials) pair per chunk
    return line_plan(
        a.device, _softmax_source(a.dtype, log_out), _KERNELS, line_geometry(kept, walked),
        finish_per_chunk=True, slots=2,
    )  # fmt: skip


def _softmax(name: str, log_out: int) -> Kernel:
    def run(out: Tensor, a: Tensor, dim: int) -> None:
        dev = a.device
        key = (name, a.dtype, a.shape, a.stride(), out.stride(), dim, dev)
        plan = PLANS.get(key) or remember(key, _plan(log_out, out, a, dim))
        out_off, a_off = np.int64(out.storage_offset()), np.int64(a.storage_offset())
        run_line_plan(dev, plan, mem(out), out_off, mem(a), a_off)

    run.__name__ = run.__qualname__ = f"opencl_{name}"
    run.__doc__ = f"{name}(out, a, dim) on the opencl device: a floating, out of a's shape."
    return run


def register(registry: KernelRegistry) -> None:
    """Register the fused softmax and log_softmax kernels for the opencl device."""
    registry.register("softmax", "opencl", _softmax("softmax", 0))
    registry.register("log_softmax", "opencl", _softmax("log_softmax", 1))
