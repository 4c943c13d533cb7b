"""split's backward (SplitBackward0): the pieces' gradients concatenated, or, when they
already lie side by side in one storage, that memory taken whole; values equal either way
and equal to PyTorch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from ember._ops._unbind_grad import _adjacent


def test_adjacent_views_are_taken_whole() -> None:
    buffer = ember.arange(24.0).reshape(2, 12)
    pieces = list(buffer.split(4, dim=1))
    whole = _adjacent(pieces, 1)
    assert whole is not None
    assert whole.data_ptr() == buffer.data_ptr() and whole.shape == buffer.shape
    np.testing.assert_array_equal(whole.numpy(), buffer.numpy())


@pytest.mark.parametrize(
    "pieces",
    [
        lambda b: [b[:, 4:8], b[:, 0:4]],  # out of order
        lambda b: [b[:, 0:4], b[:, 5:9]],  # a gap
        lambda b: [b[:, 0:4], b[:, 4:8].clone()],  # another storage
        lambda b: [b[:, 0:4], None],  # a piece without gradient
        lambda b: [b[:, :1].expand(2, 3), b[:, :1].expand(2, 3)],  # zero stride
    ],
)
def test_anything_else_is_not(pieces: Any) -> None:
    assert _adjacent(pieces(ember.arange(24.0).reshape(2, 12)), 1) is None


def test_graph_gradients_are_not_taken_as_views() -> None:
    x = ember.ones(2, 6, requires_grad=True)
    assert _adjacent(list((x * 2).split(3, dim=1)), 1) is None


def test_split_gradients_match_torch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    values = rng.normal(size=(3, 10))
    weights = [rng.normal(size=(3, n)) for n in (4, 4, 2)]
    grads = []
    for lib in (ember, torch):
        x = lib.tensor(values, requires_grad=True)
        pieces = x.split(4, dim=1)
        sum(((p * lib.tensor(w)).sum() for p, w in zip(pieces, weights, strict=True))).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)
