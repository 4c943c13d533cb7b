"""Adagrad, Adadelta, Adamax, NAdam, RAdam, ASGD and Rprop step for step beside torch.optim:
same initial parameters, same gradients, option combinations; state dicts keep torch's layout
and a round trip continues identically."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from ember import optim

torch = pytest.importorskip("torch")

SHAPES = [(3, 4), (5,)]
TORCH_DTYPE = {ember.float32: torch.float32, ember.float64: torch.float64}
TOLERANCE = {ember.float32: 1e-6, ember.float64: 1e-12}

CASES: list[tuple[str, dict[str, Any]]] = [
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, initial_accumulator_value=0.3, eps=1e-6)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.6, eps=1e-4, weight_decay=0.1, maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.5, 0.8), weight_decay=0.1, maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, momentum_decay=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.6, t0=3, weight_decay=0.1)),
    ("ASGD", dict(lr=0.05, t0=0, maximize=True)),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2), maximize=True)),
]


def _case_id(case: tuple[str, dict[str, Any]]) -> str:
    return case[0] + "-" + "-".join(f"{k}={v}" for k, v in case[1].items())


class Pair:
    """An ember optimizer and a torch one over equal parameters, fed equal gradients."""

    def __init__(
        self, name: str, options: dict[str, Any], dtype: ember.dtype, device: str = "cpu"
    ) -> None:
        self.rng = np.random.default_rng(1)
        self.dtype, self.torch_dtype, self.device = dtype, TORCH_DTYPE[dtype], device
        initial = [self.rng.standard_normal(s) for s in SHAPES]
        self.ember_params = [
            ember.tensor(a, dtype=dtype, device=device).requires_grad_() for a in initial
        ]
        self.torch_params = [
            torch.tensor(a, dtype=self.torch_dtype, requires_grad=True) for a in initial
        ]
        self.ember_opt = getattr(optim, name)(self.ember_params, **options)
        self.torch_opt = getattr(torch.optim, name)(self.torch_params, foreach=False, **options)

    def step(self, skip: int | None = None) -> None:
        for i, (e, t) in enumerate(zip(self.ember_params, self.torch_params, strict=True)):
            if i == skip:
                e.grad, t.grad = None, None
                continue
            # Gradients that keep their sign for a while, then flip (exercises Rprop's rules).
            g = self.rng.standard_normal(e.shape) + 0.5 * np.sign(np.asarray(e.detach()))
            e.grad = ember.tensor(g, dtype=self.dtype, device=self.device)
            t.grad = torch.tensor(g, dtype=self.torch_dtype)
        self.ember_opt.step()
        self.torch_opt.step()

    def assert_close(self) -> None:
        tol = TOLERANCE[self.dtype]
        for e, t in zip(self.ember_params, self.torch_params, strict=True):
            _close(np.asarray(e.detach()), t.detach().numpy(), tol, "param")
            e_state, t_state = self.ember_opt.state[e], self.torch_opt.state[t]
            assert set(e_state) == set(t_state)
            for key, value in t_state.items():
                _close(np.asarray(e_state[key]), value.numpy(), tol, key)
                assert str(e_state[key].dtype).split(".")[-1] == str(value.dtype).split(".")[-1]


def _close(got: np.ndarray, expected: np.ndarray, tol: float, what: str) -> None:
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol * scale, err_msg=what)


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64], ids=lambda d: d.name)
def test_matches_torch_step_for_step(
    case: tuple[str, dict[str, Any]], dtype: ember.dtype, device: str
) -> None:
    pair = Pair(case[0], case[1], dtype, device)
    for step in range(12):
        pair.step(skip=1 if step == 4 else None)
        pair.assert_close()


def _to_ember(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return ember.tensor(value.numpy())
    if isinstance(value, dict):
        return {k: _to_ember(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_ember(v) for v in value]
    return value


@pytest.mark.parametrize("name", sorted({c[0] for c in CASES}))
def test_state_dict_has_torch_layout_and_round_trips(name: str) -> None:
    options = next(o for n, o in CASES if n == name)
    pair = Pair(name, options, ember.float64)
    for _ in range(4):
        pair.step()
    ours, theirs = pair.ember_opt.state_dict(), pair.torch_opt.state_dict()
    assert ours["param_groups"][0].keys() == theirs["param_groups"][0].keys()
    for key, value in theirs["param_groups"][0].items():
        if key == "foreach":  # the torch side was built with foreach=False
            continue
        assert ours["param_groups"][0][key] == value, key
    assert {k: set(v) for k, v in ours["state"].items()} == {
        k: set(v) for k, v in theirs["state"].items()
    }
    # Load torch's state dict into a fresh ember optimizer: it continues as torch does.
    fresh = [p.detach().clone().requires_grad_() for p in pair.ember_params]
    pair.ember_params = fresh
    pair.ember_opt = getattr(optim, name)(fresh, **options)
    pair.ember_opt.load_state_dict(_to_ember(theirs))
    # torch's loading casts float state (ASGD's eta, NAdam's mu_product) to the parameter's
    # dtype; reload torch's side too so both continue from loaded state.
    pair.torch_opt = getattr(torch.optim, name)(pair.torch_params, foreach=False, **options)
    pair.torch_opt.load_state_dict(theirs)
    for _ in range(4):
        pair.step()
        pair.assert_close()


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("Adagrad", dict(lr=-1.0), "Invalid learning rate"),
        ("Adadelta", dict(rho=1.5), "Invalid rho value"),
        ("Adamax", dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0"),
        ("NAdam", dict(momentum_decay=-1.0), "Invalid momentum_decay value"),
        ("RAdam", dict(eps=-1.0), "Invalid epsilon value"),
        ("ASGD", dict(weight_decay=-1.0), "Invalid weight_decay value"),
        ("Rprop", dict(etas=(1.5, 1.2)), "Invalid eta values"),
    ],
)
def test_invalid_options_raise_like_torch(name: str, options: dict[str, Any], message: str) -> None:
    params = [ember.zeros(2, requires_grad=True)]
    with pytest.raises(ValueError, match=message):
        getattr(optim, name)(params, **options)
    with pytest.raises(ValueError, match=message):
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **options)


ALL = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
       "ASGD", "Rprop"]  # fmt: skip


@pytest.mark.parametrize("name", ALL)
def test_flags_accepted_with_torch_group_layout(name: str) -> None:
    flags = dict(foreach=True, maximize=True, differentiable=False)
    if name not in ("SGD", "Adagrad"):
        flags["capturable"] = False
    ours = getattr(optim, name)([ember.zeros(2, requires_grad=True)], lr=0.1, **flags)
    theirs = getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], lr=0.1, **flags)
    assert ours.defaults == theirs.defaults
    assert ours.state_dict()["param_groups"] == theirs.state_dict()["param_groups"]
    if name not in ("SGD", "Adam", "AdamW", "Adagrad"):  # the ones PyTorch has a fused path for
        return
    with pytest.raises(RuntimeError, match="fused"):
        getattr(optim, name)([ember.zeros(2, requires_grad=True)], fused=True)
