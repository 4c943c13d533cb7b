"""Version counters: in-place changes to tensors saved for backward raise PyTorch's error
at backward; in-place ops on leaves that require grad raise at once."""

from __future__ import annotations

import numpy as np
import pytest

import ember

from ._helpers import leaf, ones_like, values

MODIFIED = "one of the variables needed for gradient computation has been modified by an inplace"
LEAF = "a leaf Variable that requires grad is being used in an in-place operation."


def test_modifying_a_saved_input_raises_at_backward() -> None:
    x = leaf([1.0, 2.0])
    hidden = x * 2.0
    out = hidden * hidden  # saves hidden
    hidden.add_(1.0)
    with pytest.raises(RuntimeError, match=MODIFIED) as info:
        out.backward(ones_like(out))
    message = str(info.value)
    assert "[ember.float64 [2]], which is output 0 of MulBackward," in message
    assert "is at version 1; expected version 0 instead." in message
    assert "Hint: enable anomaly detection" in message


def test_modifying_a_saved_output_raises_at_backward() -> None:
    x = leaf([1.0, 2.0])
    y = x.exp()  # saves its output
    y.mul_(2.0)
    with pytest.raises(RuntimeError, match=MODIFIED) as info:
        y.backward(ones_like(y))
    assert "which is output 0 of ExpBackward," in str(info.value)


def test_modifying_through_a_view_or_detached_alias_raises() -> None:
    x = leaf([1.0, 2.0])
    y = x.exp()
    y.detach()[0] = 5.0
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward(ones_like(y))


def test_setitem_on_a_saved_tensor_raises() -> None:
    x = leaf([1.0, 2.0])
    hidden = x * 1.0
    out = hidden.sin()
    hidden[0] = 3.0
    with pytest.raises(RuntimeError, match=MODIFIED):
        out.backward(ones_like(out))


def test_unsaved_tensors_may_be_modified() -> None:
    x = leaf([1.0, 2.0])
    hidden = x * 2.0
    out = hidden + 1.0  # add saves nothing
    hidden.mul_(10.0)
    out.backward(ones_like(out))
    np.testing.assert_array_equal(values(x.grad), [2.0, 2.0])


def test_in_place_op_on_a_graph_tensor_continues_the_graph() -> None:
    x = leaf([1.0, 2.0])
    y = x * 3.0
    y.mul_(y)  # y = (3x)^2
    assert y.grad_fn.name() == "MulBackward"
    y.backward(ones_like(y))
    np.testing.assert_array_equal(values(x.grad), 18.0 * np.array([1.0, 2.0]))


@pytest.mark.parametrize(
    "op",
    [
        lambda t: t.add_(1.0),
        lambda t: t.mul_(2.0),
        lambda t: t.exp_(),
        lambda t: t.relu_(),
        lambda t: t.clamp_(0.0, 1.0),
        lambda t: t.fill_(1.0),
        lambda t: t.zero_(),
        lambda t: t.copy_(ember.ones(2, dtype=ember.float64)),
        lambda t: t.masked_fill_(ember.tensor([True, False]), 0.0),
        lambda t: t.scatter_(0, ember.tensor([1]), 0.0),
        lambda t: t.__setitem__(0, 2.0),
    ],
    ids=[
        "add_", "mul_", "exp_", "relu_", "clamp_", "fill_", "zero_", "copy_", "masked_fill_",
        "scatter_", "setitem",
    ],
)  # fmt: skip
def test_in_place_on_leaf_requiring_grad_raises(op) -> None:
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=LEAF):
        op(x)
    np.testing.assert_array_equal(values(x), [1.0, 2.0])


def test_in_place_ops_bump_the_version() -> None:
    x = ember.ones(3)
    start = x._version
    x.add_(1.0)
    x[0] = 2.0
    x.fill_(3.0)
    assert x._version == start + 3
