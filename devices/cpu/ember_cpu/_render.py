"""Renders the runtime's elementwise expression table into the C loops of this device.

One C template per op family (unary, binary, copy, fill, where) is instantiated per op and
dtype at build time; `_build.py` compiles the result into the extension with the
hand-written iterator (csrc/elementwise_iter.c). The table is `ember.plugins.expressions`;
a build from a source tree loads it by file path, so building needs no installed `ember`.

float16 and bfloat16 are computed in float: their ops reuse the float32 loops, and the
iterator converts their operands to float blocks around them (the `half` mask of each table
entry: bit k converts operand k, bit 4 + k says it is bfloat16 rather than float16). The
rendered table names each loop "op.dtype" (copies "copy.dst.src"); the Python kernels look
their loops up by those names once, when they register. `python -m ember_cpu._render`
prints the generated C.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from string import Template
from types import ModuleType
from typing import Final, NamedTuple

__all__ = ["DTYPES", "render"]


class CType(NamedTuple):
    """How a dtype is stored and computed in C."""

    storage: str
    compute: str
    unsigned: str
    is_float: bool
    itemsize: int


DTYPES: Final = {
    "bool": CType("uint8_t", "uint8_t", "uint8_t", False, 1),
    "uint8": CType("uint8_t", "uint8_t", "uint8_t", False, 1),
    "int8": CType("int8_t", "int8_t", "uint8_t", False, 1),
    "int32": CType("int32_t", "int32_t", "uint32_t", False, 4),
    "int64": CType("int64_t", "int64_t", "uint64_t", False, 8),
    "float16": CType("em_half", "float", "uint16_t", True, 2),
    "float32": CType("float", "float", "uint32_t", True, 4),
    "float64": CType("double", "double", "uint64_t", True, 8),
    "bfloat16": CType("em_bf16", "float", "uint16_t", True, 2),
}
# Dtypes stored narrow and computed by the float32 loops on converted blocks.
_NARROW: Final = frozenset({"float16", "bfloat16"})
_BF16_SHIFT: Final = 4  # EM_BF16_SHIFT of elementwise.h

# float32 math: the vectorisable versions of elementwise_math.h, else libm's float forms.
_FLOAT_MATH: Final = {"exp": "em_expf", "log": "em_logf", "erf": "em_erff", "tanh": "em_tanhf"}
# Where the float32 loop has a cheaper form of the table's expression: GELU's
# 0.5 (1 + erf(x / sqrt 2)) is the normal cdf, which em_normal_cdf computes in about half
# em_erff's work, at the same accuracy for GELU (elementwise_math.h).
_FLOAT_EXPRESSIONS: Final = {"gelu": "(x * em_normal_cdf(x))"}
# Unary float loops whose math makes them compute-bound: 512-bit vectors where the CPU has
# them (EM_WIDE_VECTORS, elementwise_math.h).
_WIDE: Final = frozenset({"exp", "log", "erf", "tanh", "sigmoid", "gelu"})
_LIBM: Final = frozenset(
    ("fabs", "log1p", "expm1", "sqrt", "sin", "cos", "floor", "ceil", "rint", "trunc", "fmod",
     "pow", "copysign",
     "acos", "asin", "atan", "sinh", "cosh", "tan", "asinh", "acosh", "atanh", "log2", "log10",
     "exp2", "atan2", "hypot", "nextafter", "fmax", "fmin",
     "lgamma", "erfc")
)  # fmt: skip
_CALL: Final = re.compile(r"\b([a-z][a-z0-9_]*)\(")
# The table's own C helpers (em_floor_div_s, em_pow_s, ...) come from its PRELUDE.
_INCLUDES: Final = '#include "elementwise.h"\n#include "elementwise_math.h"'


_UNARY: Final = Template("""
static $attributes int $name(int64_t n, char* const* p, const int64_t* s, const void* ctx) {
    (void)ctx;
    if (s[0] == sizeof($T) && s[1] == sizeof($T)) {
        $T* restrict o = ($T*)p[0];
        const $T* restrict in = (const $T*)p[1];
        for (int64_t i = 0; i < n; i++) {
            const $C x = ($C)in[i];
            o[i] = $store;
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            const $C x = ($C)*(const $T*)(p[1] + i * s[1]);
            *($T*)(p[0] + i * s[0]) = $store;
        }
    }
    return 0;
}
""")

# A stride-0 operand (a scalar, or a tensor broadcast along the row) is hoisted so that
# the loop over the other one vectorises.
_BINARY: Final = Template("""
static int $name(int64_t n, char* const* p, const int64_t* s, const void* ctx) {
    const em_scalar* sc = ctx;
    const int side = sc ? sc->side : 0;
    $O* restrict o = ($O*)p[0];
    const $T* restrict pa = (const $T*)p[1];
    const $T* restrict pb = (const $T*)p[2];
    const int a0 = side == 1 || s[1] == 0, b0 = side == 2 || s[2] == 0;
    const $C ka = side == 1 ? ($C)sc->$field : a0 ? ($C)pa[0] : 0;
    const $C kb = side == 2 ? ($C)sc->$field : b0 ? ($C)pb[0] : 0;
    if (s[0] == sizeof($O) && s[1] == sizeof($T) && s[2] == sizeof($T)) {
        for (int64_t i = 0; i < n; i++) {
            const $C a = ($C)pa[i], b = ($C)pb[i];
            o[i] = $store;
        }
    } else if (s[0] == sizeof($O) && b0 && s[1] == sizeof($T)) {
        const $C b = kb;
        for (int64_t i = 0; i < n; i++) {
            const $C a = ($C)pa[i];
            o[i] = $store;
        }
    } else if (s[0] == sizeof($O) && a0 && s[2] == sizeof($T)) {
        const $C a = ka;
        for (int64_t i = 0; i < n; i++) {
            const $C b = ($C)pb[i];
            o[i] = $store;
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            const $C a = a0 ? ka : ($C)*(const $T*)(p[1] + i * s[1]);
            const $C b = b0 ? kb : ($C)*(const $T*)(p[2] + i * s[2]);
            *($O*)(p[0] + i * s[0]) = $store;
        }
    }
    return 0;
}
""")

# Same-dtype copies move memory (memmove: src and dst may overlap); others convert.
_COPY: Final = Template("""
static int $name(int64_t n, char* const* p, const int64_t* s, const void* ctx) {
    (void)ctx;
    if (s[0] == sizeof($T) && s[1] == sizeof($S)) {
        $contiguous
    } else if (s[1] == 0) {
        const $S x = *(const $S*)p[1];
        const $T v = $store;
        for (int64_t i = 0; i < n; i++) *($T*)(p[0] + i * s[0]) = v;
    } else {
        for (int64_t i = 0; i < n; i++) {
            const $S x = *(const $S*)(p[1] + i * s[1]);
            *($T*)(p[0] + i * s[0]) = $store;
        }
    }
    return 0;
}
""")
_CONVERT_LOOP: Final = """$T* restrict o = ($T*)p[0];
        const $S* restrict in = (const $S*)p[1];
        for (int64_t i = 0; i < n; i++) {
            const $S x = in[i];
            o[i] = $store;
        }"""
_MOVE: Final = "memmove(p[0], p[1], (size_t)n * sizeof($T));"

_FILL: Final = Template("""
static int $name(int64_t n, char* const* p, const int64_t* s, const void* ctx) {
    const $T v = ($T)((const em_scalar*)ctx)->$field;
    if (s[0] == sizeof($T)) {
        $T* restrict o = ($T*)p[0];
        for (int64_t i = 0; i < n; i++) o[i] = v;
    } else {
        for (int64_t i = 0; i < n; i++) *($T*)(p[0] + i * s[0]) = v;
    }
    return 0;
}
""")

_FILL_BF16: Final = """
static int fill_bfloat16(int64_t n, char* const* p, const int64_t* s, const void* ctx) {
    const em_bf16 v = em_f_to_bf16((float)((const em_scalar*)ctx)->f);
    if (s[0] == sizeof(em_bf16)) {
        em_bf16* restrict o = (em_bf16*)p[0];
        for (int64_t i = 0; i < n; i++) o[i] = v;
    } else {
        for (int64_t i = 0; i < n; i++) *(em_bf16*)(p[0] + i * s[0]) = v;
    }
    return 0;
}
"""

_WHERE: Final = Template("""
static int $name(int64_t n, char* const* p, const int64_t* s, const void* ctx) {
    (void)ctx;
    if (s[0] == sizeof($T) && s[1] == 1 && s[2] == sizeof($T) && s[3] == sizeof($T)) {
        $T* restrict o = ($T*)p[0];
        const uint8_t* restrict c = (const uint8_t*)p[1];
        const $T* restrict a = (const $T*)p[2];
        const $T* restrict b = (const $T*)p[3];
        for (int64_t i = 0; i < n; i++) o[i] = c[i] ? a[i] : b[i];
    } else {
        for (int64_t i = 0; i < n; i++)
            *($T*)(p[0] + i * s[0]) = *(const uint8_t*)(p[1] + i * s[1])
                                         ? *(const $T*)(p[2] + i * s[2])
                                         : *(const $T*)(p[3] + i * s[3]);
    }
    return 0;
}
""")


def _load(name: str) -> ModuleType:
    """`ember.plugins.<name>`: from this source tree when building in it, else installed."""
    tree = Path(__file__).resolve().parents[3] / f"runtime/ember/plugins/{name}.py"
    if tree.is_file():
        spec = importlib.util.spec_from_file_location(f"_ember_plugins_{name}", tree)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    return importlib.import_module(f"ember.plugins.{name}")


def _c_expression(template: str, dtype: str) -> str:
    """An expression of the table in C for `dtype`: placeholders filled, float math named."""
    ct = DTYPES[dtype]
    double = ct.compute == "double"
    expr = template.format(
        T=ct.compute, U=ct.unsigned, S="d" if double else "f", F="" if double else "f"
    )
    if ct.compute != "float":
        return expr

    def rename(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in _FLOAT_MATH:
            return f"{_FLOAT_MATH[name]}("
        return f"{name}f(" if name in _LIBM else match.group(0)

    return _CALL.sub(rename, expr)


def _store(expr: str, storage: str, bool_out: bool) -> str:
    # Any value stored as bool is `!= 0` (a C cast of 0.5 would give 0).
    return f"(uint8_t)(({expr}) != 0)" if bool_out else f"({storage})({expr})"


class _Entry(NamedTuple):
    name: str
    loop: str
    half: int  # bit k: operand k is narrow, computed by a float loop on converted blocks
    itemsizes: tuple[int, ...]


def _loop_dtype(dtype: str) -> str:
    return "float32" if dtype in _NARROW else dtype


def _mask(dtype: str, operands: int) -> int:
    """The `half` mask converting the operands in `operands` (bits) when `dtype` is narrow."""
    if dtype not in _NARROW:
        return 0
    return operands | (operands << _BF16_SHIFT if dtype == "bfloat16" else 0)


def _unary(expressions: ModuleType, code: list[str], entries: list[_Entry]) -> None:
    for op, row in expressions.UNARY.items():
        for dtype, ct in DTYPES.items():
            expr = row.get(expressions.family(dtype))
            if expr is None:
                continue
            loop = f"unary_{op}_{_loop_dtype(dtype)}"
            if dtype not in _NARROW:
                c_expr = _c_expression(expr, dtype)
                if ct.compute == "float":
                    c_expr = _FLOAT_EXPRESSIONS.get(op, c_expr)
                store = _store(c_expr, ct.storage, dtype == "bool")
                attributes = "EM_WIDE_VECTORS" if op in _WIDE and ct.compute == "float" else ""
                code.append(
                    _UNARY.substitute(
                        name=loop, T=ct.storage, C=ct.compute, store=store, attributes=attributes
                    )
                )
            half = _mask(dtype, 3)
            entries.append(_Entry(f"{op}.{dtype}", loop, half, (ct.itemsize, ct.itemsize)))


def _binary(
    expressions: ModuleType, comparisons: frozenset[str], code: list[str], entries: list[_Entry]
) -> None:
    for op, row in expressions.BINARY.items():
        bool_out = op in comparisons
        for dtype, ct in DTYPES.items():
            expr = row.get(expressions.family(dtype))
            if expr is None:
                continue
            loop = f"binary_{op}_{_loop_dtype(dtype)}"
            out = "uint8_t" if bool_out else ct.storage
            if dtype not in _NARROW:
                store = _store(_c_expression(expr, dtype), out, bool_out or dtype == "bool")
                field = "f" if ct.is_float else "i"
                code.append(
                    _BINARY.substitute(
                        name=loop, T=ct.storage, O=out, C=ct.compute, store=store, field=field
                    )
                )
            half = _mask(dtype, 6 if bool_out else 7)
            sizes = (1 if bool_out else ct.itemsize, ct.itemsize, ct.itemsize)
            entries.append(_Entry(f"{op}.{dtype}", loop, half, sizes))


def _fill_and_where(code: list[str], entries: list[_Entry]) -> None:
    for dtype, ct in DTYPES.items():
        field = "f" if ct.is_float else "i"
        if dtype == "bfloat16":  # through float, as c10::BFloat16(double) rounds
            code.append(_FILL_BF16)
        else:
            code.append(_FILL.substitute(name=f"fill_{dtype}", T=ct.storage, field=field))
        entries.append(_Entry(f"fill.{dtype}", f"fill_{dtype}", 0, (ct.itemsize,)))
        code.append(_WHERE.substitute(name=f"where_{dtype}", T=ct.storage))
        sizes = (ct.itemsize, 1, ct.itemsize, ct.itemsize)
        entries.append(_Entry(f"where.{dtype}", f"where_{dtype}", 0, sizes))


def _copy(expressions: ModuleType, code: list[str], entries: list[_Entry]) -> None:
    for dst, dt in DTYPES.items():
        for src, st in DTYPES.items():
            # float16 converts through float32 blocks, but from double (rounded once);
            # bfloat16 through float32 always, from double too (as c10::BFloat16 does).
            half, loop_dst, loop_src = 0, dst, src
            if dst != src and src in _NARROW:
                half, loop_src = _mask(src, 2), "float32"
            if dst != src and dst in _NARROW and (src != "float64" or dst == "bfloat16"):
                half, loop_dst = half | _mask(dst, 1), "float32"
            loop = f"copy_{loop_dst}_{loop_src}"
            if not half:
                store = _store(expressions.convert(dst, src, dt.storage), dt.storage, dst == "bool")
                body = _MOVE if dst == src else _CONVERT_LOOP
                body = Template(body).substitute(T=dt.storage, S=st.storage, store=store)
                code.append(
                    _COPY.substitute(
                        name=loop, T=dt.storage, S=st.storage, store=store, contiguous=body
                    )
                )
            entries.append(_Entry(f"copy.{dst}.{src}", loop, half, (dt.itemsize, st.itemsize)))


def render() -> str:
    """The C source of every rendered loop and the `em_kernels` table that names them."""
    expressions = _load("expressions")
    comparisons = frozenset(_load("ops").BINARY_COMPARISON)
    code = [_INCLUDES, expressions.PRELUDE]
    entries: list[_Entry] = []
    _unary(expressions, code, entries)
    _binary(expressions, comparisons, code, entries)
    _fill_and_where(code, entries)
    _copy(expressions, code, entries)
    rows = []
    for e in entries:
        sizes = ", ".join(map(str, e.itemsizes))
        rows.append(f'    {{"{e.name}", {e.loop}, {len(e.itemsizes)}, {e.half}, {{{sizes}}}}},')
    code.append("const em_kernel em_kernels[] = {\n" + "\n".join(rows) + "\n};")
    code.append(f"const int em_kernel_count = {len(entries)};")
    return "\n".join(code) + "\n"


if __name__ == "__main__":
    print(render(), end="")
