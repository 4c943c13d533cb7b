"""Type promotion properties: ember.result_type and the dtype of real ops follow PyTorch's
rules (an independent oracle, _promotion_oracle.py), with scalars as weak types and
zero-dim tensors ranking between dimensioned tensors and scalars."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ember

from ._promotion_oracle import ORDER, PROMOTE, as_ember, result_type

dtype_names = st.sampled_from(ORDER)
scalars = st.one_of(st.booleans(), st.integers(-3, 3), st.floats(-2, 2, allow_nan=False))
tensors = st.tuples(st.sampled_from(["tensor", "zerodim"]), dtype_names)
operands = st.one_of(tensors, st.tuples(st.just("scalar"), scalars))
operand_lists = st.lists(operands, min_size=1, max_size=4).filter(
    lambda ops: any(kind != "scalar" for kind, _ in ops)
)


@pytest.mark.parametrize("a", ORDER)
@pytest.mark.parametrize("b", ORDER)
def test_promote_types_table(a: str, b: str) -> None:
    promoted = ember.promote_types(getattr(ember, a), getattr(ember, b))
    assert promoted is getattr(ember, PROMOTE[a, b])


@given(ops=operand_lists)
def test_result_type_matches_pytorch_rules(ops) -> None:
    assert ember.result_type(*[as_ember(op) for op in ops]).name == result_type(ops)


@given(ops=operand_lists)
def test_result_type_under_float64_default(ops) -> None:
    ember.set_default_dtype(ember.float64)
    try:
        got = ember.result_type(*[as_ember(op) for op in ops]).name
    finally:
        ember.set_default_dtype(ember.float32)
    assert got == result_type(ops, default_float="float64")


@given(first=tensors, second=operands)
def test_binary_ops_return_the_promoted_dtype(first, second) -> None:
    a, b = as_ember(first), as_ember(second)
    want = result_type([first, second])
    assert ember.add(a, b).dtype.name == want
    assert ember.mul(b, a).dtype.name == want
    assert ember.maximum(a, a).dtype is a.dtype
    assert ember.lt(a, b).dtype is ember.bool
    if want != "bool":
        assert ember.sub(a, b).dtype.name == want
    true_divide = ember.div(a, b).dtype
    assert true_divide.name == (want if want.startswith("float") else "float32")


def test_documented_examples() -> None:
    int32 = ember.zeros(2, dtype=ember.int32)
    assert ember.result_type(int32, 2.5) is ember.float32
    assert ember.result_type(int32, ember.zeros((), dtype=ember.int64)) is ember.int32
    assert ember.result_type(int32, ember.zeros((), dtype=ember.float64)) is ember.float64
    assert ember.result_type(ember.zeros(2, dtype=ember.float16), 1.0) is ember.float16
    assert ember.result_type(ember.zeros(2, dtype=ember.uint8), -1) is ember.uint8
    assert ember.result_type(ember.zeros(2, dtype=ember.bool), 1) is ember.int64
    assert ember.result_type(ember.zeros(2, dtype=ember.bool), True) is ember.bool
    assert ember.result_type(ember.zeros((), dtype=ember.int8), 1.0) is ember.float32
