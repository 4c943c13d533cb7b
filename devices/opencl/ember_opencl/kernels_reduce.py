"""Reduction kernels of the OpenCL device: sum, prod, amax, amin, any, all (cl/reduce.cl),
argmax, argmin and cumsum (cl/scan.cl).

Each kernel takes (out, a, plan) with the runtime's ReductionPlan (kept and reduced dims,
offsets, dtypes); the launches of one layout are planned once per (op, plan geometry,
device) and cached: the dims are ordered by stride into a `RedGeometry` struct
(_reduce_geometry.py), and the launch plan picks the kernels and their sizes (see
reduce.cl and scan.cl). What the kernels compute is the shared em_reduce.h (as on the
CPU device): a program's defines name only the op and the input's family. Kernels only
enqueue; partial results of split reductions live in scratch tensors from the caching
allocator, whose blocks the in-order queue keeps alive for the kernels that read them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Final

import numpy as np

import ember
from ember.plugins import ops
from ember.plugins.sdk import KernelRegistry, ReductionPlan, Storage, device_index
from ember_opencl._launch import kernel, mem, prelude
from ember_opencl._reduce_geometry import (
    COLUMN_TILE,
    MIN_CHUNK,
    PER_CHUNK,
    PER_OUTPUT,
    PLANS,
    Plan,
    coalesce,
    dims,
    enqueue,
    line_geometry,
    line_plan,
    pack,
    plan_key,
    remember,
    run_line_plan,
    scratch,
    sized,
    source,
    split_count,
    vector_load,
)

Kernel = Callable[[Storage, Storage, ReductionPlan], None]

__all__ = ["cumsum", "register"]

# -- reductions ----------------------------------------------------------------------------


def _family(dt: ember.dtype) -> str:
    """em_reduce.h's family of an input dtype."""
    if dt is ember.float64:
        return "DOUBLE"
    return "FLOAT" if dt.is_floating_point else "INT"


@functools.cache
def _reduce_source(op: str, a_dt: ember.dtype, out_dt: ember.dtype) -> str:
    defines = (
        prelude(a_dt, "A")
        + prelude(out_dt, "O")
        + vector_load(a_dt)
        + f"#define RED_OP {op.upper()}\n#define RED_FAMILY {_family(a_dt)}\n"
    )
    # A_STORE of the prelude converts through float for float16; O_STORE takes the
    # accumulator as it is (vstore_half_rte has a double overload).
    if out_dt is ember.float16:
        defines += "#undef O_STORE\n#define O_STORE(p, i, v) vstore_half_rte((v), (i), (p))\n"
    return source("reduce.cl", defines)


# -- plans -------------------------------------------------------------------------------


def _reduction_plan(op: str, dev: ember.device, plan: ReductionPlan) -> Plan:
    kept, reduced = dims(plan)
    kept, reduced = coalesce(kept), coalesce(reduced) or [(1, 0, 0)]
    outputs, rtotal = plan.numel_out, plan.numel_reduced
    text = _reduce_source(op, plan.dtypes[1], plan.dtypes[0])
    # Side-by-side columns pay when a kept dim is contiguous and the rows are not.
    columns = bool(kept) and kept[-1][1] == 1 and kept[-1][0] >= 8 and reduced[-1][1] != 1
    if columns and rtotal:
        m = kept[-1][0]
        items = outputs // m * -(-m // COLUMN_TILE)
        nsplit = split_count(items, rtotal, max(8, MIN_CHUNK // min(m, COLUMN_TILE)))
        main = sized(kernel(dev, text, "reduce_cols"), items * nsplit, PER_CHUNK)
    else:
        columns = False
        nsplit = split_count(outputs, rtotal)
        if nsplit == 1:
            main = sized(kernel(dev, text, "reduce_rows"), outputs, PER_OUTPUT)
        else:
            main = sized(kernel(dev, text, "reduce_rows_split"), outputs * nsplit, PER_CHUNK)
    finish = None
    if nsplit > 1:
        finish = sized(kernel(dev, text, "reduce_finish"), outputs, PER_OUTPUT)
    packed = pack(kept, reduced)
    return Plan(main, finish, columns, packed, outputs * nsplit, rtotal, nsplit)


def _reduction(op: str) -> Kernel:
    def run(out: Storage, a: Storage, plan: ReductionPlan) -> None:
        dev = a.device
        key = plan_key(op, device_index(dev), plan)
        launches = PLANS.get(key) or remember(key, _reduction_plan(op, dev, plan))
        out_off, a_off = np.int64(plan.offsets[0]), np.int64(plan.offsets[1])
        rtotal, nsplit = np.int64(launches.length), np.int64(launches.nsplit)
        packed = launches.packed
        if launches.finish is None:
            if launches.columns:
                args = [out.handle, out_off, out.handle, a.handle, a_off, packed, rtotal, nsplit]
            else:
                args = [out.handle, out_off, a.handle, a_off, packed, rtotal]
            enqueue(dev, launches.main, args)
            return
        part = scratch(dev, launches.partials)
        if launches.columns:
            args = [out.handle, out_off, mem(part), a.handle, a_off, packed, rtotal, nsplit]
        else:
            args = [mem(part), a.handle, a_off, packed, rtotal, nsplit]
        enqueue(dev, launches.main, args)
        enqueue(dev, launches.finish, [out.handle, out_off, mem(part), packed, nsplit])

    run.__name__ = run.__qualname__ = f"opencl_{op}"
    run.__doc__ = f"{op}(out, a, plan) on the opencl device."
    return run


# -- walks along one dim -------------------------------------------------------------------


@functools.cache
def _argextreme_source(a_dt: ember.dtype, better: str) -> str:
    defines = (
        prelude(a_dt, "A")
        + vector_load(a_dt)
        + f"#define ARGEXTREME\n#define BETTER(x, best) {better}\n"
        + f"#define IS_FLOAT {int(a_dt.is_floating_point)}\n"
        # integers have no NaN; x != x (or a constant 0) on them draws compiler warnings
        + f"#define IS_NAN(v) ((v) {'!=' if a_dt.is_floating_point else '<'} (v))\n"
    )
    return source("scan.cl", defines)


@functools.cache
def _cumsum_source(a_dt: ember.dtype, out_dt: ember.dtype) -> str:
    """em_reduce.h's accumulator of the output's family."""
    if out_dt.is_floating_point:
        family = "HALF" if a_dt is out_dt is ember.float16 else "FLOAT"
    else:
        family = "INT"
    defines = prelude(a_dt, "A") + prelude(out_dt, "O") + f"#define CUMSUM {family}\n"
    if out_dt is ember.float16:
        defines += "#undef O_STORE\n#define O_STORE(p, i, v) vstore_half_rte((v), (i), (p))\n"
    return source("scan.cl", defines)


def _walk(
    op: str, text: Callable[[ReductionPlan], str], names: tuple[str, str, str],
    finish_per_chunk: bool = False,
) -> Kernel:  # fmt: skip
    """The kernel of a walk along the plan's single reduced dim: `names` are the kernels
    of `text(plan)` for a line, a chunk of a line, and the chunks' finish (line_plan)."""

    def run(out: Storage, a: Storage, plan: ReductionPlan) -> None:
        dev = a.device
        key = plan_key(op, device_index(dev), plan)
        launches = PLANS.get(key)
        if launches is None:
            kept, (walked,) = dims(plan)
            geo = line_geometry(kept, walked)
            launches = remember(key, line_plan(dev, text(plan), names, geo, finish_per_chunk))
        out_off, a_off = np.int64(plan.offsets[0]), np.int64(plan.offsets[1])
        run_line_plan(dev, launches, out.handle, out_off, a.handle, a_off)

    run.__name__ = run.__qualname__ = f"opencl_{op}"
    run.__doc__ = f"{op}(out, a, plan) on the opencl device."
    return run


def _argextreme(better: str) -> Callable[[ReductionPlan], str]:
    return lambda plan: _argextreme_source(plan.dtypes[1], better)


cumsum: Final = _walk(
    "cumsum", lambda plan: _cumsum_source(plan.dtypes[1], plan.dtypes[0]),
    ("cumsum_lines", "cumsum_chunk_sums", "cumsum_chunks"), finish_per_chunk=True,
)  # fmt: skip
_ARG_KERNELS: Final = ("arg_lines", "arg_lines_split", "arg_finish")


def register(registry: KernelRegistry) -> None:
    """Register this family's kernels for the opencl device."""
    for op in ops.REDUCTIONS:
        registry.register(op, "opencl", _reduction(op))
    argmax = _walk(ops.ARGMAX, _argextreme("((x) > (best))"), _ARG_KERNELS)
    registry.register(ops.ARGMAX, "opencl", argmax)
    argmin = _walk(ops.ARGMIN, _argextreme("((x) < (best))"), _ARG_KERNELS)
    registry.register(ops.ARGMIN, "opencl", argmin)
    registry.register(ops.CUMSUM, "opencl", cumsum)
