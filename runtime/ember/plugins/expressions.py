"""The elementwise ops as one table of expressions, which every device renders.

Written once here, rendered by each device into its own language from one template per
op family: C for the cpu device (at build time), OpenCL C and CUDA C (at run time), NumPy
calls for the reference device. Adding an elementwise op to every device is one line here.

C expressions are in `x` (unary, copy) or `a`, `b` (binary), the operands in their
compute type ({T}: float for float16). Placeholders: {T} compute type, {U} the unsigned
type of the same width, {S} the float helper suffix (f or d), {F} the float-literal
suffix. A family missing from an op's row means "not for this dtype". The semantics are
PyTorch's; the runtime has already rejected integer division by zero and integral
powers with a negative scalar exponent, so expressions never see them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

__all__ = [
    "BINARY", "INTEGER_DIVISIONS", "NUMPY_BINARY", "NUMPY_UNARY", "PRELUDE", "UNARY",
    "convert", "family", "numpy_convert",
]  # fmt: skip

_FAMILY: Final = {
    "bool": "bool",
    "uint8": "unsigned",
    "int8": "signed",
    "int32": "signed",
    "int64": "signed",
    "float16": "float",
    "float32": "float",
    "float64": "float",
    "bfloat16": "float",
}
_INTS: Final = ("unsigned", "signed")
_ALL: Final = ("bool", "unsigned", "signed", "float")


def family(dtype_name: str) -> str:
    """bool, unsigned, signed or float."""
    return _FAMILY[dtype_name]


def _same(expr: str, families: tuple[str, ...] = _ALL) -> dict[str, str]:
    return dict.fromkeys(families, expr)


_IDENTITY_INTS: Final = _same("x", ("bool", *_INTS))
#: Unary ops that are one function of C99, OpenCL C, CUDA and NumPy (float dtypes).
_C_MATH: Final = (
    "acos", "asin", "atan", "sinh", "cosh", "tan", "asinh", "acosh", "atanh", "log2", "log10",
    "exp2",
)  # fmt: skip

# Special functions whose C is em_<name>_{S}(x) in kernels/em_special.h and em_bessel.h.
_SPECIAL_UNARY: Final = (
    "erfcx", "ndtri", "i0", "i0e", "i1", "i1e", "bessel_j0", "bessel_j1", "bessel_y0",
    "bessel_y1", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1", "airy_ai", "spherical_bessel_j0",
)  # fmt: skip
_C_NAMES: Final = {"i0": "modified_bessel_i0", "i1": "modified_bessel_i1"}
# Orthogonal polynomials P_n(x) as binary ops (x, n), in kernels/em_polynomials.h.
_POLYNOMIALS: Final = tuple(
    f"{kind}_polynomial_{letter}"
    for kind, letters in (("chebyshev", "tuvw"), ("shifted_chebyshev", "tuvw"),
                          ("hermite", ("h", "he")), ("laguerre", "l"), ("legendre", "p"))
    for letter in letters
)  # fmt: skip

UNARY: Final[dict[str, dict[str, str]]] = {
    "neg": {**_same("(({T})(0 - ({U})x))", _INTS), "float": "(-x)"},
    "abs": {
        "bool": "x",
        "unsigned": "x",
        "signed": "(x < 0 ? ({T})(0 - ({U})x) : x)",
        "float": "fabs(x)",
    },
    "exp": {"float": "exp(x)"},
    "log": {"float": "log(x)"},
    "log1p": {"float": "log1p(x)"},
    "expm1": {"float": "expm1(x)"},
    "sqrt": {"float": "sqrt(x)"},
    "sin": {"float": "sin(x)"},
    "cos": {"float": "cos(x)"},
    "tanh": {"float": "tanh(x)"},
    # Standard C99 / OpenCL C / CUDA math functions; integer inputs arrive as floats.
    **{name: {"float": f"{name}(x)"} for name in _C_MATH},
    "erf": {"float": "erf(x)"},
    "floor": {**_IDENTITY_INTS, "float": "floor(x)"},
    "ceil": {**_IDENTITY_INTS, "float": "ceil(x)"},
    # Round half to even, as PyTorch does.
    "round": {**_IDENTITY_INTS, "float": "rint(x)"},
    "trunc": {**_IDENTITY_INTS, "float": "trunc(x)"},
    # PyTorch's sign: NaN gives 0 (both comparisons are false).
    "sign": {
        "bool": "x",
        "unsigned": "(x > 0)",
        "signed": "((x > 0) - (x < 0))",
        "float": "(({T})(x > 0) - ({T})(x < 0))",
    },
    "rsqrt": {"float": "(1 / sqrt(x))"},
    "reciprocal": {"float": "(1 / x)"},
    "sigmoid": {"float": "(1 / (1 + exp(-x)))"},
    # x < 0 is false for NaN and -0.0, which pass through as in PyTorch.
    "relu": {"bool": "x", "unsigned": "x", "signed": "(x < 0 ? 0 : x)", "float": "(x < 0 ? 0 : x)"},
    "gelu": {"float": "(x * 0.5{F} * (1 + erf(x * 0.70710678118654752440{F})))"},
    # Special functions: the em_* helpers are kernels/em_special.h, appended to PRELUDE.
    "lgamma": {"float": "lgamma(x)"},
    "digamma": {"float": "em_digamma_{S}(x)"},
    "erfinv": {"float": "em_erfinv_{S}(x)"},
    "erfc": {"float": "erfc(x)"},
    **{name: {"float": f"em_{_C_NAMES.get(name, name)}_{{S}}(x)"} for name in _SPECIAL_UNARY},
}


def _polynomial(name: str) -> dict[str, str]:
    return {"float": f"em_{name}_{{S}}(a, em_polynomial_degree_{{S}}(b))"}


def _wrapping(op: str) -> str:
    return f"(({{T}})(({{U}})a {op} ({{U}})b))"


INTEGER_DIVISIONS: Final = frozenset({"floor_divide", "trunc_divide", "remainder", "fmod"})

BINARY: Final[dict[str, dict[str, str]]] = {
    "add": {"bool": "(a | b)", **_same(_wrapping("+"), _INTS), "float": "(a + b)"},
    "sub": {**_same(_wrapping("-"), _INTS), "float": "(a - b)"},
    "mul": {"bool": "(a & b)", **_same(_wrapping("*"), _INTS), "float": "(a * b)"},
    "div": {"float": "(a / b)"},
    "floor_divide": {
        "unsigned": "(({T})(a / b))",
        "signed": "(({T})em_floor_div_s(a, b))",
        "float": "em_floor_div_{S}(a, b)",
    },
    "trunc_divide": {
        "unsigned": "(({T})(a / b))",
        "signed": "(({T})em_trunc_div_s(a, b))",
        "float": "trunc(a / b)",
    },
    "remainder": {
        "unsigned": "(({T})(a % b))",
        "signed": "(({T})em_remainder_s(a, b))",
        "float": "em_remainder_{S}(a, b)",
    },
    "fmod": {
        "unsigned": "(({T})(a % b))",
        "signed": "(({T})em_fmod_s(a, b))",
        "float": "fmod(a, b)",
    },
    "pow": {**_same("(({T})em_pow_s(a, b))", _INTS), "float": "pow(a, b)"},
    "atan2": {"float": "atan2(a, b)"},
    "hypot": {"float": "hypot(a, b)"},
    "copysign": {"float": "copysign(a, b)"},
    "nextafter": {"float": "nextafter(a, b)"},
    # NaN loses: C's fmax/fmin return the other operand, as PyTorch's fmax/fmin do.
    "fmax": {**_same("(a > b ? a : b)", ("bool", *_INTS)), "float": "fmax(a, b)"},
    "fmin": {**_same("(a < b ? a : b)", ("bool", *_INTS)), "float": "fmin(a, b)"},
    # Shifts by a negative amount or by the width or more give 0 (or -1 for a negative a
    # shifted right), as PyTorch's do; C leaves those undefined.
    "bitwise_left_shift": _same(
        "((em_u64)b >= 8 * sizeof({T}) ? ({T})0 : ({T})(({U})a << b))", _INTS
    ),
    "bitwise_right_shift": {
        "unsigned": "((em_u64)b >= 8 * sizeof({T}) ? ({T})0 : ({T})(a >> b))",
        "signed": "((em_u64)b >= 8 * sizeof({T}) ? ({T})(a < 0 ? -1 : 0) : ({T})(a >> b))",
    },
    # NaN wins: a is kept when a > b or a is NaN, else b (NaN when b is).
    "maximum": {
        **_same("(a > b ? a : b)", ("bool", *_INTS)),
        "float": "((a > b || a != a) ? a : b)",
    },
    "minimum": {
        **_same("(a < b ? a : b)", ("bool", *_INTS)),
        "float": "((a < b || a != a) ? a : b)",
    },
    "bitwise_and": _same("(a & b)", ("bool", *_INTS)),
    "bitwise_or": _same("(a | b)", ("bool", *_INTS)),
    "bitwise_xor": _same("(a ^ b)", ("bool", *_INTS)),
    "eq": _same("(a == b)"),
    "ne": _same("(a != b)"),
    "lt": _same("(a < b)"),
    "le": _same("(a <= b)"),
    "gt": _same("(a > b)"),
    "ge": _same("(a >= b)"),
    "logical_and": _same("((a != 0) & (b != 0))"),
    "logical_or": _same("((a != 0) | (b != 0))"),
    "logical_xor": _same("((a != 0) ^ (b != 0))"),
    "zeta": {"float": "em_zeta_{S}(a, b)"},
    "igamma": {"float": "em_igamma_{S}(a, b)"},
    "igammac": {"float": "em_igammac_{S}(a, b)"},
    **{name: _polynomial(name) for name in _POLYNOMIALS},
}


def convert(dst: str, src: str, dst_type: str) -> str:
    """copy_'s conversion of `x` (src compute value) before the dst store.

    As C casts on the CPU device: float to integer truncates toward zero, through int
    for the narrow integer types (long when either side is 8 bytes wide); anything to
    bool is x != 0 (the bool store does that).
    """
    if family(dst) in _INTS and family(src) == "float":
        wide = dst in ("int64",) or src == "float64"
        return f"(({dst_type})({'long' if wide else 'int'})x)"
    return "x"


_SPECIAL_HEADERS: Final = ("em_special.h", "em_bessel.h", "em_polynomials.h")
_LOCAL_INCLUDE: Final = re.compile(r'^#include "[a-z_]+\.h"\n', re.MULTILINE)


def _special_prelude() -> str:
    """kernels/em_special.h and the headers after it, for PRELUDE: their includes of each
    other and of the dialect dropped, and the one qualifier they take from the dialect
    defined (devices that include the dialect already keep theirs)."""
    folder = Path(__file__).parent / "kernels"
    qualifier = (
        "#ifndef EM_FN\n#ifdef __OPENCL_VERSION__\n"
        "#define EM_FN static inline __attribute__((always_inline))\n"
        "#else\n#define EM_FN static inline\n#endif\n#endif\n"
    )
    headers = ((folder / name).read_text() for name in _SPECIAL_HEADERS)
    return qualifier + "".join(_LOCAL_INCLUDE.sub("", text) for text in headers)


#: The C helpers that BINARY's expressions call (em_floor_div_s, em_pow_s, ...), valid as
#: C99 and as OpenCL C: a renderer puts it before its kernels. Integer helpers work in 64
#: bits; a divisor of -1 negates with wrap-around instead of trapping on INT_MIN / -1.
PRELUDE: Final = r"""
#ifdef __OPENCL_VERSION__
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define EM_HAS_DOUBLE 1
#endif
typedef long em_i64;
typedef ulong em_u64;
#else
#include <math.h>
#include <stdint.h>
#define EM_HAS_DOUBLE 1
typedef int64_t em_i64;
typedef uint64_t em_u64;
#endif
static inline em_i64 em_trunc_div_s(em_i64 a, em_i64 b) {
    return b == -1 ? (em_i64)(0 - (em_u64)a) : a / b;
}
static inline em_i64 em_floor_div_s(em_i64 a, em_i64 b) {
    if (b == -1) return (em_i64)(0 - (em_u64)a);
    const em_i64 q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}
static inline em_i64 em_fmod_s(em_i64 a, em_i64 b) { return b == -1 ? 0 : a % b; }
static inline em_i64 em_remainder_s(em_i64 a, em_i64 b) {
    if (b == -1) return 0;
    const em_i64 r = a % b;
    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
}
/* by squaring, wrapping; a negative exponent as PyTorch's powi (1, -1 or 0) */
static inline em_i64 em_pow_s(em_i64 a, em_i64 b) {
    if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
    em_u64 result = 1, base = (em_u64)a;
    while (b) {
        if (b & 1) result *= base;
        base *= base;
        b >>= 1;
    }
    return (em_i64)result;
}
/* PyTorch's floating floor division and remainder */
#define EM_FLOAT_HELPERS(T, SUF)                                       \
    static inline T em_floor_div_##SUF(T a, T b) {                     \
        if (b == 0) return a / b;                                      \
        const T mod = (T)fmod(a, b);                                   \
        T div = (a - mod) / b;                                         \
        if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;                \
        if (div == 0) return (T)copysign((T)0, a / b);                 \
        const T floored = (T)floor(div);                               \
        return div - floored > (T)0.5 ? floored + 1 : floored;         \
    }                                                                  \
    static inline T em_remainder_##SUF(T a, T b) {                     \
        const T mod = (T)fmod(a, b);                                   \
        return (mod != 0 && (b < 0) != (mod < 0)) ? mod + b : mod;     \
    }
EM_FLOAT_HELPERS(float, f)
#ifdef EM_HAS_DOUBLE
EM_FLOAT_HELPERS(double, d)
#endif
""" + _special_prelude()


# -- NumPy: the reference device's column (plugins/ember-numpy) ------------------------------
# Python expressions over NumPy arrays `x` (unary, copy) or `a`, `b` (binary), with `np`
# (NumPy) and `math` in scope, for exactly the (op, family) cells of UNARY and BINARY.
# `special` (ember.plugins.special_numpy) is in scope too, for the special functions.
# float16 operands arrive as float32 (as {T} in C) and every result is cast on store; NumPy
# integer arithmetic wraps as the C casts through {U} do.

_NP_ERF: Final = "np.vectorize(math.erf, otypes=[x.dtype])"
_NP_IDENTITY_INTS: Final = _same("x", ("bool", *_INTS))
_NP_NUMBERS: Final = (*_INTS, "float")


def _np_ufunc(name: str) -> dict[str, str]:
    return {"float": f"np.{name}(x)"}


def _np_math(name: str) -> dict[str, str]:
    # NumPy spells the inverse functions arccos, arcsinh, ...
    return _np_ufunc("arc" + name[1:] if name.startswith("a") else name)


NUMPY_UNARY: Final[dict[str, dict[str, str]]] = {
    "neg": _same("-x", _NP_NUMBERS),
    "abs": _same("np.abs(x)"),
    **{name: _np_ufunc(name) for name in ("exp", "log", "log1p", "expm1", "sqrt")},
    **{name: _np_ufunc(name) for name in ("sin", "cos", "tanh")},
    **{name: _np_math(name) for name in _C_MATH},
    "erf": {"float": f"{_NP_ERF}(x)"},
    "floor": {**_NP_IDENTITY_INTS, "float": "np.floor(x)"},
    "ceil": {**_NP_IDENTITY_INTS, "float": "np.ceil(x)"},
    "round": {**_NP_IDENTITY_INTS, "float": "np.rint(x)"},  # half to even
    "trunc": {**_NP_IDENTITY_INTS, "float": "np.trunc(x)"},
    # Comparisons, not np.sign: NaN gives 0 and -0.0 gives 0.0, as in PyTorch.
    "sign": {
        "bool": "x",
        "unsigned": "(x > 0).astype(x.dtype)",
        **_same("(x > 0).astype(x.dtype) - (x < 0)", ("signed", "float")),
    },
    "rsqrt": {"float": "1 / np.sqrt(x)"},
    "reciprocal": {"float": "1 / x"},
    "sigmoid": {"float": "1 / (1 + np.exp(-x))"},
    "relu": {
        **_same("x", ("bool", "unsigned")),
        **_same("np.where(x < 0, 0, x)", ("signed", "float")),
    },
    "gelu": {"float": f"x * 0.5 * (1 + {_NP_ERF}(x * 0.70710678118654752440))"},
    # `special` is ember.plugins.special_numpy.
    "lgamma": {"float": "special.lgamma(x)"},
    "digamma": {"float": "special.digamma(x)"},
    "erfinv": {"float": "special.erfinv(x)"},
    "erfc": {"float": "special.erfc(x)"},
    **{name: {"float": f"special.{name}(x)"} for name in _SPECIAL_UNARY},
}

NUMPY_BINARY: Final[dict[str, dict[str, str]]] = {
    "add": {"bool": "a | b", **_same("a + b", _NP_NUMBERS)},
    "sub": _same("a - b", _NP_NUMBERS),
    "mul": {"bool": "a & b", **_same("a * b", _NP_NUMBERS)},
    "div": {"float": "a / b"},
    "floor_divide": _same("a // b", _NP_NUMBERS),
    "trunc_divide": {
        "unsigned": "a // b",
        "signed": "a // b + ((a % b != 0) & ((a < 0) != (b < 0)))",
        "float": "np.trunc(a / b)",
    },
    # Floats as the C helper (not np.remainder, whose zeros take b's sign).
    "remainder": {
        **_same("a % b", _INTS),
        "float": "(lambda m: np.where((m != 0) & ((b < 0) != (m < 0)), m + b, m))(np.fmod(a, b))",
    },
    "fmod": {
        **_same("np.fmod(a, b)", ("unsigned", "float")),
        "signed": "np.fmod(a, np.where(b == -1, 1, b))",
    },
    # Negative integer exponents as PyTorch's powi: 1 and -1 keep their sign rule, else 0.
    "pow": {
        "unsigned": "a ** b",
        "signed": "np.where(b < 0, np.where(np.abs(a) == 1, a ** (b & 1), 0), "
        "a ** np.maximum(b, 0))",
        "float": "a ** b",
    },
    "atan2": {"float": "np.arctan2(a, b)"},
    "hypot": {"float": "np.hypot(a, b)"},
    "copysign": {"float": "np.copysign(a, b)"},
    "nextafter": {"float": "np.nextafter(a, b)"},
    "fmax": _same("np.fmax(a, b)"),
    "fmin": _same("np.fmin(a, b)"),
    "bitwise_left_shift": _same(
        "np.where(b.astype(np.uint64) >= 8 * a.itemsize, 0, "
        "np.left_shift(a, np.clip(b, 0, 8 * a.itemsize - 1).astype(a.dtype)))",
        _INTS,
    ),
    "bitwise_right_shift": _same(
        "np.where(b.astype(np.uint64) >= 8 * a.itemsize, np.where(a < 0, -1, 0), "
        "np.right_shift(a, np.clip(b, 0, 8 * a.itemsize - 1).astype(a.dtype)))",
        _INTS,
    ),
    "maximum": _same("np.maximum(a, b)"),  # NaN propagates
    "minimum": _same("np.minimum(a, b)"),
    "bitwise_and": _same("a & b", ("bool", *_INTS)),
    "bitwise_or": _same("a | b", ("bool", *_INTS)),
    "bitwise_xor": _same("a ^ b", ("bool", *_INTS)),
    "eq": _same("a == b"),
    "ne": _same("a != b"),
    "lt": _same("a < b"),
    "le": _same("a <= b"),
    "gt": _same("a > b"),
    "ge": _same("a >= b"),
    "logical_and": _same("np.logical_and(a, b)"),
    "logical_or": _same("np.logical_or(a, b)"),
    "logical_xor": _same("np.logical_xor(a, b)"),
    **{name: {"float": f"special.{name}(a, b)"} for name in ("zeta", "igamma", "igammac")},
    **{name: {"float": f"special.{name}(a, b)"} for name in _POLYNOMIALS},
}


def numpy_convert(dst: str, src: str) -> str:
    """copy_'s conversion of `x` (a NumPy array of dtype src) before the cast to dst: the
    same C casts as `convert` (float to integer through int32, or int64 when either side
    is 8 bytes wide); float64 to bfloat16 through float32, as c10::BFloat16 rounds."""
    if dst == "bfloat16" and src == "float64":
        return "x.astype(np.float32)"
    if family(dst) in _INTS and family(src) == "float":
        wide = dst == "int64" or src == "float64"
        return f"x.astype(np.{'int64' if wide else 'int32'})"
    return "x"
