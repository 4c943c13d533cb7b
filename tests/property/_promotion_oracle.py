"""PyTorch's type promotion, written out independently of Ember's implementation.

The pairwise table is copied from PyTorch's `promoteTypes` (c10/core/ScalarType.cpp)
for the dtypes Ember has, with one documented difference: PyTorch promotes uint8 with
int8 to int16, which Ember lacks, so Ember uses int32. `result_type` follows
`at::native::result_type`: dimensioned tensors, then zero-dim tensors, then Python
scalars (wrapped numbers), combined with `combine_categories`.
"""

from __future__ import annotations

from typing import Any

import ember

ORDER = ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64"]
_TABLE = """
         bool     uint8    int8     int32    int64    float16  float32  float64
bool     bool     uint8    int8     int32    int64    float16  float32  float64
uint8    uint8    uint8    int32    int32    int64    float16  float32  float64
int8     int8     int32    int8     int32    int64    float16  float32  float64
int32    int32    int32    int32    int32    int64    float16  float32  float64
int64    int64    int64    int64    int64    int64    float16  float32  float64
float16  float16  float16  float16  float16  float16  float16  float32  float64
float32  float32  float32  float32  float32  float32  float32  float32  float64
float64  float64  float64  float64  float64  float64  float64  float64  float64
"""
PROMOTE: dict[tuple[str, str], str] = {}
for _line in _TABLE.strip().splitlines()[1:]:
    _row, *_cells = _line.split()
    for _column, _cell in zip(ORDER, _cells, strict=True):
        PROMOTE[_row, _column] = _cell


def _is_float(name: str | None) -> bool:
    return name is not None and name.startswith("float")


def _promote(a: str | None, b: str | None) -> str | None:
    if a is None:
        return b
    if b is None:
        return a
    return PROMOTE[a, b]


def _combine_categories(higher: str | None, lower: str | None) -> str | None:
    if _is_float(higher):
        return higher
    if higher == "bool" or _is_float(lower):
        return _promote(higher, lower)
    return higher if higher is not None else lower


def result_type(operands: list[tuple[str, Any]], default_float: str = "float32") -> str:
    """operands: ("tensor", dtype name), ("zerodim", dtype name) or ("scalar", value)."""
    dim = zero = wrapped = None
    for kind, value in operands:
        if kind == "tensor":
            dim = _promote(dim, value)
        elif kind == "zerodim":
            zero = _promote(zero, value)
        else:
            name = (
                "bool" if isinstance(value, bool)
                else "int64" if isinstance(value, int)
                else default_float
            )  # fmt: skip
            wrapped = _promote(wrapped, name)
    result = _combine_categories(dim, _combine_categories(zero, wrapped))
    assert result is not None
    return result


def as_ember(operand: tuple[str, Any]) -> Any:
    """The Ember operand for an oracle operand (tensors of zeros)."""
    kind, value = operand
    if kind == "scalar":
        return value
    dtype = getattr(ember, value)
    return ember.zeros((2,) if kind == "tensor" else (), dtype=dtype)
