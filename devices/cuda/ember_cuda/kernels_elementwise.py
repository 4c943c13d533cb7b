"""Renders the runtime's elementwise expression table into CUDA C (cu/elementwise.cu).

One program per (op, dtypes, which operand is a scalar), as the OpenCL device renders
them: the table is `ember.plugins.expressions`, the template `cu/elementwise.cu`, and each
program has a `contiguous` and a `strided` kernel. A program is a self-contained *body*
(its macros, the template, #undefs) after the shared `HEADER`, so a translation unit may
hold one program (what a launch loads) or many (what CI compiles, to check every variant
in a few NVRTC calls). Each body also carries static_asserts that its kernels' parameters
sit where `_params.ParamLayout` packs them.

float16 is stored as `__half` and computed in float (PyTorch's rule; a conversion to half
rounds to nearest even), bool as `unsigned char` that stores `v != 0`. A scalar operand is
a kernel parameter of the compute type, never a buffer.

Nothing here is registered as a kernel yet: launching these programs awaits a GPU run
(see the README); `programs()` lists every variant, and tests compile them all.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any, Final

import ember
from ember.plugins import expressions as ex
from ember.plugins import kernels as shared_kernels
from ember.plugins import ops
from ember_cuda._params import GEOMETRY_CUDA, MAX_OPERANDS, ParamLayout

__all__ = [
    "BLOCK",
    "HEADER",
    "VEC",
    "ElementwiseProgram",
    "arange_program",
    "batch_source",
    "binary_program",
    "copy_program",
    "fill_program",
    "programs",
    "unary_program",
    "where_program",
]

#: Threads per block, and elements per thread in contiguous kernels (not yet tuned on a GPU).
BLOCK: Final = 256
VEC: Final = 4

_STORAGE: Final = {
    "bool": "unsigned char",
    "uint8": "unsigned char",
    "int8": "signed char",
    "int32": "int",
    "int64": "long long",
    "float16": "__half",
    "float32": "float",
    "float64": "double",
    "bfloat16": "unsigned short",  # the top half of a float, computed in float
}
_UNSIGNED: Final = {"bool": "unsigned char", "uint8": "unsigned char", "int8": "unsigned char",
                    "int32": "unsigned int"}  # fmt: skip
_BITS: Final = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}
_MACROS: Final = ("EM_NAME", "EM_OPERANDS", "EM_PARAMS", "EM_OP", "EM_STEP")

#: float to bfloat16 bits, round to nearest even, NaN quiet (c10::BFloat16's rule).
_BF16_ROUND: Final = (
    "static __device__ __forceinline__ unsigned short em_bf16_round(float v) {\n"
    "    const unsigned int u = __float_as_uint(v);\n"
    "    return v != v ? (unsigned short)0x7FC0u\n"
    "                  : (unsigned short)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);\n"
    "}\n"
)

#: What every translation unit of elementwise programs starts with.
HEADER: Final = (
    "#include <cuda_fp16.h>\n"
    + shared_kernels.source()
    # The expression prelude defines every helper; a program calls a few of them.
    + "#pragma nv_diag_suppress 177\n"
    + ex.PRELUDE
    + _BF16_ROUND
    + "#pragma nv_diag_default 177\n"
    + GEOMETRY_CUDA
    + f"#define EM_BLOCK {BLOCK}\n#define EM_VEC {VEC}\n"
    + "#define EM_CAT_(a, b) a##b\n#define EM_CAT(a, b) EM_CAT_(a, b)\n"
)


@cache
def _template() -> str:
    return files("ember_cuda").joinpath("cu/elementwise.cu").read_text()


#: One operand: its `#define` block, and for a scalar the C type of its parameter.
@dataclass(frozen=True)
class Operand:
    block: str
    scalar: str | None = None


@dataclass(frozen=True)
class ElementwiseProgram:
    """One rendered program: its body (after HEADER) and its kernels' parameter layouts."""

    name: str
    body: str
    contiguous: ParamLayout
    strided: ParamLayout

    @property
    def kernels(self) -> tuple[str, str]:
        return f"{self.name}_contiguous", f"{self.name}_strided"

    @property
    def source(self) -> str:
        """The whole translation unit of this program alone."""
        return HEADER + self.body


def batch_source(programs: Sequence[ElementwiseProgram]) -> str:
    """One translation unit holding every program of `programs`."""
    return HEADER + "".join(program.body for program in programs)


def _render(name: str, operands: Sequence[Operand], params: str, op: str) -> ElementwiseProgram:
    declared, loads, types = [], [], []
    for k, operand in enumerate(operands):
        if operand.scalar is None:
            const = "const " if k else ""
            declared.append(f"{const}P{k}_T* EM_RESTRICT p{k}, em_i64 o{k}")
            loads.append(f"P{k}_LOAD(p{k}, o{k} + (i{k}))")
            types += ["pointer", "em_i64"]
        else:
            declared.append(f"P{k}_C s{k}")
            loads.append(f"s{k}")
            types.append(operand.scalar)
    inputs = "".join(f"const P{k}_C x{k} = {loads[k]}; " for k in range(1, len(operands)))
    xs = ", ".join(f"x{k}" for k in range(1, len(operands)))
    contiguous = ParamLayout([*types, "em_i64"])
    strided = ParamLayout([*types, "em_i64", "EmGeometry"])
    undefs = [f"P{k}_{part}" for k in range(MAX_OPERANDS) for part in ("T", "C", "LOAD", "STORE")]
    body = (
        f"\n/* -- {name} -- */\n"
        + "".join(operand.block for operand in operands)
        + f"#define EM_NAME {name}_\n#define EM_OPERANDS {len(operands)}\n"
        f"#define EM_PARAMS {', '.join(declared)}\n#define EM_OP({params}) {op}\n"
        f"#define EM_STEP(i0, i1, i2, i3) {{ {inputs}P0_STORE(p0, o0 + (i0), EM_OP({xs})); }}\n"
        + contiguous.static_asserts(f"{name}_contiguous_params")
        + strided.static_asserts(f"{name}_strided_params")
        + _template()
        + "".join(f"#undef {macro}\n" for macro in (*_MACROS, *undefs))
    )
    return ElementwiseProgram(name, body, contiguous, strided)


# -- operands ---------------------------------------------------------------------------


def compute_type(dtype: Any) -> str:
    """The C type an op computes `dtype` in (float for float16 and bfloat16)."""
    narrow = dtype is ember.float16 or dtype is ember.bfloat16
    return "float" if narrow else _STORAGE[dtype.name]


def _prelude(dtype: Any, k: int, from_double: bool = False) -> str:
    """`#define`s of operand k holding `dtype`: storage, compute type, load, store."""
    name, storage = dtype.name, _STORAGE[dtype.name]
    if name == "float16":
        load = "__half2float((p)[i])"
        # From float64 one rounding, double to half, as the cpu device does.
        store = "__double2half((double)(v))" if from_double else "__float2half_rn((float)(v))"
        store = f"((p)[i] = {store})"
    elif name == "bfloat16":
        # Widening is exact; narrowing rounds to nearest even with NaN quiet, bit for bit
        # as the cpu device and c10::BFloat16 (from float64 through float, as they do).
        load = "__uint_as_float(((unsigned int)(p)[i]) << 16)"
        store = "((p)[i] = em_bf16_round((float)(v)))"
    elif name == "bool":
        load, store = "((p)[i])", "((p)[i] = (unsigned char)((v) != 0))"
    else:
        load, store = "((p)[i])", f"((p)[i] = ({storage})(v))"
    return (
        f"#define P{k}_T {storage}\n#define P{k}_C {compute_type(dtype)}\n"
        f"#define P{k}_LOAD(p, i) {load}\n#define P{k}_STORE(p, i, v) {store}\n"
    )


def _bits(itemsize: int, k: int) -> str:
    """Operand k moved as unsigned bits of `itemsize` bytes, whatever they mean."""
    c = _BITS[itemsize]
    return (
        f"#define P{k}_T {c}\n#define P{k}_C {c}\n"
        f"#define P{k}_LOAD(p, i) ((p)[i])\n#define P{k}_STORE(p, i, v) ((p)[i] = (v))\n"
    )


def _expression(table: dict[str, dict[str, str]], op: str, dtype: Any) -> str | None:
    expr = table[op].get(ex.family(dtype.name))
    if expr is None:
        return None
    return expr.format(
        T=compute_type(dtype),
        U=_UNSIGNED.get(dtype.name, "unsigned long long"),
        S="d" if dtype is ember.float64 else "f",
        F="" if dtype is ember.float64 else "f",
    )


# -- the programs ------------------------------------------------------------------------


def unary_program(op: str, dtype: Any) -> ElementwiseProgram | None:
    """out = f(x) for `op` of ops.UNARY; None where the table has no expression."""
    expr = _expression(ex.UNARY, op, dtype)
    if expr is None:
        return None
    operands = [Operand(_prelude(dtype, 0)), Operand(_prelude(dtype, 1))]
    return _render(f"{op}_{dtype.name}", operands, "x", expr)


def binary_output(op: str, dtype: Any) -> Any:
    """The output dtype of a binary op computing in `dtype`."""
    return ember.bool if op in ops.BINARY_COMPARISON else dtype


def binary_program(op: str, dtype: Any, scalar_at: int = 0) -> ElementwiseProgram | None:
    """out = f(a, b) computing in `dtype`; operand `scalar_at` (1 = a, 2 = b, 0 = none) is
    a scalar parameter. None where the table has no expression."""
    expr = _expression(ex.BINARY, op, dtype)
    if expr is None:
        return None
    operands = [Operand(_prelude(binary_output(op, dtype), 0))]
    for k in (1, 2):
        scalar = compute_type(dtype) if k == scalar_at else None
        operands.append(Operand(_prelude(dtype, k), scalar))
    suffix = f"_scalar_{'ab'[scalar_at - 1]}" if scalar_at else ""
    return _render(f"{op}_{dtype.name}{suffix}", operands, "a, b", expr)


def copy_program(dst: Any, src: Any) -> ElementwiseProgram:
    """dst = src converted (the bits moved when the dtypes are the same)."""
    if dst is src:
        operands = [Operand(_bits(dst.itemsize, 0)), Operand(_bits(src.itemsize, 1))]
        expr = "x"
    else:
        from_double = dst is ember.float16 and src is ember.float64
        operands = [Operand(_prelude(dst, 0, from_double)), Operand(_prelude(src, 1))]
        expr = ex.convert(dst.name, src.name, _STORAGE[dst.name])
    return _render(f"copy_{dst.name}_from_{src.name}", operands, "x", expr)


def fill_program(itemsize: int) -> ElementwiseProgram:
    """Every element becomes the scalar, moved as bits of `itemsize` bytes."""
    operands = [Operand(_bits(itemsize, 0)), Operand(_bits(itemsize, 1), _BITS[itemsize])]
    return _render(f"fill_{8 * itemsize}bit", operands, "x", "x")


def where_program(itemsize: int) -> ElementwiseProgram:
    """out = condition ? a : b, moved as bits of `itemsize` bytes."""
    operands = [Operand(_bits(itemsize, 0)), Operand(_bits(1, 1))]
    operands += [Operand(_bits(itemsize, 2)), Operand(_bits(itemsize, 3))]
    return _render(f"where_{8 * itemsize}bit", operands, "c, a, b", "((c) ? (a) : (b))")


def arange_program(dtype: Any, in_real: bool) -> ElementwiseProgram:
    """out[i] = start + i * step: in double (truncated for integer results) when `in_real`,
    else wrapping in 64-bit integers, as the cpu device computes it."""
    block = _prelude(dtype, 0, from_double=in_real)
    if in_real:
        real = "double"
        cast = "" if dtype.is_floating_point else "(em_i64)"
        expr = f"{cast}((start) + (double)i * (step))"
    else:
        real = "em_i64"
        expr = "(em_i64)((em_u64)(start) + (em_u64)i * (em_u64)(step))"
    block += f"#define P1_C {real}\n#define P2_C {real}\n"
    operands = [Operand(block), Operand("", real), Operand("", real)]
    suffix = "_real" if in_real and not dtype.is_floating_point else ""
    return _render(f"arange_{dtype.name}{suffix}", operands, "start, step", expr)


def programs() -> Iterator[ElementwiseProgram]:
    """Every program variant the OpenCL device renders, in a stable order."""
    dtypes = _all_dtypes()
    for op in ops.UNARY:
        for dtype in dtypes:
            program = unary_program(op, dtype)
            if program is not None:
                yield program
    for op in ops.BINARY:
        for dtype in dtypes:
            for scalar_at in (0, 1, 2):
                program = binary_program(op, dtype, scalar_at)
                if program is not None:
                    yield program
    for dst in dtypes:
        for src in dtypes:
            yield copy_program(dst, src)
    for itemsize in sorted(_BITS):
        yield fill_program(itemsize)
        yield where_program(itemsize)
    for dtype in dtypes:
        yield arange_program(dtype, True)
        if not dtype.is_floating_point:
            yield arange_program(dtype, False)


def _all_dtypes() -> tuple[Any, ...]:
    """ember's dtypes, in the order of _STORAGE."""
    return tuple(getattr(ember, name) for name in _STORAGE)
