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

import numpy as np

import ember
import ember.nn.functional
from ember.plugins.sdk import KernelRegistry, Tensor
from ember_opencl._launch import kernel, mem, prelude
from ember_opencl._reduce_geometry import (
    PER_CHUNK,
    PER_OUTPUT,
    PLANS,
    Plan,
    enqueue,
    line_geometry,
    remember,
    scratch,
    sized,
    source,
    split_count,
)

Kernel = Callable[[Tensor, Tensor, int], None]

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
    geo = line_geometry(kept, walked)
    text = _softmax_source(a.dtype, log_out)
    nsplit = split_count(geo.lines, geo.n)
    dev, items = a.device, geo.lines * nsplit if geo.n else 0
    if nsplit == 1:
        main = sized(kernel(dev, text, "softmax_rows"), items, PER_OUTPUT)
        return Plan(main, None, False, geo.packed, 0, geo.n, nsplit, ember.float64)
    main = sized(kernel(dev, text, "softmax_split"), items, PER_CHUNK)
    finish = sized(kernel(dev, text, "softmax_split_write"), items, PER_CHUNK)
    # a (maximum, sum of exponentials) pair per chunk
    return Plan(main, finish, False, geo.packed, 2 * items, geo.n, nsplit, ember.float64)


def _softmax(name: str, log_out: int) -> Kernel:
    def run(out: Tensor, a: Tensor, dim: int) -> None:
        dev = a.device
        key = (name, a.dtype, a.shape, a.stride(), out.stride(), dim, dev)
        plan = PLANS.get(key) or remember(key, _plan(log_out, out, a, dim))
        out_off, a_off = np.int64(out.storage_offset()), np.int64(a.storage_offset())
        n = np.int64(plan.length)
        if plan.finish is None:
            enqueue(dev, plan.main, [mem(out), out_off, mem(a), a_off, plan.packed, n])
            return
        part = scratch(dev, plan.partials, ember.float64)
        nsplit = np.int64(plan.nsplit)
        enqueue(dev, plan.main, [mem(part), mem(a), a_off, plan.packed, n, nsplit])
        args = [mem(out), out_off, mem(part), mem(a), a_off, plan.packed, n, nsplit]
        enqueue(dev, plan.finish, args)

    run.__name__ = run.__qualname__ = f"opencl_{name}"
    run.__doc__ = f"{name}(out, a, dim) on the opencl device: a floating, out of a's shape."
    return run


def register(registry: KernelRegistry) -> None:
    """Register the fused softmax and log_softmax kernels for the opencl device."""
    registry.register("softmax", "opencl", _softmax("softmax", 0))
    registry.register("log_softmax", "opencl", _softmax("log_softmax", 1))
