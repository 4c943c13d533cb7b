"""Reduction kernels of the OpenCL device: sum, prod, amax, amin, any, all (cl/reduce.cl),
argmax, argmin and cumsum (cl/scan.cl).

Each call is planned once per (op, dtypes, layout, device) and the plan cached: the kept
and reduced dims are separated and coalesced into a `RedGeometry` struct
(_reduce_geometry.py), and the plan picks the kernels and their sizes (see reduce.cl and
scan.cl for the launches). Accumulators follow the CPU device's reduce.c and scan.c. Kernels
only enqueue; partial results of split reductions live in scratch tensors from the
caching allocator, whose blocks the in-order queue keeps alive for the kernels that
read them.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Final, NamedTuple

import numpy as np

from ember import _dtype
from ember._dispatch import Kernel, KernelRegistry
from ember._tensor import Tensor, empty_tensor
from ember_opencl._launch import ctype, kernel, mem, prelude
from ember_opencl._reduce_geometry import (
    COLUMN_TILE,
    MIN_CHUNK,
    PER_CHUNK,
    PER_OUTPUT,
    PLANS,
    Dim,
    Plan,
    coalesce,
    enqueue,
    line_geometry,
    line_plan,
    pack,
    remember,
    sized,
    source,
    split_count,
    vector_load,
)

__all__ = ["cumsum", "register"]

# -- reductions ----------------------------------------------------------------------------


class _Accumulator(NamedTuple):
    part: str  # OpenCL C type of the block lanes
    acc: str  # OpenCL C type of the accumulator
    identity: str
    op: str
    to_part: str
    to_part8: str
    scratch: _dtype.dtype  # the ember dtype holding `acc` in split partials


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


def _accumulator(op: str, dt: _dtype.dtype) -> _Accumulator:
    """How `op` accumulates inputs of dtype `dt`, matching the CPU device's reduce.c."""
    if op in ("any", "all"):
        ident, combine = ("0", "((a) | (b))") if op == "any" else ("1", "((a) & (b))")
        if dt.itemsize == 8:
            # The compare gives a long8 mask; PoCL drops every kernel of a program that
            # passes a 512-bit vector to a builtin (convert_int8) once it is cached.
            return _Accumulator(
                "long",
                "long",
                ident,
                combine,
                "((long)((x) != 0))",
                "((x) != (A_C)0)",
                _dtype.int64,
            )
        return _Accumulator(
            "int",
            "int",
            ident,
            combine,
            "((int)((x) != 0))",
            "convert_int8((x) != (A_C)0)",
            _dtype.int32,
        )
    if not dt.is_floating_point:
        if op in ("sum", "prod"):
            return _Accumulator(
                "ulong",
                "ulong",
                "0" if op == "sum" else "1",
                _SUM if op == "sum" else _PROD,
                "((ulong)(long)(x))",
                "as_ulong8(x)" if dt is _dtype.int64 else f"as_ulong8({_widen8('long', 'x')})",
                _dtype.int64,
            )
        ident = "LONG_MIN" if op == "amax" else "LONG_MAX"
        combine = _MAX if op == "amax" else _MIN
        return _Accumulator(
            "long",
            "long",
            ident,
            combine,
            "((long)(x))",
            "(x)" if dt is _dtype.int64 else _widen8("long", "x"),
            _dtype.int64,
        )
    lanes = "double" if dt is _dtype.float64 else "float"
    if op == "sum":  # float lanes per block, blocks in double
        return _Accumulator(lanes, "double", "0", _SUM, "(x)", "(x)", _dtype.float64)
    if op == "prod":
        return _Accumulator(
            "double",
            "double",
            "1",
            _PROD,
            "((double)(x))",
            "(x)" if dt is _dtype.float64 else _widen8("double", "x"),
            _dtype.float64,
        )
    ident = "(-INFINITY)" if op == "amax" else "INFINITY"
    scratch = _dtype.float64 if dt is _dtype.float64 else _dtype.float32
    return _Accumulator(lanes, lanes, ident, _MAX if op == "amax" else _MIN, "(x)", "(x)", scratch)


@functools.cache
def _reduce_source(op: str, a_dt: _dtype.dtype, out_dt: _dtype.dtype) -> tuple[str, _dtype.dtype]:
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
    if out_dt is _dtype.float16:
        defines += "#undef O_STORE\n#define O_STORE(p, i, v) vstore_half_rte((v), (i), (p))\n"
    return source("reduce.cl", defines), acc.scratch


# -- plans -------------------------------------------------------------------------------


def _reduction_plan(op: str, out: Tensor, a: Tensor, dims: Sequence[int]) -> Plan:
    kept: list[Dim] = []
    reduced: list[Dim] = []
    for d, size in enumerate(a._shape):
        if size == 1:
            continue
        if d in dims:
            reduced.append((size, a._strides[d], 0))
        else:
            kept.append((size, a._strides[d], out._strides[d]))
    kept, reduced = coalesce(kept), coalesce(reduced) or [(1, 0, 0)]
    outputs, rtotal = math.prod(d[0] for d in kept), math.prod(d[0] for d in reduced)
    text, scratch = _reduce_source(op, a._dtype, out._dtype)
    dev = a._device
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
    return Plan(main, finish, columns, packed, outputs * nsplit, rtotal, nsplit, scratch)


def _reduction(op: str) -> Kernel:
    def run(out: Tensor, a: Tensor, dims: tuple[int, ...]) -> None:
        key = (op, a._dtype, out._dtype, a._shape, a._strides, out._strides, dims, a._device)
        plan = PLANS.get(key) or remember(key, _reduction_plan(op, out, a, dims))
        dev = a._device
        out_off, a_off = np.int64(out._offset), np.int64(a._offset)
        rtotal, nsplit = np.int64(plan.length), np.int64(plan.nsplit)
        if plan.finish is None:
            if plan.columns:
                args = [mem(out), out_off, mem(out), mem(a), a_off, plan.packed, rtotal, nsplit]
            else:
                args = [mem(out), out_off, mem(a), a_off, plan.packed, rtotal]
            enqueue(dev, plan.main, args)
            return
        part = empty_tensor((plan.partials,), plan.scratch, dev)
        if plan.columns:
            args = [mem(out), out_off, mem(part), mem(a), a_off, plan.packed, rtotal, nsplit]
        else:
            args = [mem(part), mem(a), a_off, plan.packed, rtotal, nsplit]
        enqueue(dev, plan.main, args)
        enqueue(dev, plan.finish, [mem(out), out_off, mem(part), plan.packed, nsplit])

    run.__name__ = run.__qualname__ = f"opencl_{op}"
    run.__doc__ = f"{op}(out, a, dims) on the opencl device."
    return run


# -- walks along one dim -------------------------------------------------------------------


_ARG_KERNELS: Final = ("arg_lines", "arg_lines_split", "arg_finish")


@functools.cache
def _argextreme_source(a_dt: _dtype.dtype, better: str) -> str:
    compute = "float" if a_dt is _dtype.float16 else ctype(a_dt)
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


def _along_dim(op: str, better: str) -> Kernel:
    def run(out: Tensor, a: Tensor, dim: int) -> None:
        key = (op, a._dtype, a._shape, a._strides, out._strides, dim, a._device)
        plan = PLANS.get(key)
        if plan is None:
            text = _argextreme_source(a._dtype, better)
            geo = line_geometry(a, out, dim)
            plan = remember(key, line_plan(a._device, text, _ARG_KERNELS, geo, _dtype.int64))
        dev = a._device
        out_off, a_off, n = np.int64(out._offset), np.int64(a._offset), np.int64(plan.length)
        if plan.finish is None:
            enqueue(dev, plan.main, [mem(out), out_off, mem(a), a_off, plan.packed, n])
            return
        part = empty_tensor((plan.partials,), _dtype.int64, dev)
        nsplit = np.int64(plan.nsplit)
        enqueue(dev, plan.main, [mem(part), mem(a), a_off, plan.packed, n, nsplit])
        enqueue(
            dev, plan.finish, [mem(out), out_off, mem(part), mem(a), a_off, plan.packed, nsplit]
        )

    run.__name__ = run.__qualname__ = f"opencl_{op}"
    run.__doc__ = f"{op}(out_int64, a, dim) on the opencl device."
    return run


@functools.cache
def _cumsum_source(a_dt: _dtype.dtype, out_dt: _dtype.dtype) -> tuple[str, _dtype.dtype]:
    """Accumulators as the CPU device's scan.c: float for float16 into float16, double
    into other floats, wrapping int64 into integers."""
    if a_dt is _dtype.float16 and out_dt is _dtype.float16:
        acc, to_acc, scratch = "float", "(x)", _dtype.float32
    elif out_dt.is_floating_point:
        acc, to_acc, scratch = "double", "((double)(x))", _dtype.float64
    else:
        acc, to_acc, scratch = "ulong", "((ulong)(long)(x))", _dtype.int64
    defines = (
        prelude(a_dt, "A")
        + prelude(out_dt, "O")
        + f"#define CUMSUM\n#define ACC_T {acc}\n#define TO_ACC(x) {to_acc}\n"
    )
    if out_dt is _dtype.float16:
        defines += "#undef O_STORE\n#define O_STORE(p, i, v) vstore_half_rte((v), (i), (p))\n"
    return source("scan.cl", defines), scratch


_CUMSUM_KERNELS: Final = ("cumsum_lines", "cumsum_chunk_sums", "cumsum_chunks")


def cumsum(out: Tensor, a: Tensor, dim: int) -> None:
    """cumsum(out, a, dim): out in the accumulation dtype, a converted while read."""
    key = ("cumsum", a._dtype, out._dtype, a._shape, a._strides, out._strides, dim, a._device)
    plan = PLANS.get(key)
    if plan is None:
        text, scratch = _cumsum_source(a._dtype, out._dtype)
        geo = line_geometry(a, out, dim)
        plan = remember(key, line_plan(a._device, text, _CUMSUM_KERNELS, geo, scratch, True))
    dev = a._device
    out_off, a_off, n = np.int64(out._offset), np.int64(a._offset), np.int64(plan.length)
    if plan.finish is None:
        enqueue(dev, plan.main, [mem(out), out_off, mem(a), a_off, plan.packed, n])
        return
    part = empty_tensor((plan.partials,), plan.scratch, dev)
    nsplit = np.int64(plan.nsplit)
    enqueue(dev, plan.main, [mem(part), mem(a), a_off, plan.packed, n, nsplit])
    args = [mem(out), out_off, mem(part), mem(a), a_off, plan.packed, n, nsplit]
    enqueue(dev, plan.finish, args)


def register(registry: KernelRegistry) -> None:
    """Register this family's kernels for the opencl device."""
    for op in ("sum", "prod", "amax", "amin", "any", "all"):
        registry.register(op, "opencl", _reduction(op))
    registry.register("argmax", "opencl", _along_dim("argmax", "((x) > (best))"))
    registry.register("argmin", "opencl", _along_dim("argmin", "((x) < (best))"))
    registry.register("cumsum", "opencl", cumsum)
