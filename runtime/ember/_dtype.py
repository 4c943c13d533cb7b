"""Data types and PyTorch's type-promotion rules."""

from __future__ import annotations

import builtins
from typing import Any, Final

import ml_dtypes
import numpy as np

__all__ = [
    "bfloat16",
    "bool",
    "dtype",
    "float16",
    "float32",
    "float64",
    "get_default_dtype",
    "int8",
    "int32",
    "int64",
    "promote_types",
    "result_type",
    "set_default_dtype",
    "uint8",
]

_BOOL, _INT, _FLOAT = 0, 1, 2  # promotion categories
_pybool = bool  # the builtin, before this module's `bool` dtype shadows it


class dtype:
    """An element type: `ember.float32`, `ember.int64`, ..."""

    __slots__ = ("category", "index", "is_floating_point", "is_signed", "itemsize", "name", "numpy")

    def __init__(self, name: str, index: int, numpy_dtype: np.dtype, category: int) -> None:
        self.name: Final = name
        # Small integer that device kernels use to switch on the type (shared by all devices).
        self.index: Final = index
        self.numpy: Final = numpy_dtype
        self.itemsize: Final = numpy_dtype.itemsize
        self.category: Final = category
        self.is_floating_point: Final = category == _FLOAT
        self.is_signed: Final = category == _FLOAT or numpy_dtype.kind == "i"

    def __repr__(self) -> str:
        return f"ember.{self.name}"

    def __reduce__(self) -> str:
        return self.name

    @property
    def is_complex(self) -> builtins.bool:
        return False


bool = dtype("bool", 0, np.dtype(np.bool_), _BOOL)
uint8 = dtype("uint8", 1, np.dtype(np.uint8), _INT)
int8 = dtype("int8", 2, np.dtype(np.int8), _INT)
int32 = dtype("int32", 3, np.dtype(np.int32), _INT)
int64 = dtype("int64", 4, np.dtype(np.int64), _INT)
float16 = dtype("float16", 5, np.dtype(np.float16), _FLOAT)
float32 = dtype("float32", 6, np.dtype(np.float32), _FLOAT)
float64 = dtype("float64", 7, np.dtype(np.float64), _FLOAT)
# NumPy has no bfloat16; ml_dtypes provides it as a NumPy dtype (storage and interop only:
# devices compute it in float). Appended last, so the indices above stay what kernels use.
bfloat16 = dtype("bfloat16", 8, np.dtype(ml_dtypes.bfloat16), _FLOAT)

ALL_DTYPES: Final = (bool, uint8, int8, int32, int64, float16, float32, float64, bfloat16)
BY_INDEX: Final = ALL_DTYPES
FROM_NUMPY: Final = {d.numpy: d for d in ALL_DTYPES}
BY_NAME: Final = {d.name: d for d in ALL_DTYPES}

_default_float: dtype = float32


def get_default_dtype() -> dtype:
    """The floating-point dtype of factories and float Python scalars (float32)."""
    return _default_float


def set_default_dtype(d: dtype) -> None:
    """Set the default floating-point dtype (float32 or float64 or float16)."""
    global _default_float
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"set_default_dtype: only floating-point types are supported, got {d!r}")
    _default_float = d


def _build_promotion_table() -> dict[tuple[dtype, dtype], dtype]:
    # Within a category the wider type wins; uint8 with a signed int goes to the signed
    # type that holds both (int8+uint8 -> int16 in PyTorch; int16 is absent, so int32).
    table: dict[tuple[dtype, dtype], dtype] = {}
    ints = {uint8: 0, int8: 1, int32: 2, int64: 3}
    # float16 and bfloat16 hold each other only in float32 (PyTorch's table).
    floats = {float16: 0, bfloat16: 0, float32: 1, float64: 2}
    for a in ALL_DTYPES:
        for b in ALL_DTYPES:
            if a is b:
                result = a
            elif a.category != b.category:
                result = a if a.category > b.category else b
            elif a.category == _INT:
                mixed_sign = {a, b} == {uint8, int8}
                result = int32 if mixed_sign else (a if ints[a] > ints[b] else b)
            elif floats[a] == floats[b]:
                result = float32
            else:
                result = a if floats[a] > floats[b] else b
            table[a, b] = result
    return table


_PROMOTE: Final = _build_promotion_table()


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both `a` and `b` convert to (PyTorch's table)."""
    return _PROMOTE[a, b]


def scalar_category(value: object) -> int:
    """Promotion category of a Python scalar (a "weak" type)."""
    if isinstance(value, _pybool):
        return _BOOL
    if isinstance(value, int):
        return _INT
    return _FLOAT


def default_for_category(category: int) -> dtype:
    """The dtype a Python scalar of that category becomes on its own."""
    if category == _FLOAT:
        return _default_float
    return int64 if category == _INT else bool


# ember._tensor.Tensor, imported on first use, once per process: the tensor layer sits
# above this one and imports it.
_Tensor: Any = None


def _load_tensor_type() -> Any:
    global _Tensor
    from ember._tensor import Tensor

    _Tensor = Tensor
    return Tensor


def result_type(*operands: object) -> dtype:
    """PyTorch's result type for tensors and Python scalars.

    Three priority tiers: dimensioned tensors, then zero-dim tensors, then Python scalars.
    A lower tier only matters when its category (bool < integer < float) is higher than
    everything in the tiers above it.
    """
    Tensor = _Tensor
    if Tensor is None:
        Tensor = _load_tensor_type()
    a: Any
    b: Any
    operand: Any
    if len(operands) == 2:
        # Two tensors (the common case): one table lookup when both or neither are 0-d.
        a, b = operands
        if type(a) is Tensor and type(b) is Tensor:
            da, db = a._dtype, b._dtype
            if da is db:
                return da
            if (not a._shape) == (not b._shape):
                return _PROMOTE[da, db]
    dim_result: dtype | None = None
    zero_result: dtype | None = None
    scalar_category_max = -1
    for operand in operands:
        if isinstance(operand, Tensor):
            if operand.ndim > 0:
                d = operand.dtype
                dim_result = d if dim_result is None else _PROMOTE[dim_result, d]
            else:
                d = operand.dtype
                zero_result = d if zero_result is None else _PROMOTE[zero_result, d]
        elif isinstance(operand, dtype):
            dim_result = operand if dim_result is None else _PROMOTE[dim_result, operand]
        else:
            scalar_category_max = max(scalar_category_max, scalar_category(operand))
    result = dim_result
    if zero_result is not None and (result is None or zero_result.category > result.category):
        result = zero_result
    if scalar_category_max >= 0 and (result is None or scalar_category_max > result.category):
        result = default_for_category(scalar_category_max)
    if result is None:
        raise TypeError("result_type: expected at least one tensor or scalar operand")
    return result
