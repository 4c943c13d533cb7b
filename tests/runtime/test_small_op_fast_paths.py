"""The small-op fast paths (elementwise `_binary`, `out=`, `sum()`, `item()`, result_type)
give exactly what the general paths give: dtypes, values, errors and versions."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import _dtype

ALL_DTYPES = [
    ember.bool, ember.uint8, ember.int8, ember.int32, ember.int64,
    ember.float16, ember.float32, ember.float64,
]  # fmt: skip
OPS = ["add", "sub", "mul", "div", "maximum", "bitwise_and", "eq", "lt", "logical_xor"]


def _values(dt: ember.dtype, shape: tuple[int, ...], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dt is ember.bool:
        return rng.random(shape) < 0.5
    return rng.integers(1, 5, shape).astype(dt.numpy)


def _outcome(fn: object, *args: object) -> tuple[str, object, object]:
    try:
        r = fn(*args)  # type: ignore[operator]
    except Exception as e:  # the error type is what the tests compare
        return ("error", type(e), None)
    return ("ok", r.dtype, repr(r.numpy().tolist()))  # repr: nan equals nan


def _via_general(name: str, a: object, b: object) -> tuple[str, object, object]:
    from ember._ops import _binary_general, names

    return _outcome(
        lambda x, y: _binary_general.binary_general(names.BINARY[name], x, y, None), a, b
    )


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("dt", ALL_DTYPES)
def test_same_dtype_pairs_match_the_general_path(name: str, dt: ember.dtype) -> None:
    a = ember.from_numpy(_values(dt, (3,), 0))
    b = ember.from_numpy(_values(dt, (3,), 1))
    row = ember.from_numpy(_values(dt, (2, 3), 2))
    fn = getattr(ember, name)
    assert _outcome(fn, a, b) == _via_general(name, a, b)
    assert _outcome(fn, row, a) == _via_general(name, row, a)  # broadcast
    assert _outcome(fn, a, row) == _via_general(name, a, row)
    for scalar in (2, 2.5, True):
        assert _outcome(fn, a, scalar) == _via_general(name, a, scalar)
        assert _outcome(fn, scalar, a) == _via_general(name, scalar, a)


def test_non_broadcastable_shapes_raise() -> None:
    with pytest.raises(RuntimeError, match="broadcastable"):
        ember.ones(3) + ember.ones(4)


@pytest.mark.parametrize("dt", ALL_DTYPES)
def test_out_matches_and_bumps_the_version(dt: ember.dtype) -> None:
    a = ember.from_numpy(_values(dt, (4,), 0))
    b = ember.from_numpy(_values(dt, (4,), 1))
    out = ember.empty(4, dtype=dt)
    version = out._storage.version
    expected = _via_general("maximum", a, b)
    assert ember.maximum(a, b, out=out) is out
    assert ("ok", out.dtype, repr(out.numpy().tolist())) == expected
    assert out._storage.version == version + 1


def test_out_aliasing_an_operand_exactly_is_in_place() -> None:
    a = ember.tensor([1.0, 2.0])
    ember.add(a, a, out=a)
    assert a.tolist() == [2.0, 4.0]


def test_out_partially_overlapping_an_operand_raises() -> None:
    base = ember.arange(5, dtype=ember.float32)
    with pytest.raises(RuntimeError, match="single memory location"):
        ember.add(base[1:], base[1:], out=base[:4])


def test_out_with_grad_raises() -> None:
    a = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="automatic"):
        ember.add(a, a, out=ember.empty(2))


def test_int_ops_dont_record_and_float_ops_do() -> None:
    a = ember.ones(2, requires_grad=True)
    assert (a * a).grad_fn is not None
    assert (a < a).grad_fn is None
    i = ember.ones(2, dtype=ember.int64)
    assert (i * i).dtype is ember.int64


@pytest.mark.parametrize("dt", ALL_DTYPES)
def test_item_reads_every_dtype(dt: ember.dtype) -> None:
    values = _values(dt, (3,), 0)
    t = ember.from_numpy(values)
    for i in range(3):
        got = t[i].item()
        assert got == values[i].item()
        assert type(got) is type(values[i].item())
    with pytest.raises(RuntimeError, match="3 elements"):
        t.item()


def test_float_item_keeps_float32_rounding() -> None:
    assert ember.tensor(0.1).item() == float(np.float32(0.1))


def test_sum_of_non_contiguous_and_0d_inputs() -> None:
    m = ember.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    s = m.T.sum()
    assert s.shape == () and s.item() == 15.0
    assert m.sum().shape == () and m.sum().item() == 15.0
    assert ember.tensor(3.0).sum().item() == 3.0


def test_result_type_pairs() -> None:
    f = ember.ones(2)
    i = ember.ones(2, dtype=ember.int64)
    z = ember.tensor(1.0, dtype=ember.float64)
    assert _dtype.result_type(f, i) is ember.float32
    assert _dtype.result_type(f, z) is ember.float32  # a 0-d tensor of one category
    assert _dtype.result_type(i, z) is ember.float64  # a 0-d tensor of a higher category
    assert _dtype.result_type(z, ember.tensor(1, dtype=ember.int8)) is ember.float64
