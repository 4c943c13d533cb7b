"""In-place views, resize_ and the small Tensor queries, side by side with torch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

CASES: list[tuple[str, Callable[[Any], Any]]] = [
    ("squeeze_", lambda t: t.squeeze_()),
    ("squeeze_dim", lambda t: t.squeeze_(1)),
    ("unsqueeze_", lambda t: t.unsqueeze_(-1)),
    ("t_", lambda t: t.reshape(2, 3).t_()),
    ("transpose_", lambda t: t.transpose_(0, 2)),
    ("swapaxes_", lambda t: t.swapaxes_(0, 1)),
    ("swapdims_", lambda t: t.swapdims_(2, 0)),
    ("as_strided_", lambda t: t.as_strided_((2, 2), (1, 3), 1)),
]


@pytest.mark.parametrize(("name", "change"), CASES, ids=[c[0] for c in CASES])
def test_in_place_views_match_torch(name: str, change: Callable[[Any], Any]) -> None:
    data = np.arange(6.0).reshape(2, 1, 3)
    ours, theirs = ember.tensor(data), torch.tensor(data)
    a, b = change(ours), change(theirs)
    assert tuple(a.shape) == tuple(b.shape) and a.stride() == b.stride()
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    if name != "t_":  # t_ acts on a reshaped copy here
        assert a is ours


def test_gradients_flow_through_an_in_place_view_as_in_torch() -> None:
    grads = []
    for mk in (ember, torch):
        w = mk.tensor([[1.0], [2.0]], requires_grad=True)
        h = w * 3
        h.squeeze_().unsqueeze_(0)
        (h * mk.tensor([[1.0, 5.0]])).sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


def test_in_place_view_of_a_leaf_that_requires_grad_is_refused() -> None:
    w = ember.ones(2, 1, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.squeeze_()
    assert tuple(w.shape) == (2, 1)  # left intact
    with ember.no_grad():
        w.squeeze_()  # allowed without grad mode, as in torch
    assert tuple(w.shape) == (2,)


@pytest.mark.parametrize("size", [(2, 2), (2, 3), (0,), (3, 4)])
def test_resize_keeps_the_leading_values_like_torch(size: tuple[int, ...]) -> None:
    ours, theirs = ember.arange(6.0), torch.arange(6.0)
    a, b = ours.resize_(*size), theirs.resize_(*size)
    assert a is ours and tuple(a.shape) == size and a.is_contiguous()
    keep = min(6, int(np.prod(size)))
    np.testing.assert_array_equal(a.reshape(-1)[:keep].numpy(), b.reshape(-1)[:keep].numpy())
    with pytest.raises(RuntimeError, match="require grad"):
        ember.ones(2, requires_grad=True).resize_(3)
    assert ember.zeros(2).resize_as_(ember.ones(3, 1)).shape == (3, 1)


def test_sum_to_size_and_conjugate_transposes_match_torch() -> None:
    data = np.random.default_rng(0).normal(size=(2, 3, 4))
    ours, theirs = ember.tensor(data), torch.tensor(data)
    for size in [(3, 1), (1, 3, 4), (2, 1, 1), (4,)]:
        np.testing.assert_allclose(
            ours.sum_to_size(*size).numpy(), theirs.sum_to_size(*size).numpy(), rtol=1e-12
        )
    with pytest.raises(RuntimeError, match="not expandable"):
        ours.sum_to_size(2, 4)
    np.testing.assert_array_equal(ours.mH.numpy(), theirs.mH.numpy())
    np.testing.assert_array_equal(ours[0].H.numpy(), theirs[0].H.numpy())
    with pytest.raises(RuntimeError, match="2-D"):
        _ = ours.H


def test_new_and_the_small_queries() -> None:
    x = ember.ones(2, dtype=ember.float64)
    assert x.new(3).shape == (3,) and x.new(3).dtype == ember.float64
    assert x.new([1, 2]).tolist() == [1.0, 2.0] and x.new().shape == (0,)
    y = x.new_empty_strided((2, 3), (1, 2))
    assert y.stride() == (1, 2) and y.dtype == ember.float64
    assert x.const_data_ptr() == x.data_ptr()
    assert x.is_pinned() is False
    assert x.is_set_to(x) and not x.is_set_to(x.clone())
    if not ember.cuda.is_available():
        with pytest.raises(RuntimeError):
            x.cuda()
