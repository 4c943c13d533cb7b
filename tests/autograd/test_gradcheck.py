"""gradcheck and gradgradcheck: they pass correct gradients and catch wrong ones."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import ember
from ember.autograd import Function, GradcheckError, gradcheck, gradgradcheck

from ._helpers import leaf


class WrongSlope(Function):
    """d/dx sin(x) claimed to be 2 cos(x)."""

    @staticmethod
    def forward(ctx: Any, x: ember.Tensor) -> ember.Tensor:
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx: Any, grad: ember.Tensor) -> ember.Tensor:
        (x,) = ctx.saved_tensors
        return grad * x.cos() * 2.0


class FlatBackward(Function):
    """A correct first derivative of x**3 whose backward is not differentiable in x: it
    reads x from a detached copy, so the second derivative comes out as zero."""

    @staticmethod
    def forward(ctx: Any, x: ember.Tensor) -> ember.Tensor:
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx: Any, grad: ember.Tensor) -> ember.Tensor:
        (x,) = ctx.saved_tensors
        frozen = x.detach()
        return grad * 3.0 * frozen * frozen


def test_passes_correct_gradients() -> None:
    x, y = leaf([0.3, -1.2]), leaf([[2.0], [0.5]])
    assert gradcheck(lambda a, b: (a * b).exp() / (1.0 + b * b), (x, y))


def test_accepts_a_single_tensor_and_multiple_outputs() -> None:
    x = leaf([0.3, -1.2])
    assert gradcheck(lambda a: a.sin(), x)
    assert gradcheck(lambda a: (a.sin(), a * 2.0, a > 0), (x,))


def test_catches_a_wrong_gradient() -> None:
    x = leaf([0.3, -1.2, 2.0])
    with pytest.raises(
        GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"
    ):
        gradcheck(WrongSlope.apply, (x,))
    assert gradcheck(WrongSlope.apply, (x,), raise_exception=False) is False
    assert issubclass(GradcheckError, RuntimeError)


def test_tolerances_apply() -> None:
    x = leaf([0.3])
    assert gradcheck(WrongSlope.apply, (x,), atol=10.0)


def test_non_tensor_and_constant_inputs_are_skipped() -> None:
    x, c = leaf([0.3, 0.4]), ember.tensor([2.0, 3.0], dtype=ember.float64)
    assert gradcheck(lambda a, k, b: a * k * b, (x, 2.5, c))


def test_warns_about_single_precision_inputs() -> None:
    x = leaf([0.5, 1.0], ember.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gradcheck(lambda a: a * 2.0, (x,), eps=1e-3, atol=1e-3, rtol=1e-2)
    assert any("not a double precision floating point" in str(w.message) for w in caught)


def test_requires_an_input_requiring_grad() -> None:
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda a: a * 2.0, (ember.ones(2, dtype=ember.float64),))


def _numpy_slope(scale: float) -> type[Function]:
    """sin, whose backward is NumPy's central difference of sin times `scale`."""

    class NumpySlope(Function):
        @staticmethod
        def forward(ctx: Any, x: ember.Tensor) -> ember.Tensor:
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx: Any, grad: ember.Tensor) -> ember.Tensor:
            (x,) = ctx.saved_tensors
            data = x.detach().numpy()
            slope = (np.sin(data + 1e-5) - np.sin(data - 1e-5)) / 2e-5 * scale
            return grad * ember.tensor(slope)

    return NumpySlope


def test_numerical_side_agrees_with_independent_differences() -> None:
    """A backward that returns NumPy's central differences passes; 1% off fails."""
    x = leaf([0.3, -1.2, 2.0])
    assert gradcheck(_numpy_slope(1.0).apply, (x,))
    assert not gradcheck(_numpy_slope(1.01).apply, (x,), raise_exception=False)


def test_gradgradcheck_passes_and_catches_a_flat_second_derivative() -> None:
    x = leaf([0.5, -1.5])
    assert gradgradcheck(lambda a: a * a * a, (x,))
    assert gradcheck(FlatBackward.apply, (x,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradgradcheck(FlatBackward.apply, (x,))


def test_gradgradcheck_with_given_grad_outputs() -> None:
    x = leaf([0.5, -1.5])
    v = leaf([1.0, 2.0])
    assert gradgradcheck(lambda a: a.exp() * a, (x,), (v,))


def test_agrees_with_torch_gradcheck() -> None:
    torch = pytest.importorskip("torch")
    data = np.array([[0.2, -0.7], [1.1, 0.4]])
    t = torch.tensor(data, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a: (a.sin() * a).sum(0), (t,))
    assert gradcheck(lambda a: (a.sin() * a).sum(0), (leaf(data),))
