"""Parity with PyTorch itself where it is installed (it is optional; skipped otherwise):
result_type for random operand pairs, and values of broadcast arithmetic."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import ember

from ._promotion_oracle import ORDER, as_ember

torch = pytest.importorskip("torch")

scalars = st.one_of(st.booleans(), st.integers(-3, 3), st.floats(-2, 2, allow_nan=False))
tensors = st.tuples(st.sampled_from(["tensor", "zerodim"]), st.sampled_from(ORDER))
operands = st.one_of(tensors, st.tuples(st.just("scalar"), scalars))


def _as_torch(operand):
    kind, value = operand
    if kind == "scalar":
        return value
    return torch.zeros((2,) if kind == "tensor" else (), dtype=getattr(torch, value))


@given(first=tensors, second=operands)
def test_result_type_matches_torch(first, second) -> None:
    want = str(torch.result_type(_as_torch(first), _as_torch(second))).removeprefix("torch.")
    if want == "int16":  # Ember has no int16; uint8 with int8 promotes to int32 instead
        want = "int32"
    assert ember.result_type(as_ember(first), as_ember(second)).name == want


@given(shapes=mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
def test_broadcast_arithmetic_matches_torch(shapes) -> None:
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal(s).astype(np.float32) for s in shapes.input_shapes)
    for op in ("add", "mul", "sub", "maximum"):
        got = np.asarray(getattr(ember, op)(ember.tensor(x), ember.tensor(y)))
        want = getattr(torch, op)(torch.from_numpy(x), torch.from_numpy(y)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6)
