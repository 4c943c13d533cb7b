"""The backward engine: accumulation, retain_graph, freeing, broadcasting, ordering, depth,
autograd.grad (allow_unused, create_graph, pruning), and gradient buffers never aliasing."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import numpy as np
import pytest

import ember
from ember.autograd import grad

from ._helpers import leaf, ones_like, values

SECOND_BACKWARD = "Trying to backward through the graph a second time"


def test_gradients_accumulate_across_backward_calls() -> None:
    x = leaf([1.0, 2.0, 3.0])
    (x * x).backward(ember.ones(3, dtype=ember.float64))
    np.testing.assert_array_equal(values(x.grad), [2.0, 4.0, 6.0])
    (x * 3.0).backward(ember.ones(3, dtype=ember.float64))
    np.testing.assert_array_equal(values(x.grad), [5.0, 7.0, 9.0])


def test_grad_of_a_reused_input_sums_every_path() -> None:
    x = leaf([2.0])
    y = x * x + x * 3.0 + x  # dy/dx = 2x + 4
    y.backward()
    np.testing.assert_array_equal(values(x.grad), [8.0])


def test_leaves_sharing_a_gradient_do_not_alias() -> None:
    """x + y hands the same gradient to both leaves; later accumulation into one leaf's
    .grad must not show up in the other's, nor in the gradient the caller passed."""
    x, y = leaf([1.0, 1.0]), leaf([1.0, 1.0])
    seed = ember.ones(2, dtype=ember.float64)
    (x + y).backward(seed)
    (x * 5.0).backward(seed)
    np.testing.assert_array_equal(values(x.grad), [6.0, 6.0])
    np.testing.assert_array_equal(values(y.grad), [1.0, 1.0])
    np.testing.assert_array_equal(values(seed), [1.0, 1.0])


def test_second_backward_without_retain_graph_raises() -> None:
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(values(x.grad), 2 * (np.exp([1.0, 2.0]) * [2.0, 3.0]))
    with pytest.raises(RuntimeError, match=SECOND_BACKWARD):
        y.backward()


def test_graph_without_saved_tensors_can_run_twice() -> None:
    """As in PyTorch: only saved tensors are freed, so add-only graphs run again."""
    x = leaf([1.0])
    y = x + 2.0
    y.backward()
    y.backward()
    np.testing.assert_array_equal(values(x.grad), [2.0])


def test_saved_tensors_are_freed_after_backward() -> None:
    x = leaf([1.0, 2.0])
    hidden = x * 2.0
    probe = weakref.ref(hidden)
    y = (hidden * hidden).sum()  # saves `hidden` twice
    del hidden
    gc.collect()
    assert probe() is not None
    y.backward()
    gc.collect()
    assert probe() is None, "the saved intermediate outlived backward"


def test_retain_graph_keeps_saved_tensors() -> None:
    x = leaf([1.0, 2.0])
    hidden = x * 2.0
    probe = weakref.ref(hidden)
    y = (hidden * hidden).sum()
    del hidden
    y.backward(retain_graph=True)
    gc.collect()
    assert probe() is not None


def test_broadcast_gradients_are_reduced_to_input_shapes() -> None:
    a = leaf(np.arange(3.0).reshape(3, 1))
    b = leaf(np.arange(4.0))
    c = leaf(2.0)
    out = a * b + c
    assert out.shape == (3, 4)
    out.backward(ember.ones(3, 4, dtype=ember.float64))
    np.testing.assert_array_equal(values(a.grad), np.full((3, 1), 6.0))
    np.testing.assert_array_equal(values(b.grad), np.full(4, 3.0))
    np.testing.assert_array_equal(values(c.grad), 12.0)
    assert a.grad.shape == a.shape and b.grad.shape == b.shape and c.grad.shape == ()


def test_gradient_dtype_follows_the_input() -> None:
    x = leaf([1.0, 2.0], ember.float32)
    y = x * ember.tensor([1.0, 1.0], dtype=ember.float64)
    y.backward(ember.ones(2, dtype=ember.float64))
    assert x.grad.dtype is ember.float32


def test_iterative_engine_handles_a_deep_chain() -> None:
    x = leaf([1.0])
    y = x
    for _ in range(20_000):
        y = y * 1.0001
    y.backward()
    np.testing.assert_allclose(values(x.grad), [1.0001**20_000], rtol=1e-9)


def _order_of_nodes(lib: Any) -> list[str]:
    """The order in which the nodes of a branching graph run (`lib` is ember or torch)."""
    x = lib.ones(2, dtype=lib.float64).requires_grad_()
    seen: list[str] = []
    a = x * 2.0
    b = x * 3.0
    c = a.exp() + b.sin()
    labels = {
        "a": a.grad_fn, "b": b.grad_fn, "exp": c.grad_fn.next_functions[0][0],
        "sin": c.grad_fn.next_functions[1][0],
    }  # fmt: skip
    for label, node in labels.items():
        node.register_prehook(lambda grads, label=label: seen.append(label))
    c.backward(lib.ones(2, dtype=lib.float64))
    return seen


def test_execution_order_is_deterministic_latest_first() -> None:
    """Ready nodes run latest-created first (PyTorch's tie-break), the same every time."""
    orders = {tuple(_order_of_nodes(ember)) for _ in range(5)}
    assert orders == {("sin", "exp", "b", "a")}


def test_execution_order_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    assert _order_of_nodes(ember) == _order_of_nodes(torch)


def test_backward_errors() -> None:
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        (x * 2.0).backward()
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        ember.ones(1).backward()
    with pytest.raises(RuntimeError, match="Mismatch in shape: grad_output\\[0\\]"):
        (x * 2.0).backward(ember.ones(3, dtype=ember.float64))


def test_backward_with_inputs_accumulates_only_there() -> None:
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    hidden = x * w
    (hidden * hidden).backward(ones_like(x), inputs=[w])
    assert x.grad is None
    np.testing.assert_array_equal(values(w.grad), 2 * np.array([3.0, 8.0]) * [1.0, 2.0])


def test_grad_returns_without_touching_dot_grad() -> None:
    x = leaf([1.0, 2.0])
    (g,) = grad((x * x).sum(), x)
    np.testing.assert_array_equal(values(g), [2.0, 4.0])
    assert x.grad is None


def test_grad_with_respect_to_a_non_leaf() -> None:
    x = leaf([1.0, 2.0])
    hidden = x * 3.0
    (g,) = grad((hidden * hidden).sum(), hidden)
    np.testing.assert_array_equal(values(g), [6.0, 12.0])


def test_grad_allow_unused_and_materialize() -> None:
    x, unused = leaf([1.0]), leaf([5.0])
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        grad((x * 2.0).sum(), [x, unused], retain_graph=True)
    y = (x * 2.0).sum()
    gx, gu = grad(y, [x, unused], allow_unused=True, retain_graph=True)
    assert gu is None and values(gx).tolist() == [2.0]
    gx, gu = grad(y, [x, unused], materialize_grads=True)
    assert values(gu).tolist() == [0.0]


def test_grad_only_runs_nodes_leading_to_the_inputs() -> None:
    x, other = leaf([1.0]), leaf([2.0])
    side = other.exp()
    fired: list[str] = []
    side.register_hook(lambda g: fired.append("side"))
    y = (x * 2.0 + side).sum()
    grad(y, x)
    assert fired == []


def test_create_graph_gives_higher_derivatives() -> None:
    x = leaf([1.5, -2.0])
    y = x * x * x
    (first,) = grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(values(first), 3 * np.array([1.5, -2.0]) ** 2)
    assert first.requires_grad
    (second,) = grad(first.sum(), x, create_graph=True)
    np.testing.assert_allclose(values(second), 6 * np.array([1.5, -2.0]))
    (third,) = grad(second.sum(), x)
    np.testing.assert_allclose(values(third), [6.0, 6.0])


def test_create_graph_through_saved_outputs() -> None:
    """exp saves its output: under create_graph it is differentiable again."""
    x = leaf([0.5])
    (first,) = grad(x.exp().sum(), x, create_graph=True)
    (second,) = grad(first.sum(), x)
    np.testing.assert_allclose(values(second), np.exp([0.5]))


def test_backward_create_graph_accumulates_a_differentiable_grad() -> None:
    x = leaf([2.0])
    (x * x * x).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    (g,) = grad(x.grad.sum(), x)
    np.testing.assert_allclose(values(g), [12.0])


def test_graph_is_not_recorded_during_plain_backward() -> None:
    x = leaf([1.0])
    (x * x).sum().backward()
    assert not x.grad.requires_grad and x.grad.grad_fn is None


def test_a_dropped_leaf_is_freed_and_skipped() -> None:
    """The graph refers to a leaf weakly: dropping it frees it and its gradient."""
    x = leaf([1.0])
    probe = weakref.ref(x)
    y = (x * 2.0).sum()
    del x
    gc.collect()
    assert probe() is None
    y.backward()  # nothing left to accumulate into
