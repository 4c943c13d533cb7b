"""The C expression of every elementwise op, per dtype family, for cl/elementwise.cl.

Expressions are in `x` (unary, copy) or `a`, `b` (binary), the operands in their
compute type ({T}: float for float16). Placeholders: {T} compute type, {U} the unsigned
type of the same width, {S} the float helper suffix (f or d), {F} the float-literal
suffix. A family missing from an op's row means "not for this dtype"; the semantics are
the CPU device's (devices/cpu/ember_cpu/csrc/elementwise*.c). An integer division by
zero sets the kernel's error flag (EM_ZERO_DIVISION), and the host raises.
"""

from __future__ import annotations

from typing import Final

__all__ = ["BINARY", "INTEGER_DIVISIONS", "UNARY", "convert", "family"]

_FAMILY: Final = {
    "bool": "bool",
    "uint8": "unsigned",
    "int8": "signed",
    "int32": "signed",
    "int64": "signed",
    "float16": "float",
    "float32": "float",
    "float64": "float",
}
_INTS: Final = ("unsigned", "signed")
_ALL: Final = ("bool", "unsigned", "signed", "float")


def family(dtype_name: str) -> str:
    """bool, unsigned, signed or float."""
    return _FAMILY[dtype_name]


def _same(expr: str, families: tuple[str, ...] = _ALL) -> dict[str, str]:
    return dict.fromkeys(families, expr)


_IDENTITY_INTS: Final = _same("x", ("bool", *_INTS))

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
}


def _wrapping(op: str) -> str:
    return f"(({{T}})(({{U}})a {op} ({{U}})b))"


INTEGER_DIVISIONS: Final = frozenset({"floor_divide", "trunc_divide", "remainder", "fmod"})

BINARY: Final[dict[str, dict[str, str]]] = {
    "add": {"bool": "(a | b)", **_same(_wrapping("+"), _INTS), "float": "(a + b)"},
    "sub": {**_same(_wrapping("-"), _INTS), "float": "(a - b)"},
    "mul": {"bool": "(a & b)", **_same(_wrapping("*"), _INTS), "float": "(a * b)"},
    "div": {"float": "(a / b)"},
    "floor_divide": {
        "unsigned": "(b == 0 ? EM_ZERO_DIVISION({T}) : ({T})(a / b))",
        "signed": "(b == 0 ? EM_ZERO_DIVISION({T}) : ({T})em_floor_div_s(a, b))",
        "float": "em_floor_div_{S}(a, b)",
    },
    "trunc_divide": {
        "unsigned": "(b == 0 ? EM_ZERO_DIVISION({T}) : ({T})(a / b))",
        "signed": "(b == 0 ? EM_ZERO_DIVISION({T}) : ({T})em_trunc_div_s(a, b))",
        "float": "trunc(a / b)",
    },
    "remainder": {
        "unsigned": "(b == 0 ? EM_ZERO_DIVISION({T}) : ({T})(a % b))",
        "signed": "(b == 0 ? EM_ZERO_DIVISION({T}) : ({T})em_remainder_s(a, b))",
        "float": "em_remainder_{S}(a, b)",
    },
    "fmod": {
        "unsigned": "(b == 0 ? EM_ZERO_DIVISION({T}) : ({T})(a % b))",
        "signed": "(b == 0 ? EM_ZERO_DIVISION({T}) : ({T})em_fmod_s(a, b))",
        "float": "fmod(a, b)",
    },
    "pow": {**_same("(({T})em_pow_s(a, b))", _INTS), "float": "pow(a, b)"},
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
