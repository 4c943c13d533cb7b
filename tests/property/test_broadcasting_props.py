"""Broadcasting properties: Ember's result shapes are NumPy's, and Ember raises exactly when
NumPy does (RuntimeError, naming the shapes)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import ember

shapes = st.lists(st.integers(0, 3), max_size=4).map(tuple)


def _values(shape: tuple, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(-9, 10, size=shape).astype(np.float32)


def _broadcast_or_none(*shapes_: tuple) -> tuple | None:
    try:
        return np.broadcast_shapes(*shapes_)
    except ValueError:
        return None


@given(a=shapes, b=shapes)
def test_binary_op_broadcasts_like_numpy(a: tuple, b: tuple) -> None:
    x, y = _values(a, 1), _values(b, 2)
    expected = _broadcast_or_none(a, b)
    if expected is None:
        with pytest.raises(RuntimeError) as error:
            ember.add(ember.tensor(x), ember.tensor(y))
        assert str(list(a)) in str(error.value) and str(list(b)) in str(error.value)
        return
    result = ember.add(ember.tensor(x), ember.tensor(y))
    assert tuple(result.shape) == expected
    np.testing.assert_array_equal(np.asarray(result), x + y)


@given(shapes_=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=3))
def test_compatible_shapes_always_broadcast(shapes_) -> None:
    a, b = shapes_.input_shapes
    x, y = _values(a, 3), _values(b, 4)
    result = ember.mul(ember.tensor(x), ember.tensor(y))
    assert tuple(result.shape) == shapes_.result_shape
    np.testing.assert_array_equal(np.asarray(result), x * y)
    assert tuple((ember.tensor(x) < ember.tensor(y)).shape) == shapes_.result_shape


@given(shapes_=mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, max_side=3))
def test_where_broadcasts_three_operands(shapes_) -> None:
    c, a, b = shapes_.input_shapes
    condition = _values(c, 5) > 0
    x, y = _values(a, 6), _values(b, 7)
    result = ember.where(ember.tensor(condition), ember.tensor(x), ember.tensor(y))
    assert tuple(result.shape) == shapes_.result_shape
    np.testing.assert_array_equal(np.asarray(result), np.where(condition, x, y))


@given(source=shapes, target=shapes)
def test_expand_succeeds_exactly_when_numpy_broadcast_to_does(source: tuple, target: tuple) -> None:
    x = _values(source, 8)
    try:
        expected = np.broadcast_to(x, target)
    except ValueError:
        with pytest.raises(RuntimeError):
            ember.tensor(x).expand(target)
        return
    base = ember.tensor(x)
    view = base.expand(target)
    assert tuple(view.shape) == target
    assert view.untyped_storage() is base.untyped_storage()
    np.testing.assert_array_equal(np.asarray(view), expected)


@given(a=shapes, b=shapes)
def test_inplace_broadcast_only_into_the_target_shape(a: tuple, b: tuple) -> None:
    x, y = _values(a, 9), _values(b, 10)
    target = ember.tensor(x)
    if _broadcast_or_none(a, b) == a:
        target.add_(ember.tensor(y))
        np.testing.assert_array_equal(np.asarray(target), x + y)
    else:
        with pytest.raises(RuntimeError):
            target.add_(ember.tensor(y))
        np.testing.assert_array_equal(np.asarray(target), x)
