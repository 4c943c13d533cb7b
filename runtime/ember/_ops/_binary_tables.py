"""The fast paths' tables: per binary op, the dtypes for which skipping promotion gives
exactly what `binary_general` would, and per dtype what the fast path needs at once
(result dtype, contiguous plans, whether autograd records), so that a call does one
lookup instead of set tests plus flags."""

from __future__ import annotations

from ember import _dtype
from ember._dispatch import Op
from ember._ops._binary_general import (
    FLOAT_ONLY,
    INT_CHECKED,
    INTEGRAL_ONLY,
    NO_BOOL,
    OP_FLAGS,
    TO_BOOL,
)
from ember._plan import FlatPlans, flat_plans

__all__ = ["FAST", "SAME_OUT", "WITH_FLOAT", "WITH_INT", "ScalarEntry", "fast_sets"]

_bool = _dtype.bool


def fast_sets(flags: int) -> tuple[frozenset[_dtype.dtype], ...]:
    """Per op: the dtypes whose fast paths give exactly what `binary_general` would.

    (tensor with a same-dtype tensor, tensor with a Python float, tensor with a Python int.)
    Those paths skip promotion, so they exclude every case where promotion changes the
    dtype (int / int is float, int tensor * float is float, bool + int is int64) or where
    the general path raises (bitwise ops on floats, bool - bool).
    """
    floats = frozenset(d for d in _dtype.ALL_DTYPES if d.is_floating_point)
    ints = frozenset(d for d in _dtype.ALL_DTYPES if d.category == 1)
    same = frozenset(_dtype.ALL_DTYPES)
    if flags & INTEGRAL_ONLY:
        same -= floats
    if flags & FLOAT_ONLY:
        same &= floats
    if flags & NO_BOOL:
        same -= {_bool}
    none: frozenset[_dtype.dtype] = frozenset()
    if flags & INT_CHECKED:
        same -= ints | {_bool}
    float_scalar = none if flags & INTEGRAL_ONLY else floats
    int_scalar = float_scalar | (none if flags & (FLOAT_ONLY | INT_CHECKED) else ints)
    return same, float_scalar, int_scalar


# Per op: (same-dtype tensor pair, tensor with float, tensor with int) fast-path dtypes.
FAST: dict[Op, tuple[frozenset[_dtype.dtype], ...]] = {
    op: fast_sets(OP_FLAGS[op]) for op in OP_FLAGS
}
# Per op: the result dtype, the contiguous plans and whether autograd records it (a float
# result) of each dtype of the same-dtype tensor pair fast path (one lookup on the hot path
# instead of a set test plus the flags).
SAME_OUT: dict[Op, dict[_dtype.dtype, tuple[_dtype.dtype, FlatPlans, bool]]] = {
    op: {
        dt: (out, flat_plans((out, dt, dt)), out.is_floating_point)
        for dt in FAST[op][0]
        for out in [_bool if OP_FLAGS[op] & TO_BOOL else dt]
    }
    for op in OP_FLAGS
}

# Per op and tensor dtype: the result dtype, the contiguous plans (the scalar second, then
# first) and whether autograd records it, of tensor-with-scalar calls: a Python float, then
# a Python int.
ScalarEntry = tuple[_dtype.dtype, FlatPlans, FlatPlans, bool]


def _scalar_entries(op: Op, dtypes: frozenset[_dtype.dtype]) -> dict[_dtype.dtype, ScalarEntry]:
    entries = {}
    for dt in dtypes:
        out = _bool if OP_FLAGS[op] & TO_BOOL else dt
        plans = flat_plans((out, dt, dt), 2), flat_plans((out, dt, dt), 1)
        entries[dt] = (out, *plans, out.is_floating_point)
    return entries


WITH_FLOAT: dict[Op, dict[_dtype.dtype, ScalarEntry]] = {
    op: _scalar_entries(op, FAST[op][1]) for op in OP_FLAGS
}
WITH_INT: dict[Op, dict[_dtype.dtype, ScalarEntry]] = {
    op: _scalar_entries(op, FAST[op][2]) for op in OP_FLAGS
}
