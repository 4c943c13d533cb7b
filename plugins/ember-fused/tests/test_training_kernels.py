"""ember-fused's cpu kernels for Ember's fusable training composites (layer_norm and its
backward, the GELU derivative): registered under the SDK's op names, equal to PyTorch's
values and gradients, to the composites' (the numpy device runs them), and to finite
differences, in float32 (the C path) and float64 (the kernels' ember-ops path)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember import library
from ember.plugins import ops

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(5)
LayerNormArgs = tuple[np.ndarray, np.ndarray | None, np.ndarray | None]


def _loaded() -> None:
    ember.ones(1)  # plugins load with the first device use


@pytest.mark.parametrize("op", [ops.LAYER_NORM, ops.LAYER_NORM_BACKWARD, ops.GELU_BACKWARD])
def test_registered_for_cpu_by_the_plugin(op: str) -> None:
    _loaded()
    supplier = library.explain(op, "cpu")
    assert "ember_fused" in str(supplier)


def _layer_norm(
    lib: Any, device: str, dtype: Any, arrays: LayerNormArgs, grad: np.ndarray
) -> list[np.ndarray]:
    x, w, b = (
        None if a is None else lib.tensor(a, dtype=dtype, device=device).requires_grad_()
        for a in arrays
    )
    y = lib.nn.functional.layer_norm(x, (arrays[0].shape[-1],), w, b, eps=1e-5)
    y.backward(lib.tensor(grad, dtype=dtype, device=device))
    results = [y, x.grad] + [t.grad for t in (w, b) if t is not None]
    return [np.asarray(r.detach().cpu().numpy(), dtype=np.float64) for r in results]


def _inputs(shape: tuple[int, ...], weight: bool, bias: bool) -> LayerNormArgs:
    cols = shape[-1]
    x = RNG.normal(1.0, 2.0, size=shape)
    return (
        x,
        RNG.uniform(0.5, 1.5, size=cols) if weight else None,
        RNG.normal(size=cols) if bias else None,
    )


@pytest.mark.parametrize("shape", [(4, 7, 33), (1, 128), (5, 1), (2, 3, 200)])
@pytest.mark.parametrize("affine", [(True, True), (True, False), (False, True), (False, False)])
def test_layer_norm_matches_torch_and_the_composite(
    shape: tuple[int, ...], affine: tuple[bool, bool]
) -> None:
    arrays = _inputs(shape, *affine)
    grad = RNG.normal(size=shape)
    fused = _layer_norm(ember, "cpu", ember.float32, arrays, grad)
    composite = _layer_norm(ember, "numpy", ember.float32, arrays, grad)
    reference = _layer_norm(torch, "cpu", torch.float32, arrays, grad)
    assert len(fused) == len(reference) == len(composite)
    for got, want, other in zip(fused, reference, composite, strict=True):
        scale = max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-5 * scale)
        np.testing.assert_allclose(got, other, rtol=1e-4, atol=2e-5 * scale)


def test_layer_norm_float64_matches_torch() -> None:
    arrays = _inputs((3, 9, 17), True, True)
    grad = RNG.normal(size=(3, 9, 17))
    fused = _layer_norm(ember, "cpu", ember.float64, arrays, grad)
    reference = _layer_norm(torch, "cpu", torch.float64, arrays, grad)
    for got, want in zip(fused, reference, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def _directional(
    f: Callable[[ember.Tensor], ember.Tensor], x: np.ndarray, step: float
) -> tuple[float, float]:
    """(autograd's, central difference's) derivative of sum(f(x) * r) along a random v."""
    r, v = RNG.normal(size=x.shape), RNG.normal(size=x.shape)
    probe = ember.tensor(r, dtype=ember.float32)
    leaf = ember.tensor(x, dtype=ember.float32).requires_grad_()
    (f(leaf) * probe).sum().backward()
    analytic = float((leaf.grad.numpy().astype(np.float64) * v).sum())

    def value(point: np.ndarray) -> float:
        with ember.no_grad():
            out = f(ember.tensor(point, dtype=ember.float32))
        return float((out.numpy().astype(np.float64) * r).sum())

    numeric = (value(x + step * v) - value(x - step * v)) / (2 * step)
    return analytic, numeric


def test_layer_norm_float32_gradient_by_finite_differences() -> None:
    weight = ember.tensor(RNG.uniform(0.5, 1.5, size=24), dtype=ember.float32)
    bias = ember.tensor(RNG.normal(size=24), dtype=ember.float32)
    analytic, numeric = _directional(
        lambda t: ember.nn.functional.layer_norm(t, (24,), weight, bias),
        RNG.normal(size=(6, 24)),
        1e-2,
    )
    assert analytic == pytest.approx(numeric, rel=2e-2, abs=1e-2)


def test_layer_norm_gradcheck_float64() -> None:
    x = ember.tensor(RNG.normal(size=(3, 6)), dtype=ember.float64, requires_grad=True)
    w = ember.tensor(RNG.uniform(0.5, 1.5, 6), dtype=ember.float64, requires_grad=True)
    b = ember.tensor(RNG.normal(size=6), dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(
        lambda x, w, b: ember.nn.functional.layer_norm(x, (6,), w, b), (x, w, b)
    )


def test_layer_norm_double_backward_uses_the_composite() -> None:
    arrays = _inputs((2, 5), True, True)

    def second(lib: Any) -> np.ndarray:
        x, w, b = (lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays)
        y = lib.nn.functional.layer_norm(x, (5,), w, b)
        (gx,) = lib.autograd.grad((y * y * y).sum(), x, create_graph=True)
        (ggx,) = lib.autograd.grad(gx.sum(), x)
        return np.asarray(ggx.detach().numpy())

    np.testing.assert_allclose(second(ember), second(torch), rtol=1e-8, atol=1e-10)


def test_layer_norm_keeps_its_errors() -> None:
    with pytest.raises(RuntimeError, match="normalized_shape"):
        ember.nn.functional.layer_norm(ember.ones(2, 3), (4,))


def _gelu(lib: Any, device: str, dtype: Any, x: np.ndarray, grad: np.ndarray) -> list[np.ndarray]:
    leaf = lib.tensor(x, dtype=dtype, device=device).requires_grad_()
    y = lib.nn.functional.gelu(leaf)
    y.backward(lib.tensor(grad, dtype=dtype, device=device))
    return [np.asarray(t.detach().cpu().numpy(), dtype=np.float64) for t in (y, leaf.grad)]


@pytest.mark.parametrize("shape", [(1000,), (3, 5, 7), (0, 4)])
def test_gelu_backward_matches_torch_and_the_composite(shape: tuple[int, ...]) -> None:
    x = RNG.normal(0.0, 3.0, size=shape)
    x.flat[:3] = [0.0, -8.0, 8.0][: x.size]
    grad = RNG.normal(size=shape)
    fused = _gelu(ember, "cpu", ember.float32, x, grad)
    composite = _gelu(ember, "numpy", ember.float32, x, grad)
    reference = _gelu(torch, "cpu", torch.float32, x, grad)
    for got, want, other in zip(fused, reference, composite, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got, other, rtol=1e-5, atol=1e-6)


def test_gelu_backward_of_a_strided_input() -> None:
    x = RNG.normal(size=(6, 8))
    leaf = ember.tensor(x, dtype=ember.float32, requires_grad=True)
    ember.nn.functional.gelu(leaf.t()).sum().backward()
    reference = torch.tensor(x, dtype=torch.float32, requires_grad=True)
    torch.nn.functional.gelu(reference.t()).sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), reference.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_gelu_float32_gradient_by_finite_differences() -> None:
    analytic, numeric = _directional(ember.nn.functional.gelu, RNG.normal(size=(50,)), 1e-2)
    assert analytic == pytest.approx(numeric, rel=1e-2, abs=1e-2)


def test_gelu_gradcheck_float64_and_double_backward() -> None:
    x = ember.tensor(RNG.normal(size=(7,)), dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(ember.nn.functional.gelu, (x,))
    assert ember.autograd.gradgradcheck(ember.nn.functional.gelu, (x,))
