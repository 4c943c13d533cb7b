"""Adafactor and Muon step for step beside torch.optim's: same initial parameters, same
gradients, several option sets and learning-rate changes; state dicts in both directions; and
torch's argument errors.

torch's Muon runs its Newton-Schulz iteration in bfloat16, which ember lacks (ember runs it in
the parameter's dtype). The tight comparisons therefore run torch's Muon with torch's own
iteration, its source taken as is with only the bfloat16 cast removed; a looser test checks
that ember agrees with unmodified torch to bfloat16 precision.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import ember
from ember import optim

torch = pytest.importorskip("torch")
torch_muon = pytest.importorskip("torch.optim._muon")

TORCH_DTYPE = {ember.float32: torch.float32, ember.float64: torch.float64}
RTOL = {ember.float32: 1e-5, ember.float64: 1e-10}
DTYPES = [ember.float32, ember.float64]
ADAFACTOR_SHAPES = [(3, 4), (5,), (2, 3, 4), ()]
MUON_SHAPES = [(3, 4), (6, 2), (5, 5)]


def _newton_schulz_in_input_dtype() -> Callable[..., Any]:
    """torch's `_zeropower_via_newtonschulz`, compiled from its source without the bf16 cast."""
    source = inspect.getsource(torch_muon._zeropower_via_newtonschulz)
    assert "grad.bfloat16()" in source
    namespace: dict[str, Any] = {}
    exec(source.replace("grad.bfloat16()", "grad.clone()"), torch_muon.__dict__.copy(), namespace)
    return namespace["_zeropower_via_newtonschulz"]  # type: ignore[no-any-return]


@pytest.fixture
def full_precision_torch_muon(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(torch_muon, "_zeropower_via_newtonschulz", _newton_schulz_in_input_dtype())
    yield


class SideBySide:
    """An ember optimizer and a torch one over equal parameters, fed equal gradients."""

    def __init__(
        self,
        name: str,
        options: dict[str, Any],
        shapes: list[tuple[int, ...]],
        dtype: ember.dtype,
        device: str,
        seed: int = 0,
    ) -> None:
        self.rng = np.random.default_rng(seed)
        self.dtype, self.device, self.torch_dtype = dtype, device, TORCH_DTYPE[dtype]
        initial = [np.asarray(self.rng.standard_normal(s)) for s in shapes]
        self.ember_params = [
            ember.tensor(a, dtype=dtype, device=device).requires_grad_() for a in initial
        ]
        self.torch_params = [
            torch.tensor(a, dtype=self.torch_dtype, requires_grad=True) for a in initial
        ]
        self.ember_opt = getattr(optim, name)(self.ember_params, **options)
        self.torch_opt = getattr(torch.optim, name)(self.torch_params, **options)

    def step(self, skip: int | None = None, lr: float | None = None) -> None:
        """One step of both with fresh random gradients; parameter `skip` gets none."""
        for opt in (self.ember_opt, self.torch_opt):
            for group in opt.param_groups:
                if lr is not None:
                    group["lr"] = lr
        for i, (e, t) in enumerate(zip(self.ember_params, self.torch_params, strict=True)):
            if i == skip:
                e.grad, t.grad = None, None
                continue
            g = self.rng.standard_normal(tuple(t.shape))
            e.grad = ember.tensor(g, dtype=self.dtype, device=self.device)
            t.grad = torch.tensor(g, dtype=self.torch_dtype)
        self.ember_opt.step()
        self.torch_opt.step()

    def assert_close(self, rtol: float | None = None) -> None:
        """Parameters and every state entry agree, relative to each tensor's magnitude."""
        tol = RTOL[self.dtype] if rtol is None else rtol
        for e, t in zip(self.ember_params, self.torch_params, strict=True):
            _assert_close(np.asarray(e.detach()), t.detach().numpy(), tol, "param")
            e_state, t_state = self.ember_opt.state[e], self.torch_opt.state[t]
            assert set(e_state) == set(t_state)
            for key, value in t_state.items():
                assert tuple(e_state[key].shape) == tuple(value.shape), key
                _assert_close(np.asarray(e_state[key]), value.numpy(), tol, key)


def _assert_close(got: np.ndarray, expected: np.ndarray, tol: float, what: str) -> None:
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol * scale, err_msg=what)


def _run(pair: SideBySide, lrs: list[float] | None) -> None:
    for step in range(10):
        pair.step(skip=1 if step == 3 else None, lr=None if lrs is None else lrs[step])
        pair.assert_close()


DECAYING = [0.05 * 0.8**k for k in range(10)]
ADAFACTOR_CASES: list[tuple[dict[str, Any], list[float] | None]] = [
    ({}, None),
    ({"weight_decay": 0.1, "maximize": True}, None),
    ({"lr": 0.5, "beta2_decay": -0.5, "eps": (1e-30, 1e-2), "d": 1.5}, None),
    ({"eps": (1e-2, 1e-3), "weight_decay": 0.05}, DECAYING),
    ({"lr": 0.3, "foreach": True}, [0.3, 0.3, 0.1, 0.1, 0.9, 0.5, 0.5, 0.02, 0.02, 0.02]),
]


@pytest.mark.parametrize("case", ADAFACTOR_CASES, ids=lambda c: str(c[0]) + str(bool(c[1])))
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_adafactor_matches_torch_step_for_step(
    case: tuple[dict[str, Any], list[float] | None], dtype: ember.dtype, device: str
) -> None:
    options, lrs = case
    _run(SideBySide("Adafactor", options, ADAFACTOR_SHAPES, dtype, device), lrs)


MUON_CASES: list[tuple[dict[str, Any], list[float] | None]] = [
    ({"lr": 0.02}, None),
    ({"lr": 0.05, "nesterov": False, "momentum": 0.5, "weight_decay": 0.0}, None),
    ({"lr": 0.02, "adjust_lr_fn": "match_rms_adamw", "weight_decay": 0.3}, DECAYING),
    ({"adjust_lr_fn": "original", "ns_coefficients": (2.0, -1.5, 0.5), "ns_steps": 3}, None),
    ({"lr": 0.01, "eps": 1e-3, "ns_steps": 0}, [0.01, 0.03] * 5),
]


@pytest.mark.parametrize("case", MUON_CASES, ids=lambda c: str(c[0]) + str(bool(c[1])))
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.usefixtures("full_precision_torch_muon")
def test_muon_matches_torch_step_for_step(
    case: tuple[dict[str, Any], list[float] | None], dtype: ember.dtype, device: str
) -> None:
    options, lrs = case
    _run(SideBySide("Muon", options, MUON_SHAPES, dtype, device), lrs)


def test_muon_agrees_with_torchs_bfloat16_iteration_to_its_precision(device: str) -> None:
    rng = np.random.default_rng(1)
    for shape in [*MUON_SHAPES, (16, 9)]:
        g = rng.standard_normal(shape)
        expected = torch_muon._zeropower_via_newtonschulz(
            torch.tensor(g, dtype=torch.float32), (3.4445, -4.7750, 2.0315), 5, 1e-7
        )
        got = optim.muon.zeropower_via_newtonschulz(
            ember.tensor(g, dtype=ember.float32, device=device), (3.4445, -4.7750, 2.0315), 5, 1e-7
        )
        assert tuple(got.shape) == shape
        np.testing.assert_allclose(np.asarray(got), expected.float().numpy(), atol=0.05)
        # the iteration pushes every singular value into roughly [0.5, 1.5]
        singular = np.linalg.svd(np.asarray(got), compute_uv=False)
        assert singular.min() > 0.4 and singular.max() < 1.6
    pair = SideBySide("Muon", {"lr": 0.02}, MUON_SHAPES, ember.float32, device)
    for _ in range(5):
        pair.step()
    pair.assert_close(rtol=2e-3)


STATE_CASES = [
    ("Adafactor", {"lr": 0.05, "weight_decay": 0.01}, ADAFACTOR_SHAPES),
    ("Muon", {"lr": 0.02, "nesterov": True}, MUON_SHAPES),
]


def _torch_state_to_ember(value: Any, device: str) -> Any:
    if isinstance(value, torch.Tensor):
        return ember.tensor(value.numpy(), device="cpu" if value.ndim == 0 else device)
    if isinstance(value, dict):
        return {k: _torch_state_to_ember(v, device) for k, v in value.items()}
    if isinstance(value, list):
        return [_torch_state_to_ember(v, device) for v in value]
    return value


@pytest.mark.parametrize("case", STATE_CASES, ids=lambda c: c[0])
@pytest.mark.usefixtures("full_precision_torch_muon")
def test_state_dicts_round_trip_and_load_torchs(
    case: tuple[str, dict[str, Any], list[tuple[int, ...]]], device: str
) -> None:
    name, options, shapes = case
    dtype = ember.float64
    pair = SideBySide(name, options, shapes, dtype, device)
    for _ in range(4):
        pair.step()
    saved = pair.ember_opt.state_dict()
    torch_saved = pair.torch_opt.state_dict()
    assert set(saved["param_groups"][0]) == set(torch_saved["param_groups"][0])
    for index, torch_state in torch_saved["state"].items():
        assert set(saved["state"][index]) == set(torch_state)
    clones = [p.detach().clone().requires_grad_() for p in pair.ember_params]
    restored = getattr(optim, name)(clones, lr=123.0)  # the loaded group replaces lr
    restored.load_state_dict(saved)
    assert restored.param_groups[0]["lr"] == options["lr"]
    from_torch_params = [p.detach().clone().requires_grad_() for p in pair.ember_params]
    from_torch = getattr(optim, name)(from_torch_params)
    from_torch.load_state_dict(_torch_state_to_ember(torch_saved, device))
    for _ in range(4):
        grads = [pair.rng.standard_normal(tuple(p.shape)) for p in pair.ember_params]
        for params in (pair.ember_params, clones, from_torch_params):
            for p, g in zip(params, grads, strict=True):
                p.grad = ember.tensor(g, dtype=dtype, device=device)
        for p, g in zip(pair.torch_params, grads, strict=True):
            p.grad = torch.tensor(g, dtype=torch.float64)
        for opt in (pair.ember_opt, restored, from_torch, pair.torch_opt):
            opt.step()
        pair.assert_close()
        for copy, original in zip(clones, pair.ember_params, strict=True):
            np.testing.assert_array_equal(np.asarray(copy.detach()), np.asarray(original.detach()))
        for other, reference in zip(from_torch_params, pair.torch_params, strict=True):
            _assert_close(np.asarray(other.detach()), reference.detach().numpy(), 1e-10, "param")


BAD_ARGUMENTS = [
    ("Adafactor", {"lr": -0.1}),
    ("Adafactor", {"beta2_decay": 0.5}),
    ("Adafactor", {"eps": (-1e-3, 1e-3)}),
    ("Adafactor", {"eps": (None, -1.0)}),
    ("Adafactor", {"d": 0.5}),
    ("Adafactor", {"weight_decay": -0.01}),
    ("Muon", {"lr": -1.0}),
    ("Muon", {"momentum": -0.5}),
    ("Muon", {"weight_decay": -0.1}),
    ("Muon", {"adjust_lr_fn": "rms"}),
]


@pytest.mark.parametrize("case", BAD_ARGUMENTS, ids=lambda c: f"{c[0]}-{c[1]}")
def test_invalid_arguments_raise_torchs_errors(case: tuple[str, dict[str, Any]]) -> None:
    name, options = case
    with pytest.raises(ValueError) as expected:
        getattr(torch.optim, name)([torch.zeros(2, 2, requires_grad=True)], **options)
    with pytest.raises(ValueError) as got:
        getattr(optim, name)([ember.zeros(2, 2).requires_grad_()], **options)
    assert str(got.value) == str(expected.value)


def test_tensor_lr_must_have_one_element() -> None:
    for name in ("Adafactor", "Muon"):
        with pytest.raises(ValueError, match=r"^Tensor lr must be 1-element$"):
            getattr(optim, name)([ember.zeros(2, 2).requires_grad_()], lr=ember.ones(2))


def test_muon_rejects_non_matrix_parameters() -> None:
    prefix = "Muon only supports 2D parameters whereas we found a parameter with size: "
    for shape in [(3,), (2, 3, 4)]:
        with pytest.raises(ValueError) as expected:
            torch.optim.Muon([torch.zeros(shape, requires_grad=True)])
        with pytest.raises(ValueError) as got:
            optim.Muon([ember.zeros(shape).requires_grad_()])
        assert str(expected.value) == prefix + f"torch.Size({list(shape)})"
        assert str(got.value) == prefix + f"ember.Size({list(shape)})"


@pytest.mark.parametrize(
    "options", [{"ns_steps": 100}, {"ns_coefficients": (1.0, 2.0)}], ids=["steps", "coefficients"]
)
def test_muon_iteration_options_are_checked_at_step_as_in_torch(options: dict[str, Any]) -> None:
    messages = []
    for lib, zeros in ((torch.optim, torch.zeros), (optim, ember.zeros)):
        p = zeros(3, 2).requires_grad_()
        p.grad = zeros(3, 2) + 1
        opt = lib.Muon([p], **options)
        before = np.asarray(p.detach()).copy()
        with pytest.raises(ValueError) as error:
            opt.step()
        np.testing.assert_array_equal(np.asarray(p.detach()), before)
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_defaults_match_torchs() -> None:
    for name in ("Adafactor", "Muon"):
        ours = getattr(optim, name)([ember.zeros(2, 2).requires_grad_()]).defaults
        theirs = getattr(torch.optim, name)([torch.zeros(2, 2, requires_grad=True)]).defaults
        assert ours == theirs
    assert "Adafactor" in optim.__all__ and "Muon" in optim.__all__
