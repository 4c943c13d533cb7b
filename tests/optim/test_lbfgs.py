"""LBFGS beside torch.optim.LBFGS in float64: Rosenbrock and least squares, with and without
the strong-Wolfe line search; the parameters agree to ~1e-10 after every step."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember import optim

torch = pytest.importorskip("torch")


def _rosenbrock(lib: Any) -> Callable[[Any], Any]:
    def loss(x: Any) -> Any:
        return ((1 - x[:-1]) ** 2).sum() + (100 * (x[1:] - x[:-1] ** 2) ** 2).sum()

    return loss


def _least_squares(a: np.ndarray, b: np.ndarray) -> Callable[[Any, Any], Callable[[Any], Any]]:
    def make(lib: Any, to_tensor: Callable[[np.ndarray], Any]) -> Callable[[Any], Any]:
        a_t, b_t = to_tensor(a), to_tensor(b)

        def loss(x: Any) -> Any:
            residual = a_t @ x - b_t
            return (residual * residual).sum() * 0.5

        return loss

    return make


def _run(
    ember_loss: Callable[[Any], Any],
    torch_loss: Callable[[Any], Any],
    x0: np.ndarray,
    options: dict[str, Any],
    steps: int,
) -> tuple[list[float], list[float]]:
    xe = ember.tensor(x0, dtype=ember.float64).requires_grad_()
    xt = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    opt_e = optim.LBFGS([xe], **options)
    opt_t = torch.optim.LBFGS([xt], **options)

    def closure_e() -> Any:
        opt_e.zero_grad()
        value = ember_loss(xe)
        value.backward()
        return value

    def closure_t() -> Any:
        opt_t.zero_grad()
        value = torch_loss(xt)
        value.backward()
        return value

    losses_e, losses_t = [], []
    for _ in range(steps):
        losses_e.append(float(opt_e.step(closure_e).detach()))
        losses_t.append(float(opt_t.step(closure_t).detach()))
        np.testing.assert_allclose(np.asarray(xe.detach()), xt.detach().numpy(), atol=1e-10)
        state_e, state_t = opt_e.state[xe], opt_t.state[xt]
        assert state_e["n_iter"] == state_t["n_iter"]
        assert state_e["func_evals"] == state_t["func_evals"]
        assert len(state_e["old_dirs"]) == len(state_t["old_dirs"])
    np.testing.assert_allclose(losses_e, losses_t, rtol=1e-9, atol=1e-12)
    return losses_e, losses_t


OPTIONS = [
    dict(lr=1.0, max_iter=20),
    dict(lr=0.5, max_iter=10, history_size=3),
    dict(lr=1.0, max_iter=25, line_search_fn="strong_wolfe"),
    dict(lr=1.0, max_iter=8, max_eval=12, history_size=4, line_search_fn="strong_wolfe"),
]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: "-".join(f"{v}" for v in o.values()))
def test_rosenbrock_matches_torch(options: dict[str, Any]) -> None:
    x0 = np.array([-1.2, 1.0, -0.5, 0.8])
    lr_small = dict(options, lr=options["lr"] * (1.0 if "line_search_fn" in options else 0.02))
    losses, _ = _run(_rosenbrock(ember), _rosenbrock(torch), x0, lr_small, steps=4)
    assert losses[-1] < losses[0]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: "-".join(f"{v}" for v in o.values()))
def test_least_squares_matches_torch(options: dict[str, Any]) -> None:
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((8, 5)), rng.standard_normal(8)
    make = _least_squares(a, b)
    ember_loss = make(ember, lambda v: ember.tensor(v, dtype=ember.float64))
    torch_loss = make(torch, lambda v: torch.tensor(v, dtype=torch.float64))
    _run(ember_loss, torch_loss, np.zeros(5), options, steps=3)


def test_strong_wolfe_reaches_the_least_squares_solution() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((10, 4)), rng.standard_normal(10)
    x = ember.zeros(4, dtype=ember.float64, requires_grad=True)
    opt = optim.LBFGS(
        [x], max_iter=100, line_search_fn="strong_wolfe", tolerance_grad=1e-12, tolerance_change=0
    )
    a_t, b_t = ember.tensor(a), ember.tensor(b)

    def closure() -> Any:
        opt.zero_grad()
        residual = a_t @ x - b_t
        value = (residual * residual).sum()
        value.backward()
        return value

    opt.step(closure)
    np.testing.assert_allclose(np.asarray(x.detach()), np.linalg.lstsq(a, b)[0], atol=1e-8)


def test_rejects_groups_and_unknown_line_search() -> None:
    a, b = ember.zeros(2, requires_grad=True), ember.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="parameter groups"):
        optim.LBFGS([{"params": [a]}, {"params": [b]}])
    opt = optim.LBFGS([a], line_search_fn="armijo")

    def closure() -> Any:
        opt.zero_grad()
        value = ((a - 1.0) ** 2).sum()
        value.backward()
        return value

    with pytest.raises(RuntimeError, match="strong_wolfe"):
        opt.step(closure)
