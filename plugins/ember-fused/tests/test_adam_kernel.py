"""ember-fused's multi-tensor cpu `adam_step` behind Adam and AdamW: the same values as
PyTorch's optimizers and as Ember's per-tensor loop (`foreach=False`), for each option the
fused path takes; the cases it leaves to the loop (AMSGrad, strided state) still agree."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from ember import library
from ember.plugins import ops

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(21)
SHAPES = [(5, 4), (7,), (3, 2, 2), (1,)]
INITIAL = [RNG.normal(size=s) for s in SHAPES]
GRADS = [[RNG.normal(size=s) for s in SHAPES] for _ in range(4)]


def _train(lib: Any, name: str, dtype: Any = None, **options: Any) -> list[np.ndarray]:
    dtype = dtype or lib.float32
    params = [lib.tensor(a, dtype=dtype, requires_grad=True) for a in INITIAL]
    optimizer = getattr(lib.optim, name)(params, **options)
    for grads in GRADS:
        for p, g in zip(params, grads, strict=True):
            p.grad = lib.tensor(g, dtype=dtype)
        optimizer.step()
    state = [optimizer.state[p] for p in params]
    return [p.detach().numpy() for p in params] + [s["exp_avg_sq"].numpy() for s in state]


def test_registered_for_cpu_by_the_plugin() -> None:
    ember.ones(1)
    assert "ember_fused" in str(library.explain(ops.ADAM_STEP, "cpu"))


def test_the_fused_path_runs() -> None:
    ember.ones(1)
    from ember_fused import _cpu_optim

    calls: list[int] = []

    def spy(*args: Any) -> None:
        calls.append(1)
        _cpu_optim.adam_step(*args)

    handle = library.register_kernel(ops.ADAM_STEP, "cpu", spy, priority=1)
    try:
        _train(ember, "AdamW")
        assert len(calls) == len(GRADS)
        _train(ember, "AdamW", foreach=False)
        assert len(calls) == len(GRADS)
    finally:
        handle.remove()


OPTIONS = [
    ("AdamW", {"lr": 1e-2, "weight_decay": 0.1}),
    ("Adam", {"lr": 1e-2}),
    ("Adam", {"lr": 1e-2, "weight_decay": 0.05}),
    ("Adam", {"lr": 3e-3, "betas": (0.3, 0.9), "eps": 1e-6}),  # lerp from the far end
    ("AdamW", {"lr": 1e-2, "maximize": True}),
]


@pytest.mark.parametrize(("name", "options"), OPTIONS)
def test_matches_torch_and_the_per_tensor_loop(name: str, options: dict[str, Any]) -> None:
    fused = _train(ember, name, **options)
    loop = _train(ember, name, foreach=False, **options)
    reference = _train(torch, name, **options)
    for got, want, other in zip(fused, reference, loop, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
        np.testing.assert_array_equal(got, other)


def test_float64_matches_torch() -> None:
    fused = _train(ember, "AdamW", ember.float64, lr=1e-2, weight_decay=0.1)
    reference = _train(torch, "AdamW", torch.float64, lr=1e-2, weight_decay=0.1)
    for got, want in zip(fused, reference, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)


def test_amsgrad_keeps_the_loop_and_matches_torch() -> None:
    fused = _train(ember, "Adam", lr=1e-2, amsgrad=True)
    reference = _train(torch, "Adam", lr=1e-2, amsgrad=True)
    for got, want in zip(fused, reference, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_parameters_without_gradients_are_left_alone() -> None:
    params = [ember.ones(3, requires_grad=True), ember.ones(2, requires_grad=True)]
    optimizer = ember.optim.AdamW(params, lr=0.1)
    params[0].grad = ember.ones(3)
    optimizer.step()
    assert params[1].tolist() == [1.0, 1.0]
    assert params[1] not in optimizer.state or not optimizer.state[params[1]]
    assert params[0].tolist() != [1.0, 1.0, 1.0]
