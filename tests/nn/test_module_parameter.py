"""`ember.nn.Parameter`: a leaf Tensor subclass; ops on it compute correctly and return Tensors."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import ember
from ember import nn


def test_parameter_is_a_tensor_and_a_leaf_sharing_storage() -> None:
    data = ember.tensor([1.0, 2.0, 3.0])
    p = nn.Parameter(data)
    assert isinstance(p, ember.Tensor)
    assert isinstance(p, nn.Parameter)
    assert not isinstance(data, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert p.shape == (3,) and p.dtype is ember.float32
    data[0] = 10.0  # shares storage with data, as PyTorch's Parameter(data) does
    assert p.tolist() == [10.0, 2.0, 3.0]


def test_parameter_of_a_non_leaf_is_a_detached_leaf() -> None:
    x = ember.tensor([1.0, 2.0]).requires_grad_()
    p = nn.Parameter(x * 2.0)
    assert p.is_leaf and p.requires_grad and p.grad_fn is None


def test_parameter_without_grad_and_default_data() -> None:
    p = nn.Parameter(ember.tensor([1, 2]), requires_grad=False)
    assert not p.requires_grad and p.dtype is ember.int64
    empty = nn.Parameter()
    assert empty.shape == (0,) and empty.requires_grad


def test_integer_parameter_cannot_require_grad() -> None:
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(ember.tensor([1, 2]))


def test_parameter_rejects_non_tensors() -> None:
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        nn.Parameter([1.0])  # type: ignore[arg-type]


def test_parameter_repr_matches_pytorch() -> None:
    torch = pytest.importorskip("torch")
    p = nn.Parameter(ember.tensor([1.0, 2.0]))
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    assert repr(p) == repr(torch.nn.Parameter(torch.tensor([1.0, 2.0])))


def test_ops_on_parameters_compute_correctly_and_return_plain_tensors() -> None:
    a_np = np.array([[1.0, -2.0], [3.0, 0.5]])
    b_np = np.array([[0.5, 4.0], [-1.0, 2.0]])
    a = nn.Parameter(ember.tensor(a_np, dtype=ember.float64))
    b = nn.Parameter(ember.tensor(b_np, dtype=ember.float64))
    results = {
        "add": (a + b, a_np + b_np),
        "mul_scalar": (a * 3.0, a_np * 3.0),
        "rsub": (1.0 - a, 1.0 - a_np),
        "matmul": (a @ b, a_np @ b_np),
        "exp": (a.exp(), np.exp(a_np)),
        "transpose": (a.t(), a_np.T),
        "reshape": (a.reshape(4), a_np.reshape(4)),
        "index": (a[1], a_np[1]),
        "detach": (a.detach(), a_np),
    }
    for name, (result, expected) in results.items():
        assert type(result) is ember.Tensor, name
        np.testing.assert_allclose(result.detach().numpy(), expected, err_msg=name)


def test_gradients_flow_into_parameters() -> None:
    w = nn.Parameter(ember.tensor([2.0, -3.0]))
    x = ember.tensor([4.0, 5.0])
    (w * x * w).backward(ember.tensor([1.0, 1.0]))
    np.testing.assert_allclose(w.grad.numpy(), 2 * w.detach().numpy() * x.numpy())
    assert type(w.grad) is ember.Tensor


def test_in_place_update_under_no_grad_keeps_the_parameter() -> None:
    w = nn.Parameter(ember.tensor([1.0, 2.0]))
    with ember.no_grad():
        w.sub_(ember.tensor([0.5, 0.5]))
    assert isinstance(w, nn.Parameter) and w.requires_grad
    assert w.tolist() == [0.5, 1.5]


def test_deepcopy_copies_values_and_keeps_the_type() -> None:
    w = nn.Parameter(ember.tensor([1.0, 2.0]))
    twin = copy.deepcopy(w)
    assert isinstance(twin, nn.Parameter) and twin.requires_grad and twin is not w
    with ember.no_grad():
        w.zero_()
    assert twin.tolist() == [1.0, 2.0]
    memo = {id(w): twin}
    assert copy.deepcopy(w, memo) is twin
