"""Reduction kernels of the OpenCL device: sum, prod, amax, amin, any, all (cl/reduce.cl),
argmax, argmin and cumsum (cl/scan.cl).

Each kernel takes (out, a, plan) with the runtime's ReductionPlan (kept and reduced dims,
offsets, dtypes); the launches of one layout are planned once per (op, plan geometry,
device) and cached: the dims are ordered by stride into a `RedGeometry` struct
(_reduce_geometry.py), and the launch plan picks the kernels and their sizes (see
reduce.cl and scan.cl). Accumulators follow the CPU device's reduce.c and scan.c. Kernels
only enqueue; partial results of split reductions live in scratch tensors from the
caching allocator, whose blocks the in-order queue keeps alive for the kernels that
read them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Final, NamedTuple

import numpy as np

import ember
from ember.plugins import ops
from ember.plugins.sdk import KernelRegistry, ReductionPlan, Storage
from ember_opencl._launch import ctype, kernel, mem, prelude
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
    scratch,
    sized,
    source,
    split_count,
    vector_load,
)

Kernel = Callable[[Storage, Storage, ReductionPlan], None]

__all__ = ["cumsum", "register"]

# -- reductions ----------------------------------------------------------------------------


class _Accumulator(NamedTuple):
    part: str  # OpenCL C type of the block lanes
    acc: str  # OpenCL C type of the accumulator
    identity: str
    op: str
    to_part: str
    to_part8: str
    scratch: ember.dtype  # the ember dtype holding `acc` in split partials


_SUM: Final = "((a) + (b))"
_PROD: Final = "((a) * (b))"
# A NaN operand wins (x != x is false for integers).
_MAX: Final = "((((b) != (b)) || ((b) > (a))) ? (b) : (a))"
_MIN: Final = "((((b) != (b)) || ((b) < (a))) ? (b) : (a))"


def _widen8(wide: str, x: str) -> str:
    """`x`, an 8-vector, converted to `wide`8 by halves: a builtin returning a 512-bit
    vector (convert_double8, convert_long8) changes the ABI on CPUs without AVX-512,
    which PoCL warns about and mishandles (see reduce.cl)."""
    return f"(({wide}8)(convert_{wide}4(({x}).lo), convert_{wide}4(({x}).hi)))"


def _accumulator(op: str, dt: ember.dtype) -> _Accumulator:
    """How `op` accumulates inputs of dtype `dt`, matching the CPU device's reduce.c."""
    acc = _Accumulator
    if op in ("any", "all"):
        ident, combine = ("0", "((a) | (b))") if op == "any" else ("1", "((a) & (b))")
        if dt.itemsize == 8:
            # The compare gives a long8 mask; PoCL drops every kernel of a program that
            # passes a 512-bit vector to a builtin (convert_int8) once it is cached.
            return acc("long", "long", ident, combine, "((long)((x) != 0))", "((x) != (A_C)0)",
                       ember.int64)  # fmt: skip
        return acc("int", "int", ident, combine, "((int)((x) != 0))",
                   "convert_int8((x) != (A_C)0)", ember.int32)  # fmt: skip
    wide = dt.itemsize == 8
    if not dt.is_floating_point:
        if op in ("sum", "prod"):  # wrapping
            to8 = "as_ulong8(x)" if wide else f"as_ulong8({_widen8('long', 'x')})"
            ident, combine = ("0", _SUM) if op == "sum" else ("1", _PROD)
            return acc("ulong", "ulong", ident, combine, "((ulong)(long)(x))", to8, ember.int64)
        ident, combine = ("LONG_MIN", _MAX) if op == "amax" else ("LONG_MAX", _MIN)
        to8 = "(x)" if wide else _widen8("long", "x")
        return acc("long", "long", ident, combine, "((long)(x))", to8, ember.int64)
    lanes = "double" if wide else "float"
    if op == "sum":  # float lanes per block, blocks in double
        return acc(lanes, "double", "0", _SUM, "(x)", "(x)", ember.float64)
    if op == "prod":
        to8 = "(x)" if wide else _widen8("double", "x")
        return acc("double", "double", "1", _PROD, "((double)(x))", to8, ember.float64)
    ident, combine = ("(-INFINITY)", _MAX) if op == "amax" else ("INFINITY", _MIN)
    return acc(lanes, lanes, ident, combine, "(x)", "(x)", ember.float64 if wide else ember.float32)


@functools.cache
def _reduce_source(op: str, a_dt: ember.dtype, out_dt: ember.dtype) -> tuple[str, ember.dtype]:
    acc = _accumulator(op, a_dt)
    to_acc8 = "(x)" if acc.part == acc.acc else _widen8(acc.acc, "x")
    defines = (
        prelude(a_dt, "A")
        + prelude(out_dt, "O")
        + f"#define A_LOAD8(p, i) {vector_load(a_dt)}\n"
        + f"#define PART_T {acc.part}\n#define PART2_T {acc.part}2\n"
        + f"#define PART4_T {acc.part}4\n#define PART8_T {acc.part}8\n"
        + f"#define ACC_T {acc.acc}\n#define ACC8_T {acc.acc}8\n"
        + f"#define PART_IDENT (({acc.part}){acc.identity})\n"
        + f"#define ACC_IDENT (({acc.acc}){acc.identity})\n"
        + f"#define OP(a, b) {acc.op}\n"
        + f"#define TO_PART(x) {acc.to_part}\n#define TO_PART8(x) {acc.to_part8}\n"
        + f"#define TO_ACC8(x) {to_acc8}\n"
    )
    # A_STORE of the prelude converts through float for float16; O_STORE takes the
    # accumulator as it is (vstore_half_rte has a double overload).
    if out_dt is ember.float16:
        defines += "#undef O_STORE\n#define O_STORE(p, i, v) vstore_half_rte((v), (i), (p))\n"
    return source("reduce.cl", defines), acc.scratch


# -- plans -------------------------------------------------------------------------------


def _reduction_plan(op: str, dev: ember.device, plan: ReductionPlan) -> Plan:
    kept, reduced = dims(plan)
    kept, reduced = coalesce(kept), coalesce(reduced) or [(1, 0, 0)]
    outputs, rtotal = plan.numel_out, plan.numel_reduced
    text, scratch_dtype = _reduce_source(op, plan.dtypes[1], plan.dtypes[0])
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
    return Plan(main, finish, columns, packed, outputs * nsplit, rtotal, nsplit, scratch_dtype)


def _reduction(op: str) -> Kernel:
    def run(out: Storage, a: Storage, plan: ReductionPlan) -> None:
        dev = a.device
        key = plan_key(op, dev.index, plan)
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
        part = scratch(dev, launches.partials, launches.scratch)
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


_ARG_KERNELS: Final = ("arg_lines", "arg_lines_split", "arg_finish")


@functools.cache
def _argextreme_source(a_dt: ember.dtype, better: str) -> str:
    compute = "float" if a_dt is ember.float16 else ctype(a_dt)
    defines = (
        prelude(a_dt, "A")
        + f"#define ARGEXTREME\n#define BETTER(x, best) {better}\n"
        # integers have no NaN; x != x (or a constant 0) on them draws compiler warnings
        + (
            "#define IS_NAN(v) ((v) != (v))\n"
            if a_dt.is_floating_point
            else "#define IS_NAN(v) ((v) < (v))\n"
        )
        + f"#define A_C8 {compute}8\n#define A_LOAD8(p, i) {vector_load(a_dt)}\n"
        + f"#define IS_FLOAT {int(a_dt.is_floating_point)}\n"
    )
    return source("scan.cl", defines)


def _line_plan(
    dev: ember.device, plan: ReductionPlan, text: str, names: tuple[str, str, str],
    scratch_dtype: ember.dtype, finish_per_chunk: bool = False,
) -> Plan:  # fmt: skip
    """The launch plan of a walk along the plan's single reduced dim."""
    kept, (walked,) = dims(plan)
    geo = line_geometry(kept, walked)
    return line_plan(dev, text, names, geo, scratch_dtype, finish_per_chunk)


def _along_dim(op: str, better: str) -> Kernel:
    def run(out: Storage, a: Storage, plan: ReductionPlan) -> None:
        dev = a.device
        key = plan_key(op, dev.index, plan)
        launches = PLANS.get(key)
        if launches is None:
            text = _argextreme_source(plan.dtypes[1], better)
            launches = _line_plan(dev, plan, text, _ARG_KERNELS, ember.int64)
            remember(key, launches)
        out_off, a_off = np.int64(plan.offsets[0]), np.int64(plan.offsets[1])
        n, packed = np.int64(launches.length), launches.packed
        if launches.finish is None:
            enqueue(dev, launches.main, [out.handle, out_off, a.handle, a_off, packed, n])
            return
        part = scratch(dev, launches.partials, ember.int64)
        nsplit = np.int64(launches.nsplit)
        enqueue(dev, launches.main, [mem(part), a.handle, a_off, packed, n, nsplit])
        args = [out.handle, out_off, mem(part), a.handle, a_off, packed, nsplit]
        enqueue(dev, launches.finish, args)

    run.__name__ = run.__qualname__ = f"opencl_{op}"
    run.__doc__ = f"{op}(out_int64, a, plan) on the opencl device."
    return run


@functools.cache
def _cumsum_source(a_dt: ember.dtype, out_dt: ember.dtype) -> tuple[str, ember.dtype]:
    """Accumulators as the CPU device's scan.c: float for float16 into float16, double
    into other floats, wrapping int64 into integers."""
    if a_dt is ember.float16 and out_dt is ember.float16:
        acc, to_acc, scratch = "float", "(x)", ember.float32
    elif out_dt.is_floating_point:
        acc, to_acc, scratch = "double", "((double)(x))", ember.float64
    else:
        acc, to_acc, scratch = "ulong", "((ulong)(long)(x))", ember.int64
    defines = (
        prelude(a_dt, "A")
        + prelude(out_dt, "O")
        + f"#define CUMSUM\n#define ACC_T {acc}\n#define TO_ACC(x) {to_acc}\n"
    )
    if out_dt is ember.float16:
        defines += "#undef O_STORE\n#define O_STORE(p, i, v) vstore_half_rte((v), (i), (p))\n"
    return source("scan.cl", defines), scratch


_CUMSUM_KERNELS: Final = ("cumsum_lines", "cumsum_chunk_sums", "cumsum_chunks")


def cumsum(out: Storage, a: Storage, plan: ReductionPlan) -> None:
    """cumsum(out, a, plan): out in the accumulation dtype, a converted while read."""
    dev = a.device
    key = plan_key("cumsum", dev.index, plan)
    launches = PLANS.get(key)
    if launches is None:
        text, scratch_dtype = _cumsum_source(plan.dtypes[1], plan.dtypes[0])
        launches = _line_plan(dev, plan, text, _CUMSUM_KERNELS, scratch_dtype, True)
        remember(key, launches)
    out_off, a_off = np.int64(plan.offsets[0]), np.int64(plan.offsets[1])
    n, packed = np.int64(launches.length), launches.packed
    if launches.finish is None:
        enqueue(dev, launches.main, [out.handle, out_off, a.handle, a_off, packed, n])
        return
    part = scratch(dev, launches.partials, launches.scratch)
    nsplit = np.int64(launches.nsplit)
    enqueue(dev, launches.main, [mem(part), a.handle, a_off, packed, n, nsplit])
    args = [out.handle, out_off, mem(part), a.handle, a_off, packed, n, nsplit]
    enqueue(dev, launches.finish, args)


def register(registry: KernelRegistry) -> None:
    """Register this family's kernels for the opencl device."""
    for op in ops.REDUCTIONS:
        registry.register(op, "opencl", _reduction(op))
    registry.register(ops.ARGMAX, "opencl", _along_dim("argmax", "((x) > (best))"))
    registry.register(ops.ARGMIN, "opencl", _along_dim("argmin", "((x) < (best))"))
    registry.register(ops.CUMSUM, "opencl", cumsum)
