"""Tensor hooks (leaf and non-leaf), retain_grad, post-accumulate-grad hooks, node hooks."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.autograd import grad

from ._helpers import leaf, ones_like, values


def test_leaf_hook_sees_and_replaces_the_gradient() -> None:
    x = leaf([1.0, 2.0])
    seen: list[list[float]] = []
    x.register_hook(lambda g: seen.append(values(g).tolist()))
    x.register_hook(lambda g: g * 10.0)
    (x * 3.0).backward(ones_like(x))
    assert seen == [[3.0, 3.0]]
    np.testing.assert_array_equal(values(x.grad), [30.0, 30.0])


def test_hooks_run_in_registration_order_each_seeing_the_last_replacement() -> None:
    x = leaf([1.0])
    order: list[str] = []

    def first(g: ember.Tensor) -> ember.Tensor:
        order.append(f"first:{values(g)[0]}")
        return g + 1.0

    def second(g: ember.Tensor) -> None:
        order.append(f"second:{values(g)[0]}")

    x.register_hook(first)
    x.register_hook(second)
    (x * 2.0).sum().backward()
    assert order == ["first:2.0", "second:3.0"]


def test_non_leaf_hook_changes_what_flows_upstream() -> None:
    x = leaf([1.0, 2.0])
    hidden = x * 2.0
    hidden.register_hook(lambda g: g * 0.5)
    (hidden * hidden).sum().backward()
    np.testing.assert_array_equal(values(x.grad), [4.0, 8.0])  # 2 * (2 * 2x) * 0.5


def test_removed_hooks_do_not_run() -> None:
    x = leaf([1.0])
    handle = x.register_hook(lambda g: g * 100.0)
    handle.remove()
    (x * 2.0).sum().backward()
    np.testing.assert_array_equal(values(x.grad), [2.0])
    y = x * 1.0
    with y.register_hook(lambda g: g * 100.0):
        pass
    y.sum().backward()
    np.testing.assert_array_equal(values(x.grad), [3.0])


def test_hook_requires_grad() -> None:
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        ember.ones(1).register_hook(lambda g: g)


def test_hooks_apply_to_grads_returned_by_autograd_grad() -> None:
    x = leaf([1.0])
    x.register_hook(lambda g: g * 10.0)
    (g,) = grad((x * 3.0).sum(), x)
    np.testing.assert_array_equal(values(g), [30.0])
    hidden = x * 1.0
    hidden.register_hook(lambda g: g * 7.0)
    (g,) = grad(hidden.sum(), hidden)
    np.testing.assert_array_equal(values(g), [7.0])


def test_retain_grad_keeps_non_leaf_gradients_after_hooks() -> None:
    x = leaf([1.0, 2.0])
    hidden = x * 2.0
    hidden.retain_grad()
    hidden.register_hook(lambda g: g * 5.0)  # registered later, still runs before retaining
    assert hidden.retains_grad
    out = (hidden * hidden).sum()
    out.backward(retain_graph=True)
    np.testing.assert_array_equal(values(hidden.grad), 5.0 * 2 * np.array([2.0, 4.0]))
    out.backward()
    np.testing.assert_array_equal(values(hidden.grad), 2 * 5.0 * 2 * np.array([2.0, 4.0]))


def test_retain_grad_on_leaf_is_a_no_op_and_requires_grad() -> None:
    x = leaf([1.0])
    x.retain_grad()
    assert not x.retains_grad
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad"):
        ember.ones(1).retain_grad()


def test_retained_grad_does_not_alias_leaf_grad() -> None:
    x = leaf([1.0])
    hidden = x + 0.0  # the gradient of hidden is handed to x unchanged
    hidden.retain_grad()
    hidden.sum().backward(retain_graph=True)
    hidden.sum().backward()
    np.testing.assert_array_equal(values(x.grad), [2.0])
    np.testing.assert_array_equal(values(hidden.grad), [2.0])


def test_post_accumulate_grad_hook() -> None:
    x = leaf([1.0, 2.0])
    seen: list[list[float]] = []
    handle = x.register_post_accumulate_grad_hook(lambda t: seen.append(values(t.grad).tolist()))
    (x * 2.0).sum().backward()
    (x * 3.0).sum().backward()
    assert seen == [[2.0, 2.0], [5.0, 5.0]]
    handle.remove()
    (x * 3.0).sum().backward()
    assert len(seen) == 2


def test_post_accumulate_grad_hook_can_update_the_leaf() -> None:
    """An optimizer step fused into backward, the hook's intended use."""
    w = leaf([1.0])

    def step(t: ember.Tensor) -> None:
        with ember.no_grad():
            t.sub_(t.grad * 0.5)
        t.grad = None

    w.register_post_accumulate_grad_hook(step)
    (w * 4.0).sum().backward()
    np.testing.assert_array_equal(values(w), [-1.0])
    assert w.grad is None


def test_post_accumulate_grad_hook_only_on_leaves() -> None:
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on"):
        (leaf([1.0]) * 2.0).register_post_accumulate_grad_hook(lambda t: None)


def test_node_hooks() -> None:
    x = leaf([1.0, 2.0])
    y = x * 3.0
    seen: list[str] = []

    def pre(grad_outputs: tuple) -> tuple:
        seen.append("pre")
        return (grad_outputs[0] * 2.0,)

    def post(grad_inputs: tuple, grad_outputs: tuple) -> tuple:
        seen.append("post")
        return (grad_inputs[0] + 1.0, grad_inputs[1])

    y.grad_fn.register_prehook(pre)
    y.grad_fn.register_hook(post)
    y.sum().backward()
    assert seen == ["pre", "post"]
    np.testing.assert_array_equal(values(x.grad), [7.0, 7.0])


def test_assigning_grad() -> None:
    x = leaf([1.0, 2.0])
    x.grad = ember.ones(2, dtype=ember.float64)
    (x * 2.0).sum().backward()
    np.testing.assert_array_equal(values(x.grad), [3.0, 3.0])
    x.grad = None
    assert x.grad is None
    with pytest.raises(RuntimeError, match="different size"):
        x.grad = ember.ones(3, dtype=ember.float64)
    with pytest.raises(TypeError):
        x.grad = 1.0  # type: ignore[assignment]
