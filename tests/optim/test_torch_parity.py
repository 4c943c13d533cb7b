"""SGD, Adam, AdamW and RMSprop step for step beside torch.optim: same initial parameters, same
gradients, every option combination; then state-dict round trips continue identically."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import ember
from ember import optim

torch = pytest.importorskip("torch")

SHAPES = [(3, 4), (4,), (2, 3, 2)]
TORCH_DTYPE = {ember.float32: torch.float32, ember.float64: torch.float64}
TOLERANCE = {ember.float32: 1e-6, ember.float64: 1e-12}
DTYPES = [ember.float32, ember.float64]


def _sgd_options() -> list[dict[str, Any]]:
    options = []
    for momentum, dampening, nesterov, weight_decay, maximize in itertools.product(
        (0.0, 0.9), (0.0, 0.3), (False, True), (0.0, 0.1), (False, True)
    ):
        if nesterov and (momentum == 0 or dampening != 0):
            continue
        options.append(
            dict(
                lr=0.05,
                momentum=momentum,
                dampening=dampening,
                nesterov=nesterov,
                weight_decay=weight_decay,
                maximize=maximize,
            )
        )
    return options


def _adam_options() -> list[dict[str, Any]]:
    return [
        dict(lr=0.01, betas=betas, eps=1e-8, weight_decay=wd, amsgrad=amsgrad, maximize=maximize)
        for betas, wd, amsgrad, maximize in itertools.product(
            ((0.9, 0.999), (0.3, 0.8)), (0.0, 0.05), (False, True), (False, True)
        )
    ]


def _rmsprop_options() -> list[dict[str, Any]]:
    return [
        dict(
            lr=0.01,
            alpha=alpha,
            eps=1e-8,
            weight_decay=wd,
            momentum=momentum,
            centered=centered,
            maximize=maximize,
        )
        for alpha, wd, momentum, centered, maximize in itertools.product(
            (0.99, 0.4), (0.0, 0.1), (0.0, 0.8), (False, True), (False, True)
        )
    ]


CASES = (
    [("SGD", o) for o in _sgd_options()]
    + [("Adam", o) for o in _adam_options()]
    + [("AdamW", o) for o in _adam_options()]
    + [("RMSprop", o) for o in _rmsprop_options()]
)


def _case_id(case: tuple[str, dict[str, Any]]) -> str:
    name, options = case
    return name + "-" + "-".join(f"{k}={v}" for k, v in options.items() if k not in ("lr", "eps"))


class SideBySide:
    """An ember optimizer and a torch one over equal parameters, fed equal gradients."""

    def __init__(
        self,
        name: str,
        groups: list[dict[str, Any]],
        dtype: ember.dtype,
        device: str,
        seed: int = 0,
    ) -> None:
        self.rng = np.random.default_rng(seed)
        self.dtype, self.device = dtype, device
        self.torch_dtype = TORCH_DTYPE[dtype]
        self.initial = [self.rng.standard_normal(s) for s in SHAPES]
        self.ember_params = [self._ember(a).requires_grad_() for a in self.initial]
        self.torch_params = [
            torch.tensor(a, dtype=self.torch_dtype, requires_grad=True) for a in self.initial
        ]
        self.name = name
        self.ember_opt = getattr(optim, name)(self._split(self.ember_params, groups))
        self.torch_opt = getattr(torch.optim, name)(
            self._split(self.torch_params, groups), foreach=False
        )

    def _ember(self, array: np.ndarray) -> ember.Tensor:
        return ember.tensor(array, dtype=self.dtype, device=self.device)

    @staticmethod
    def _split(params: list[Any], groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Group i takes the parameters at positions i, i + len(groups), ..."""
        return [{**options, "params": params[i :: len(groups)]} for i, options in enumerate(groups)]

    def step(self, skip: int | None = None) -> None:
        """One step of both with fresh random gradients; parameter `skip` gets none."""
        for i, (e, t) in enumerate(zip(self.ember_params, self.torch_params, strict=True)):
            if i == skip:
                e.grad, t.grad = None, None
                continue
            g = self.rng.standard_normal(tuple(e.shape))
            e.grad = self._ember(g)
            t.grad = torch.tensor(g, dtype=self.torch_dtype)
        self.ember_opt.step()
        self.torch_opt.step()

    def assert_close(self) -> None:
        """Parameters and state agree to rounding, relative to each tensor's magnitude (sums
        with cancellation, as in centered RMSprop, lose digits in both implementations)."""
        tol = TOLERANCE[self.dtype]
        for e, t in zip(self.ember_params, self.torch_params, strict=True):
            _assert_close(np.asarray(e.detach()), t.detach().numpy(), tol, "param")
            e_state, t_state = self.ember_opt.state[e], self.torch_opt.state[t]
            assert set(e_state) == set(t_state)
            for key, value in t_state.items():
                _assert_close(np.asarray(e_state[key]), value.numpy(), tol, key)
                if key == "step":
                    assert e_state[key].dtype is ember.float32


def _assert_close(got: np.ndarray, expected: np.ndarray, tol: float, what: str) -> None:
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol * scale, err_msg=what)


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_matches_torch_step_for_step(
    case: tuple[str, dict[str, Any]], dtype: ember.dtype, device: str
) -> None:
    name, options = case
    pair = SideBySide(name, [options], dtype, device)
    for step in range(10):
        pair.step(skip=1 if step == 3 else None)
        pair.assert_close()


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_param_groups_with_their_own_options(name: str, device: str) -> None:
    first = {"SGD": dict(lr=0.1, momentum=0.9), "RMSprop": dict(lr=0.01, momentum=0.5)}.get(
        name, dict(lr=0.01, amsgrad=True)
    )
    second = dict(lr=0.003, weight_decay=0.2)
    pair = SideBySide(name, [first, second], ember.float64, device)
    for _ in range(8):
        pair.step()
        pair.assert_close()


def _torch_state_to_ember(value: Any, device: str) -> Any:
    if isinstance(value, torch.Tensor):
        return ember.tensor(value.numpy(), device=device)
    if isinstance(value, dict):
        return {k: _torch_state_to_ember(v, device) for k, v in value.items()}
    if isinstance(value, list):
        return [_torch_state_to_ember(v, device) for v in value]
    return value


ROUND_TRIP = [
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.01)),
    ("AdamW", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True)),
]


@pytest.mark.parametrize("case", ROUND_TRIP, ids=[c[0] for c in ROUND_TRIP])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_state_dict_round_trip_continues_identically(
    case: tuple[str, dict[str, Any]], dtype: ember.dtype, device: str
) -> None:
    name, options = case
    pair = SideBySide(name, [options], dtype, device)
    for _ in range(5):
        pair.step()
    saved = pair.ember_opt.state_dict()
    assert [g["params"] for g in saved["param_groups"]] == [[0, 1, 2]]
    assert set(saved["state"]) == {0, 1, 2}
    clones = [p.detach().clone().requires_grad_() for p in pair.ember_params]
    restored = getattr(optim, name)(clones, lr=123.0)  # the loaded groups replace lr
    restored.load_state_dict(saved)
    assert restored.param_groups[0]["lr"] == options["lr"]
    # torch's own state dict, tensors converted, loads into a third ember optimizer
    from_torch_params = [p.detach().clone().requires_grad_() for p in pair.ember_params]
    from_torch = getattr(optim, name)(from_torch_params)
    from_torch.load_state_dict(_torch_state_to_ember(pair.torch_opt.state_dict(), device))
    for _ in range(5):
        grads = [pair.rng.standard_normal(tuple(p.shape)) for p in pair.ember_params]
        for params in (pair.ember_params, clones, from_torch_params):
            for p, g in zip(params, grads, strict=True):
                p.grad = ember.tensor(g, dtype=dtype, device=device)
        for p, g in zip(pair.torch_params, grads, strict=True):
            p.grad = torch.tensor(g, dtype=pair.torch_dtype)
        for opt in (pair.ember_opt, restored, from_torch, pair.torch_opt):
            opt.step()
        pair.assert_close()
        for original, copy in zip(pair.ember_params, clones, strict=True):
            np.testing.assert_array_equal(np.asarray(copy.detach()), np.asarray(original.detach()))
        for other, reference in zip(from_torch_params, pair.torch_params, strict=True):
            tol = TOLERANCE[dtype]
            _assert_close(np.asarray(other.detach()), reference.detach().numpy(), tol, "param")


def test_loaded_state_is_not_shared_with_the_dict(device: str) -> None:
    p = ember.zeros(3, device=device).requires_grad_()
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = ember.ones(3, device=device)
    opt.step()
    saved = opt.state_dict()
    q = ember.zeros(3, device=device).requires_grad_()
    other = optim.SGD([q], lr=0.1, momentum=0.9)
    other.load_state_dict(saved)
    q.grad = ember.ones(3, device=device)
    other.step()
    np.testing.assert_array_equal(np.asarray(saved["state"][0]["momentum_buffer"]), [1, 1, 1])


def test_closure_runs_with_grad_enabled_and_its_loss_is_returned(device: str) -> None:
    p = ember.tensor([1.0, -2.0], device=device).requires_grad_()
    opt = optim.SGD([p], lr=0.25)
    seen = []

    def closure() -> ember.Tensor:
        seen.append(ember.is_grad_enabled())
        p.grad = ember.mul(p.detach(), 2.0)
        return ember.tensor(5.0)

    with ember.no_grad():
        loss = opt.step(closure)
    assert seen == [True]
    assert float(loss) == 5.0
    np.testing.assert_allclose(np.asarray(p.detach()), [0.5, -1.0])
    assert ember.is_grad_enabled()
