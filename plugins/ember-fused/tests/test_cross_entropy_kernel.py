"""ember-fused's cpu `cross_entropy` kernels behind F.cross_entropy with class indices:
losses and gradients equal to PyTorch's, to the composite's (the numpy device runs it)
and to finite differences, for every reduction; the cases it must leave to the composite
(weights, smoothing, ignored targets, probabilities, N-d input) still agree with torch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from ember import library
from ember.plugins import ops

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(13)


def _run(
    lib: Any, device: str, dtype: Any, x: np.ndarray, y: np.ndarray, **options: Any
) -> list[np.ndarray]:
    logits = lib.tensor(x, dtype=dtype, device=device, requires_grad=True)
    loss = lib.nn.functional.cross_entropy(logits, lib.tensor(y, device=device), **options)
    weights = lib.tensor(np.linspace(0.5, 1.5, loss.numel()), dtype=dtype, device=device)
    (loss.reshape(-1) * weights).sum().backward()
    return [np.asarray(t.detach().cpu().numpy(), dtype=np.float64) for t in (loss, logits.grad)]


def test_registered_for_cpu_by_the_plugin() -> None:
    ember.ones(1)
    for op in (ops.CROSS_ENTROPY, ops.CROSS_ENTROPY_BACKWARD):
        assert "ember_fused" in str(library.explain(op, "cpu"))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(1, 1), (7, 13), (40, 1000)])
def test_matches_torch_and_the_composite(shape: tuple[int, int], reduction: str) -> None:
    x = RNG.normal(0.0, 3.0, size=shape)
    y = RNG.integers(0, shape[1], size=shape[0])
    fused = _run(ember, "cpu", ember.float32, x, y, reduction=reduction)
    composite = _run(ember, "numpy", ember.float32, x, y, reduction=reduction)
    reference = _run(torch, "cpu", torch.float32, x, y, reduction=reduction)
    for got, want, other in zip(fused, reference, composite, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got, other, rtol=1e-5, atol=1e-6)


def test_extreme_logits() -> None:
    x = np.array([[1e4, 0.0, -1e4], [-np.inf, 0.0, 1.0], [50.0, 50.0, 50.0]])
    y = np.array([0, 2, 1])
    fused = _run(ember, "cpu", ember.float32, x, y)
    reference = _run(torch, "cpu", torch.float32, x, y)
    for got, want in zip(fused, reference, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_float64_and_gradcheck() -> None:
    x = RNG.normal(size=(5, 6))
    y = RNG.integers(0, 6, size=5)
    for got, want in zip(
        _run(ember, "cpu", ember.float64, x, y),
        _run(torch, "cpu", torch.float64, x, y),
        strict=True,
    ):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    leaf = ember.tensor(x, dtype=ember.float64, requires_grad=True)
    target = ember.tensor(y)
    assert ember.autograd.gradcheck(lambda t: ember.nn.functional.cross_entropy(t, target), (leaf,))
    assert ember.autograd.gradgradcheck(
        lambda t: ember.nn.functional.cross_entropy(t, target), (leaf,)
    )


def test_float32_gradient_by_finite_differences() -> None:
    x = RNG.normal(size=(6, 9))
    target = ember.tensor(RNG.integers(0, 9, size=6))
    v = RNG.normal(size=x.shape)
    leaf = ember.tensor(x, dtype=ember.float32, requires_grad=True)
    ember.nn.functional.cross_entropy(leaf, target, reduction="sum").backward()
    analytic = float((leaf.grad.numpy().astype(np.float64) * v).sum())

    def value(step: float) -> float:
        moved = ember.tensor(x + step * v, dtype=ember.float32)
        return float(ember.nn.functional.cross_entropy(moved, target, reduction="sum").item())

    numeric = (value(1e-2) - value(-1e-2)) / 2e-2
    assert analytic == pytest.approx(numeric, rel=1e-2, abs=1e-2)


@pytest.mark.parametrize(
    "options",
    [
        {"weight": "w"},
        {"label_smoothing": 0.1},
        {"ignore_index": 2},
        {"ignore_index": -1},
    ],
)
def test_other_cases_keep_the_composite(options: dict[str, Any]) -> None:
    x = RNG.normal(size=(8, 5))
    y = RNG.integers(0, 5, size=8)
    y[:2] = [2, -1] if options.get("ignore_index") == -1 else [2, 2]

    def run(lib: Any, dtype: Any) -> list[np.ndarray]:
        given = dict(options)
        if given.get("weight") == "w":
            given["weight"] = lib.tensor(np.linspace(0.2, 2.0, 5), dtype=dtype)
        return _run(lib, "cpu", dtype, x, y, **given)

    for got, want in zip(run(ember, ember.float32), run(torch, torch.float32), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_out_of_range_target_still_raises() -> None:
    with pytest.raises(IndexError):
        ember.nn.functional.cross_entropy(ember.zeros(2, 3), ember.tensor([0, 3]))
