"""Elementwise kernels of the OpenCL device: copy_, fill_, unary, binary, where, arange_.

Every op is rendered at run time from the runtime's expression table
(`ember.plugins.expressions`) into cl/elementwise.cl, one program per (op, dtypes, which
operands are scalars), built on first use and cached (in memory and on disk). A program
has two kernels: `contiguous` (EM_VEC consecutive elements per work item, for a plan whose
`contiguous` flag says a flat loop suffices) and `strided` (one element per work item,
the plan's coalesced geometry in one EmGeometry struct passed by value). A scalar operand
travels as a kernel argument, never as a buffer; the runtime has converted it to the
computation dtype and raised every semantic error, so kernels only compute.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib.resources import files
from typing import Any, Final

import numpy as np

import ember
from ember.plugins import expressions as ex
from ember.plugins import ops
from ember.plugins.sdk import ElementwisePlan, KernelRegistry, Storage, Tensor, device_index
from ember_opencl._launch import (
    GEOMETRY_C,
    LOCAL_SIZE,
    ctype,
    kernel,
    launch,
    launcher,
    plan_geometry,
    prelude,
)
from ember_opencl.backend import BACKEND

__all__ = ["register"]

_TEMPLATE: Final = files("ember_opencl").joinpath("cl/elementwise.cl").read_text()
_VEC: Final = 8  # elements per work item in contiguous kernels (~0.95x of float4 a+b)
GROUP: Final = LOCAL_SIZE * _VEC  # elements per work-group of a contiguous kernel
_LOCAL: Final = (LOCAL_SIZE,)
_BITS: Final = {1: ("uchar", np.uint8), 2: ("ushort", np.uint16), 4: ("uint", np.uint32),
                8: ("ulong", np.uint64)}  # fmt: skip
_UNSIGNED_C: Final = {"bool": "uchar", "uint8": "uchar", "int8": "uchar", "int32": "uint"}
# One rounding, double to half, as the CPU device does (not through float).
_F16_FROM_DOUBLE: Final = (
    "#undef P0_STORE\n#define P0_STORE(p, i, v) vstore_half_rte((v), (i), (p))\n"
)

Convert = Callable[[Any], Any]
#: An operand of a program: its `prelude` block and, for a scalar, the conversion of the
#: Python value to the kernel parameter's type (None for a tensor).
Operand = tuple[str, Convert | None]


class Program:
    """One rendered program: its two kernels, their launchers, the scalar conversions."""

    __slots__ = ("contiguous", "converts", "run_contiguous", "run_strided", "strided")

    def __init__(self, dev: Any, name: str, operands: Sequence[Operand], params: str, op: str):
        source, kinds = _render(name, operands, params, op)
        self.contiguous = kernel(dev, source, f"{name}_contiguous")
        self.strided = kernel(dev, source, f"{name}_strided")
        self.run_contiguous = launcher(kinds + "l", _LOCAL)
        self.run_strided = launcher(kinds + "lv", _LOCAL)
        self.converts = tuple(convert for _, convert in operands)


def _render(name: str, operands: Sequence[Operand], params: str, op: str) -> tuple[str, str]:
    """The OpenCL C of one program, and its kernels' argument kinds (see _launch.setter)."""
    declared, loads, kinds = [], [], ""
    for k, (_, convert) in enumerate(operands):
        const = "const " if k else ""
        if convert is None:
            declared.append(f"__global {const}P{k}_T* EM_RESTRICT p{k}, long o{k}")
            loads.append(f"P{k}_LOAD(p{k}, o{k} + (i{k}))")
            kinds += "ml"
        else:
            declared.append(f"P{k}_C s{k}")
            loads.append(f"s{k}")
            kinds += "v"
    inputs = "".join(f"const P{k}_C x{k} = {loads[k]}; " for k in range(1, len(operands)))
    xs = ", ".join(f"x{k}" for k in range(1, len(operands)))
    defines = "".join(block for block, _ in operands) + (
        f"#define EM_NAME {name}_\n#define EM_VEC {_VEC}\n#define EM_OPERANDS {len(operands)}\n"
        f"#define EM_PARAMS {', '.join(declared)}\n#define EM_OP({params}) {op}\n"
        f"#define EM_STEP(i0, i1, i2, i3) {{ {inputs}P0_STORE(p0, o0 + (i0), EM_OP({xs})); }}\n"
    )
    return f"{ex.PRELUDE}{GEOMETRY_C}{defines}{_TEMPLATE}", kinds


def _prelude(dtype: Any, k: int) -> str:
    return prelude(dtype, f"P{k}")


def _bits(itemsize: int, k: int) -> str:
    """A prelude that moves elements of `itemsize` bytes as unsigned bits."""
    c = _BITS[itemsize][0]
    return (
        f"#define P{k}_T {c}\n#define P{k}_C {c}\n"
        f"#define P{k}_LOAD(p, i) ((p)[i])\n#define P{k}_STORE(p, i, v) ((p)[i] = (v))\n"
    )


def _scalar(dtype: Any) -> Convert:
    """A Python scalar of `dtype` as the kernel parameter: float16 stays in float (the
    op's math type, PyTorch's rule), bool is a uchar."""
    if dtype is ember.float16 or dtype is ember.bfloat16:
        return np.float32
    if dtype is ember.bool:
        return np.uint8
    converted: Convert = dtype.numpy.type
    return converted


def _fill_in(expr: str, dtype: Any) -> str:
    compute = "float" if dtype is ember.float16 or dtype is ember.bfloat16 else ctype(dtype)
    return expr.format(
        T=compute,
        U=_UNSIGNED_C.get(dtype.name, "ulong"),
        S="d" if dtype is ember.float64 else "f",
        F="" if dtype is ember.float64 else "f",
    )


def _expression(table: dict[str, dict[str, str]], op: str, dtype: Any) -> str:
    expr = table[op].get(ex.family(dtype.name))
    if expr is None:
        raise RuntimeError(f"{op}: not implemented for dtype {dtype.name} on opencl")
    return _fill_in(expr, dtype)


def _items(n: int) -> tuple[int]:
    return ((n + LOCAL_SIZE - 1) // LOCAL_SIZE * LOCAL_SIZE,)


def _enqueue(dev: Any, program: Program, plan: ElementwisePlan, args: tuple[Any, ...]) -> None:
    """Launch `program` over `plan` with its operands' kernel arguments `args`."""
    n = plan.numel
    if plan.contiguous:
        size = ((n + GROUP - 1) // GROUP * LOCAL_SIZE,)
        program.run_contiguous(dev, program.contiguous, size, *args, n)
    else:
        program.run_strided(dev, program.strided, _items(n), *args, n, plan_geometry(plan))


# --- unary and copy_: out = f(a) -------------------------------------------------------------


def _run_unary(dev: Any, program: Program, out: Storage, a: Storage, plan: ElementwisePlan) -> None:
    o = plan.offsets
    n = plan.numel
    if plan.contiguous:
        size = ((n + GROUP - 1) // GROUP * LOCAL_SIZE,)
        program.run_contiguous(dev, program.contiguous, size, out.handle, o[0], a.handle, o[1], n)
    else:
        g = plan_geometry(plan)
        program.run_strided(dev, program.strided, _items(n), out.handle, o[0], a.handle, o[1], n, g)


def _unary(op: str) -> Callable[[Storage, Storage, ElementwisePlan], None]:
    programs: dict[tuple[int, Any], Program] = {}

    def run(out: Storage, a: Storage, plan: ElementwisePlan) -> None:
        dev = out.device
        dtype = plan.dtypes[0]
        program = programs.get((device_index(dev), dtype))
        if program is None:
            expr = _expression(ex.UNARY, op, dtype)
            operands = [(_prelude(dtype, 0), None), (_prelude(dtype, 1), None)]
            program = programs[(device_index(dev), dtype)] = Program(
                dev, f"{op}_{dtype.name}", operands, "x", expr
            )
        _run_unary(dev, program, out, a, plan)

    run.__name__ = run.__qualname__ = f"opencl_{op}"
    return run


_copies: dict[tuple[int, Any, Any], Program] = {}


def _copy_program(dev: Any, dst: Any, src: Any) -> Program:
    if dst is src:  # same dtype: move the bits, whatever they mean
        operands: list[Operand] = [(_bits(dst.itemsize, 0), None), (_bits(src.itemsize, 1), None)]
        expr = "x"
    else:
        block = _prelude(dst, 0)
        if dst is ember.float16 and src is ember.float64:
            block += _F16_FROM_DOUBLE
        operands = [(block, None), (_prelude(src, 1), None)]
        expr = ex.convert(dst.name, src.name, ctype(dst))
    program = _copies[(device_index(dev), dst, src)] = Program(
        dev, f"copy_{dst.name}_from_{src.name}", operands, "x", expr
    )
    return program


def copy_(dst: Storage, src: Storage, plan: ElementwisePlan) -> None:
    """dst = src converted from plan.dtypes[1] to plan.dtypes[0]."""
    dev = dst.device
    dtypes = plan.dtypes
    program = _copies.get((device_index(dev), dtypes[0], dtypes[1])) or _copy_program(dev, *dtypes)
    _run_unary(dev, program, dst, src, plan)


# --- binary: out = f(a, b), a or b possibly a scalar -------------------------------------------


def _binary_program(dev: Any, op: str, out: Any, dtype: Any, scalar_at: int) -> Program:
    operands: list[Operand] = [(_prelude(out, 0), None)]
    for k in (1, 2):
        operands.append((_prelude(dtype, k), _scalar(dtype) if k == scalar_at else None))
    suffix = f"_scalar_{'ab'[scalar_at - 1]}" if scalar_at else ""
    expr = _expression(ex.BINARY, op, dtype)
    return Program(dev, f"{op}_{dtype.name}{suffix}", operands, "a, b", expr)


def _binary(op: str) -> Callable[[Storage, Any, Any, ElementwisePlan], None]:
    # (device index, dtype) -> the program of two tensor operands: the small ops' hot path
    tensors: dict[tuple[int, Any], Program] = {}
    programs: dict[tuple[int, Any, int], Program] = {}  # every program, by scalar operand
    storage = Storage

    def run(out: Storage, a: Any, b: Any, plan: ElementwisePlan) -> None:
        dev = out.device
        if type(b) is storage and type(a) is storage and plan.contiguous:
            program = tensors.get((device_index(dev), plan.dtypes[1]))
            if program is not None:
                n = plan.numel
                o = plan.offsets
                program.run_contiguous(
                    dev, program.contiguous, ((n + GROUP - 1) // GROUP * LOCAL_SIZE,),
                    out.handle, o[0], a.handle, o[1], b.handle, o[2], n,
                )  # fmt: skip
                return
        run_any(dev, out, a, b, plan)

    def run_any(dev: Any, out: Storage, a: Any, b: Any, plan: ElementwisePlan) -> None:
        o = plan.offsets
        scalar_at = 2 if type(b) is not storage else 1 if type(a) is not storage else 0
        key = (device_index(dev), plan.dtypes[1], scalar_at)
        program = programs.get(key)
        if program is None:
            program = programs[key] = _binary_program(dev, op, plan.dtypes[0], key[1], scalar_at)
            if not scalar_at:
                tensors[key[:2]] = program
        if scalar_at == 0:
            args: tuple[Any, ...] = (out.handle, o[0], a.handle, o[1], b.handle, o[2])
        elif scalar_at == 2:
            args = (out.handle, o[0], a.handle, o[1], program.converts[2](b))  # type: ignore[misc]
        else:
            args = (out.handle, o[0], program.converts[1](a), b.handle, o[2])  # type: ignore[misc]
        _enqueue(dev, program, plan, args)

    run.__name__ = run.__qualname__ = f"opencl_{op}"
    return run


# --- fill_, where ----------------------------------------------------------------------------

_fills: dict[tuple[int, Any], Program] = {}


def fill_(dst: Storage, value: Any, plan: ElementwisePlan) -> None:
    """Every element of dst becomes `value` (of dst's dtype), moved as its bits."""
    dev = dst.device
    dtype = plan.dtypes[0]
    program = _fills.get((device_index(dev), dtype))
    if program is None:
        size = dtype.itemsize
        numpy_dtype, bits = dtype.numpy, _BITS[size][1]

        def to_bits(v: Any) -> Any:
            return np.array(v, numpy_dtype).view(bits)[()]

        operands: list[Operand] = [(_bits(size, 0), None), (_bits(size, 1), to_bits)]
        program = _fills[(device_index(dev), dtype)] = Program(
            dev, f"fill_{8 * size}bit", operands, "x", "x"
        )
    _enqueue(dev, program, plan, (dst.handle, plan.offsets[0], program.converts[1](value)))  # type: ignore[misc]


_wheres: dict[tuple[int, int], Program] = {}


def where(out: Storage, condition: Storage, a: Storage, b: Storage, plan: ElementwisePlan) -> None:
    """out = condition ? a : b, moved as bits of the element's width."""
    dev = out.device
    size = plan.dtypes[0].itemsize
    program = _wheres.get((device_index(dev), size))
    if program is None:
        operands: list[Operand] = [(_bits(size, 0), None), (_bits(1, 1), None)]
        operands += [(_bits(size, 2), None), (_bits(size, 3), None)]
        program = _wheres[(device_index(dev), size)] = Program(
            dev, f"where_{8 * size}bit", operands, "c, a, b", "((c) ? (a) : (b))"
        )
    o = plan.offsets
    args = (out.handle, o[0], condition.handle, o[1], a.handle, o[2], b.handle, o[3])
    _enqueue(dev, program, plan, args)


# --- arange_ (a tensor-level kernel) -----------------------------------------------------------

_aranges: dict[tuple[int, Any, bool], Program] = {}


def _arange_program(dev: Any, dtype: Any, in_real: bool) -> Program:
    """Float results, and integer results of float bounds, compute in double where the
    device has it (as the CPU device does) and truncate; integer bounds of integer
    results wrap in long."""
    fp64 = "cl_khr_fp64" in BACKEND.cl_device(device_index(dev)).extensions
    real = "double" if fp64 else "float"
    block = _prelude(dtype, 0)
    if in_real:
        if dtype is ember.float16 and fp64:
            block += _F16_FROM_DOUBLE
        convert: Convert = np.float64 if fp64 else np.float32
        scalars, cast = (
            f"#define P1_C {real}\n#define P2_C {real}\n",
            "" if dtype.is_floating_point else "(long)",
        )
        expr = f"{cast}((start) + ({real})i * (step))"
    else:
        convert = np.int64
        scalars, expr = (
            "#define P1_C long\n#define P2_C long\n",
            "(long)((ulong)(start) + (ulong)i * (ulong)(step))",
        )
    operands: list[Operand] = [(block + scalars, None), ("", convert), ("", convert)]
    program = _aranges[(device_index(dev), dtype, in_real)] = Program(
        dev, f"arange_{dtype.name}", operands, "start, step", expr
    )
    return program


def arange_(out: Tensor, start: Any, step: Any) -> None:
    """out[i] = start + i * step for a 1-d contiguous out."""
    if len(out.shape) != 1 or not out.is_contiguous():
        raise RuntimeError("arange_: expected a 1-d contiguous output")
    dev, dtype = out.device, out.dtype
    in_real = isinstance(start, float) or isinstance(step, float) or dtype.is_floating_point
    program = _aranges.get((device_index(dev), dtype, in_real)) or _arange_program(
        dev, dtype, in_real
    )
    n = out.shape[0]
    start_value, step_value = program.converts[1](start), program.converts[2](step)  # type: ignore[misc]
    args = [out.untyped_storage().handle, out.storage_offset(), start_value, step_value, n]
    size = ((n + GROUP - 1) // GROUP * LOCAL_SIZE,)
    launch(dev, program.contiguous, size, args, _LOCAL)


# --- registration ----------------------------------------------------------------------------


def register(registry: KernelRegistry) -> None:
    """Register this family's kernels for the opencl device."""
    for name in ops.UNARY:
        registry.register(name, "opencl", _unary(name), rendered=True)
    for name in ops.BINARY:
        registry.register(name, "opencl", _binary(name), rendered=True)
    registry.register(ops.WHERE, "opencl", where)
    registry.register(ops.COPY, "opencl", copy_)
    registry.register(ops.FILL, "opencl", fill_)
    registry.register(ops.ARANGE, "opencl", arange_)
