"""Custom functions: ember.autograd.Function with PyTorch's ctx API and checks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from ember.autograd import Function, gradcheck, gradgradcheck

from ._helpers import leaf, ones_like, values


class Cube(Function):
    @staticmethod
    def forward(ctx: Any, x: ember.Tensor) -> ember.Tensor:
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx: Any, grad: ember.Tensor) -> ember.Tensor:
        (x,) = ctx.saved_tensors
        return grad * 3.0 * x * x


class ScaleBy(Function):
    """Non-tensor arguments, an attribute on ctx, and an output saved for backward."""

    @staticmethod
    def forward(ctx: Any, x: ember.Tensor, factor: float, name: str) -> ember.Tensor:
        ctx.factor = factor
        out = x.exp() * factor
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, grad: ember.Tensor) -> tuple[Any, ...]:
        (out,) = ctx.saved_tensors
        return grad * out, None, None


class SplitSigns(Function):
    """Two outputs, one marked non-differentiable."""

    @staticmethod
    def forward(ctx: Any, x: ember.Tensor) -> tuple[ember.Tensor, ember.Tensor]:
        positive = x > 0
        ctx.mark_non_differentiable(positive)
        ctx.save_for_backward(positive)
        return x * 2.0, positive

    @staticmethod
    def backward(ctx: Any, grad: ember.Tensor, grad_positive: Any) -> ember.Tensor:
        (_positive,) = ctx.saved_tensors
        return grad * 2.0


def test_forward_backward_and_node() -> None:
    x = leaf([1.0, -2.0])
    y = Cube.apply(x)
    assert y.requires_grad and y.grad_fn.name() == "CubeBackward"
    assert type(y.grad_fn).__name__ == "CubeBackward"
    assert y.grad_fn.next_functions == ((x.grad_fn or _accumulator(x), 0),)
    y.backward(ones_like(y))
    np.testing.assert_array_equal(values(x.grad), [3.0, 12.0])


def _accumulator(x: ember.Tensor) -> Any:
    return (x * 1.0).grad_fn.next_functions[0][0]


def test_gradcheck_and_double_backward() -> None:
    x = leaf([0.5, -1.5, 2.0])
    assert gradcheck(Cube.apply, (x,))
    assert gradgradcheck(Cube.apply, (x,))


def test_forward_runs_without_recording() -> None:
    seen: list[bool] = []

    class Probe(Function):
        @staticmethod
        def forward(ctx: Any, x: ember.Tensor) -> ember.Tensor:
            seen.append(ember.is_grad_enabled())
            out = x * 2.0
            seen.append(out.requires_grad)
            return out

        @staticmethod
        def backward(ctx: Any, grad: ember.Tensor) -> ember.Tensor:
            return grad * 2.0

    assert Probe.apply(leaf([1.0])).requires_grad
    assert seen == [False, False]


def test_non_tensor_arguments_and_saved_outputs() -> None:
    x = leaf([0.0, 1.0])
    y = ScaleBy.apply(x, 3.0, "label")
    assert y.grad_fn.factor == 3.0
    assert len(y.grad_fn.next_functions) == 1  # edges only for tensor arguments
    assert gradcheck(lambda t: ScaleBy.apply(t, 3.0, "label"), (x,))
    assert gradgradcheck(lambda t: ScaleBy.apply(t, 3.0, "label"), (x,))


def test_needs_input_grad() -> None:
    seen: list[tuple[bool, ...]] = []

    class Record(Function):
        @staticmethod
        def forward(ctx: Any, a: ember.Tensor, b: ember.Tensor, k: int) -> ember.Tensor:
            seen.append(ctx.needs_input_grad)
            return a * b

        @staticmethod
        def backward(ctx: Any, grad: ember.Tensor) -> tuple[Any, ...]:
            seen.append(ctx.needs_input_grad)
            return grad, None, None

    a, b = leaf([1.0]), ember.ones(1, dtype=ember.float64)
    Record.apply(a, b, 3).sum().backward()
    assert seen == [(True, False, False)] * 2


def test_multiple_outputs_and_non_differentiable_outputs() -> None:
    x = leaf([1.0, -1.0])
    doubled, positive = SplitSigns.apply(x)
    assert doubled.requires_grad and not positive.requires_grad
    assert doubled.grad_fn.num_outputs == 2
    doubled.sum().backward()
    np.testing.assert_array_equal(values(x.grad), [2.0, 2.0])


class TwoOutputs(Function):
    @staticmethod
    def forward(ctx: Any, x: ember.Tensor) -> tuple[ember.Tensor, ember.Tensor]:
        return x * 2.0, x * 3.0

    @staticmethod
    def backward(ctx: Any, ga: Any, gb: Any) -> ember.Tensor:
        ctx.received = (ga, gb)
        return ga * 2.0 + gb * 3.0


def test_unused_outputs_get_zero_gradients_by_default() -> None:
    x = leaf([1.0])
    a, _b = TwoOutputs.apply(x)
    a.sum().backward()
    received = a.grad_fn.received
    np.testing.assert_array_equal(values(received[1]), [0.0])
    np.testing.assert_array_equal(values(x.grad), [2.0])
    assert gradcheck(TwoOutputs.apply, (leaf([0.5, 1.5]),))


def test_set_materialize_grads_false_passes_none() -> None:
    class Lazy(Function):
        @staticmethod
        def forward(ctx: Any, x: ember.Tensor) -> tuple[ember.Tensor, ember.Tensor]:
            ctx.set_materialize_grads(False)
            return x * 2.0, x * 3.0

        @staticmethod
        def backward(ctx: Any, ga: Any, gb: Any) -> Any:
            ctx.received = (ga, gb)
            return ga * 2.0 if gb is None else ga * 2.0 + gb * 3.0

    x = leaf([1.0])
    a, _ = Lazy.apply(x)
    a.sum().backward()
    assert a.grad_fn.received[1] is None


def test_saved_tensors_are_version_checked() -> None:
    x = leaf([1.0, 2.0])
    hidden = x * 1.0
    y = Cube.apply(hidden)
    hidden.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward(ones_like(y))


def test_saved_tensors_are_freed_after_backward() -> None:
    x = leaf([1.0])
    y = Cube.apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.grad_fn.saved_tensors  # noqa: B018


def test_wrong_number_of_gradients() -> None:
    class TooMany(Function):
        @staticmethod
        def forward(ctx: Any, x: ember.Tensor) -> ember.Tensor:
            return x * 1.0

        @staticmethod
        def backward(ctx: Any, grad: ember.Tensor) -> tuple[Any, ...]:
            return grad, grad

    with pytest.raises(
        RuntimeError, match=r"returned an incorrect number of gradients \(expected 1, got 2\)"
    ):
        TooMany.apply(leaf([1.0])).sum().backward()


def test_trailing_none_gradients_are_allowed() -> None:
    class Extra(Function):
        @staticmethod
        def forward(ctx: Any, x: ember.Tensor) -> ember.Tensor:
            return x * 2.0

        @staticmethod
        def backward(ctx: Any, grad: ember.Tensor) -> tuple[Any, ...]:
            return grad * 2.0, None, None

    x = leaf([1.0])
    Extra.apply(x).sum().backward()
    np.testing.assert_array_equal(values(x.grad), [2.0])


def test_invalid_gradient_shape() -> None:
    class Bad(Function):
        @staticmethod
        def forward(ctx: Any, x: ember.Tensor) -> ember.Tensor:
            return x * 2.0

        @staticmethod
        def backward(ctx: Any, grad: ember.Tensor) -> ember.Tensor:
            return grad[:2]

    with pytest.raises(
        RuntimeError,
        match=r"Function BadBackward returned an invalid gradient at index 0 - got \[2\] but "
        r"expected shape compatible with \[3\]",
    ):
        Bad.apply(leaf([1.0, 2.0, 3.0])).sum().backward()


def test_broadcastable_gradient_is_summed_back() -> None:
    class Expands(Function):
        @staticmethod
        def forward(ctx: Any, x: ember.Tensor) -> ember.Tensor:
            return x * 1.0

        @staticmethod
        def backward(ctx: Any, grad: ember.Tensor) -> ember.Tensor:
            return ember.ones(3, 2, dtype=ember.float64)

    x = leaf([1.0, 2.0])
    Expands.apply(x).sum().backward()
    np.testing.assert_array_equal(values(x.grad), [3.0, 3.0])


def test_gradient_for_a_non_tensor_input_raises() -> None:
    class Wrong(Function):
        @staticmethod
        def forward(ctx: Any, x: ember.Tensor, k: float) -> ember.Tensor:
            return x * k

        @staticmethod
        def backward(ctx: Any, grad: ember.Tensor) -> tuple[Any, ...]:
            return grad, grad

    with pytest.raises(RuntimeError, match="returned a gradient different than None at position 2"):
        Wrong.apply(leaf([1.0]), 2.0).sum().backward()


def test_setup_context_style() -> None:
    class Square(Function):
        @staticmethod
        def forward(x: ember.Tensor) -> ember.Tensor:
            return x * x

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx: Any, grad: ember.Tensor) -> ember.Tensor:
            (x,) = ctx.saved_tensors
            return grad * 2.0 * x

    assert gradcheck(Square.apply, (leaf([1.0, -3.0]),))


def test_mark_dirty_in_place_function() -> None:
    class AddOneInPlace(Function):
        @staticmethod
        def forward(ctx: Any, x: ember.Tensor) -> ember.Tensor:
            x.add_(1.0)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx: Any, grad: ember.Tensor) -> ember.Tensor:
            return grad

    x = leaf([1.0, 2.0])
    hidden = x * 2.0
    out = AddOneInPlace.apply(hidden)
    assert out is hidden and hidden.grad_fn.name() == "AddOneInPlaceBackward"
    (out * out).sum().backward()
    np.testing.assert_array_equal(values(x.grad), 2 * 2 * np.array([3.0, 5.0]))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        AddOneInPlace.apply(leaf([1.0]))


def test_input_returned_unchanged_gets_its_own_history() -> None:
    class Identity(Function):
        @staticmethod
        def forward(ctx: Any, x: ember.Tensor) -> ember.Tensor:
            return x

        @staticmethod
        def backward(ctx: Any, grad: ember.Tensor) -> ember.Tensor:
            return grad * 5.0

    x = leaf([1.0])
    y = Identity.apply(x)
    assert y is not x and x.is_leaf and y.grad_fn.name() == "IdentityBackward"
    y.sum().backward()
    np.testing.assert_array_equal(values(x.grad), [5.0])


def test_no_graph_without_inputs_requiring_grad() -> None:
    out = Cube.apply(ember.ones(2, dtype=ember.float64))
    assert not out.requires_grad and out.grad_fn is None
    with ember.no_grad():
        assert not Cube.apply(leaf([1.0])).requires_grad


def test_functions_are_not_instantiated() -> None:
    with pytest.raises(RuntimeError, match="apply"):
        Cube()


def test_matches_torch_custom_function() -> None:
    torch = pytest.importorskip("torch")

    class TorchCube(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (x,) = ctx.saved_tensors
            return grad * 3 * x**2

    data = np.array([0.5, -1.25, 2.0])
    t = torch.tensor(data, requires_grad=True)
    (TorchCube.apply(t) * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
    e = leaf(data)
    (Cube.apply(e) * ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64)).sum().backward()
    np.testing.assert_allclose(values(e.grad), t.grad.numpy(), rtol=1e-15)


def test_once_differentiable_backward_records_nothing() -> None:
    class Once(Function):
        @staticmethod
        def forward(ctx: Any, x: ember.Tensor) -> ember.Tensor:
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @ember.autograd.once_differentiable
        def backward(ctx: Any, grad: ember.Tensor) -> ember.Tensor:
            (x,) = ctx.saved_tensors
            return grad * 2.0 * x

    x = leaf([3.0])
    (g,) = ember.autograd.grad(Once.apply(x).sum(), x, create_graph=True)
    np.testing.assert_array_equal(values(g), [6.0])
    assert not g.requires_grad
