"""Full backward hooks see the right grad_input and grad_output: checked against central
finite differences in float64 and against PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from ember import nn


def _f(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The module's function in NumPy: (x * y * x + exp(y), sin(x) * 3)."""
    return x * y * x + np.exp(y), np.sin(x) * 3.0


class TwoInTwoOut(nn.Module):
    def forward(self, x: ember.Tensor, scale: float, y: ember.Tensor) -> Any:
        assert scale == 3.0
        return x * y * x + y.exp(), x.sin() * scale


def _numeric_grads(
    x: np.ndarray, y: np.ndarray, go: tuple[np.ndarray, np.ndarray], eps: float = 1e-6
) -> tuple[np.ndarray, np.ndarray]:
    """Gradients of sum(go[0] * f0 + go[1] * f1) by central differences."""

    def objective(a: np.ndarray, b: np.ndarray) -> float:
        f0, f1 = _f(a, b)
        return float(np.sum(go[0] * f0) + np.sum(go[1] * f1))

    grads = []
    for which in range(2):
        base = [x.copy(), y.copy()]
        grad = np.zeros_like(base[which])
        for i in range(base[which].size):
            plus = [b.copy() for b in base]
            minus = [b.copy() for b in base]
            plus[which].flat[i] += eps
            minus[which].flat[i] -= eps
            grad.flat[i] = (objective(*plus) - objective(*minus)) / (2 * eps)
        grads.append(grad)
    return grads[0], grads[1]


def _as_numpy(grads: tuple[Any, ...]) -> list[Any]:
    # force=True copies a tensor off a device whose memory the host can't read (and is a
    # copy on cpu too, so later in-place updates of the gradient can't change the record).
    return [None if g is None else g.detach().numpy(force=True).copy() for g in grads]


def test_grad_input_and_grad_output_against_finite_differences(device: str) -> None:
    rng = np.random.default_rng(0)
    x_np, y_np = rng.normal(size=4), rng.normal(size=4)
    go = (rng.normal(size=4), rng.normal(size=4))
    module = TwoInTwoOut().to(device)
    seen: dict[str, Any] = {}
    # dict.update returns None: a hook returning a value would replace the gradients.
    module.register_full_backward_pre_hook(
        lambda m, grad_output: seen.update(pre=_as_numpy(grad_output))
    )
    module.register_full_backward_hook(
        lambda m, gi, go: seen.update(
            post=(_as_numpy(gi), _as_numpy(go)),
            devices={str(g.device) for g in gi + go if g is not None},
        )
    )
    x = ember.tensor(x_np, dtype=ember.float64, device=device).requires_grad_()
    y = ember.tensor(y_np, dtype=ember.float64, device=device).requires_grad_()
    out0, out1 = module(x, 3.0, y)
    # The second grad_output is float32 (the default dtype) on purpose: hooks must see it as
    # given, while the float64 graph still gets float64 gradients.
    ember.autograd.backward(
        [out0, out1],
        [
            ember.tensor(go[0], dtype=ember.float64, device=device),
            ember.tensor(go[1], device=device),
        ],
    )
    expected_x, expected_y = _numeric_grads(x_np, y_np, go)
    grad_input, grad_output = seen["post"]
    assert seen["devices"] == {device}  # the hook sees gradients where the module runs
    assert len(grad_input) == 3 and grad_input[1] is None  # the float argument
    np.testing.assert_allclose(grad_input[0], expected_x, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(grad_input[2], expected_y, rtol=1e-6, atol=1e-8)
    assert x.grad is not None
    np.testing.assert_allclose(x.grad.numpy(force=True), expected_x, rtol=1e-6, atol=1e-8)
    for got in (seen["pre"], grad_output):
        np.testing.assert_allclose(got[0], go[0])
        np.testing.assert_allclose(got[1], go[1].astype(np.float32), rtol=1e-6)


def test_unused_output_has_no_grad_output_and_matches_torch(device: str) -> None:
    torch: Any = pytest.importorskip("torch")

    def run(lib: Any, module: Any, device: str) -> tuple[Any, Any]:
        seen: dict[str, Any] = {}
        module.register_full_backward_hook(
            lambda m, gi, go: seen.update(gi=_as_numpy(gi), go=_as_numpy(go))
        )
        module.to(device)
        x = lib.tensor([0.5, -1.0], dtype=lib.float64, device=device).requires_grad_()
        y = lib.tensor([2.0, 0.25], dtype=lib.float64, device=device).requires_grad_()
        out0, _ = module(x, 3.0, y)
        out0.backward(lib.ones_like(out0))
        return seen["gi"], seen["go"]

    class TorchTwoInTwoOut(torch.nn.Module):
        def forward(self, x: Any, scale: float, y: Any) -> Any:
            return x * y * x + y.exp(), x.sin() * scale

    mine = run(ember, TwoInTwoOut(), device)
    theirs = run(torch, TorchTwoInTwoOut(), "cpu")  # the reference stays on torch's cpu
    assert mine[1][1] is None and theirs[1][1] is None
    for got, want in zip(mine[0] + mine[1][:1], theirs[0] + theirs[1][:1], strict=True):
        if want is None:
            assert got is None
        else:
            np.testing.assert_allclose(got, want)


def test_hooks_fire_once_per_call_of_a_reused_module(device: str) -> None:
    module = nn.Sequential().to(device)
    calls: list[list[float]] = []
    module.register_full_backward_hook(lambda m, gi, go: calls.append(gi[0].tolist()))
    x = ember.tensor([1.0, 2.0], device=device).requires_grad_()
    out = module(module(x) * 2.0)  # an identity module used twice in one graph
    out.backward(ember.tensor([1.0, 1.0], device=device))
    assert calls == [[1.0, 1.0], [2.0, 2.0]]
    assert x.grad is not None and x.grad.tolist() == [2.0, 2.0]


def test_grad_input_of_an_input_used_by_no_output_is_zero_as_in_torch(device: str) -> None:
    class UsesFirst(nn.Module):
        def forward(self, a: ember.Tensor, b: ember.Tensor) -> ember.Tensor:
            return a * 2.0

    module = UsesFirst().to(device)
    seen: list[Any] = []
    module.register_full_backward_hook(lambda m, gi, go: seen.append(_as_numpy(gi)))
    a = ember.tensor([1.0], device=device).requires_grad_()
    b = ember.tensor([1.0], device=device).requires_grad_()
    module(a, b).backward(ember.tensor([1.0], device=device))
    assert [g.tolist() for g in seen[0]] == [[2.0], [0.0]]
    assert b.grad is not None and b.grad.tolist() == [0.0]
