"""Module hooks run in PyTorch's order: the same module tree, built in torch and in ember,
logs the same sequence of forward, backward and global hook calls."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

import ember
import ember.nn.modules.module as ember_module

torch = pytest.importorskip("torch")


def _grads(grads: tuple[Any, ...]) -> list[Any]:
    return [None if g is None else [round(v, 6) for v in g.tolist()] for g in grads]


def _tree(nn: Any, log: list[str]) -> Any:
    """net(x, y) = b(a(x)) * y + x, with b = Sequential(Scale 3, Scale 5)."""

    class Scale(nn.Module):
        def __init__(self, name: str, k: float) -> None:
            super().__init__()
            self.label = name
            self.k = k

        def forward(self, x: Any) -> Any:
            log.append(f"forward {self.label}")
            return x * self.k

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = Scale("a", 2.0)
            self.b = nn.Sequential(Scale("b0", 3.0), Scale("b1", 5.0))

        def forward(self, x: Any, y: Any) -> Any:
            log.append("forward net")
            return self.b(self.a(x)) * y + x

    return Net()


def _register_everything(net: Any, mm: ModuleType, log: list[str]) -> list[Any]:
    """Every per-module and global call-time hook, each logging its call."""
    handles = []
    for path, m in net.named_modules():
        n = path or "net"
        handles += [
            m.register_forward_pre_hook(lambda m, a, n=n: log.append(f"pre {n}")),
            m.register_forward_hook(lambda m, a, o, n=n: log.append(f"fwd {n}")),
            m.register_full_backward_pre_hook(
                lambda m, go, n=n: log.append(f"bpre {n} {_grads(go)}")
            ),
            m.register_full_backward_hook(
                lambda m, gi, go, n=n: log.append(f"bwd {n} {_grads(gi)} {_grads(go)}")
            ),
        ]
    handles += [
        mm.register_module_forward_pre_hook(lambda m, a: log.append(f"g-pre {m._get_name()}")),
        mm.register_module_forward_hook(lambda m, a, o: log.append(f"g-fwd {m._get_name()}")),
        mm.register_module_full_backward_pre_hook(
            lambda m, go: log.append(f"g-bpre {m._get_name()}")
        ),
        mm.register_module_full_backward_hook(
            lambda m, gi, go: log.append(f"g-bwd {m._get_name()}")
        ),
    ]
    return handles


def _run(lib: Any, nn: Any, mm: ModuleType, y_requires_grad: bool, device: str) -> list[str]:
    log: list[str] = []
    net = _tree(nn, log).to(device)
    handles = _register_everything(net, mm, log)
    try:
        x = lib.tensor([1.0, 2.0], device=device).requires_grad_()
        y = lib.tensor([0.5, -1.0], device=device).requires_grad_(y_requires_grad)
        out = net(x, y)
        log.append("backward")
        out.backward(lib.tensor([1.0, 10.0], device=device))
        log.append(f"x.grad {x.grad.tolist()}")
    finally:
        for h in handles:
            h.remove()
    return log


@pytest.mark.parametrize("y_requires_grad", [True, False])
def test_forward_and_backward_hook_order_matches_torch(device: str, y_requires_grad: bool) -> None:
    # The reference runs on torch's cpu; only ember's side follows the device under test.
    expected = _run(torch, torch.nn, torch.nn.modules.module, y_requires_grad, "cpu")
    actual = _run(ember, ember.nn, ember_module, y_requires_grad, device)
    assert actual == expected
    # net = 30 x y + x: grad_input = (go (30 y + 1), go 30 x); an input that does not
    # require grad gets zeros (PyTorch materialises it).
    grad_y = [30.0, 600.0] if y_requires_grad else [0.0, 0.0]
    assert f"bwd net [[16.0, -290.0], {grad_y}] [[1.0, 10.0]]" in actual


def _prepend_log(nn: Any, device: str) -> list[str]:
    log: list[str] = []

    class Identity(nn.Module):
        def forward(self, x: Any) -> Any:
            log.append("forward")
            return x

    m = Identity().to(device)
    for i in range(2):
        m.register_forward_pre_hook(lambda m, a, i=i: log.append(f"pre{i}"))
        m.register_forward_pre_hook(lambda m, a, i=i: log.append(f"pre{i}-first"), prepend=True)
        m.register_forward_hook(lambda m, a, o, i=i: log.append(f"fwd{i}"))
        m.register_forward_hook(lambda m, a, o, i=i: log.append(f"fwd{i}-first"), prepend=True)
        m.register_forward_hook(
            lambda m, a, k, o, i=i: log.append(f"fwd{i}-kw {sorted(k)}"), with_kwargs=True
        )
        m.register_full_backward_pre_hook(lambda m, g, i=i: log.append(f"bpre{i}"))
        m.register_full_backward_pre_hook(
            lambda m, g, i=i: log.append(f"bpre{i}-first"), prepend=True
        )
        m.register_full_backward_hook(lambda m, gi, go, i=i: log.append(f"bwd{i}"))
        m.register_full_backward_hook(
            lambda m, gi, go, i=i: log.append(f"bwd{i}-first"), prepend=True
        )
    lib = torch if nn is torch.nn else ember
    x = lib.tensor([1.0], device=device).requires_grad_()
    m(x * 1).backward(lib.tensor([1.0], device=device))
    return log


def test_prepend_and_with_kwargs_order_matches_torch(device: str) -> None:
    assert _prepend_log(ember.nn, device) == _prepend_log(torch.nn, "cpu")


def _always_call_log(nn: Any, mm: ModuleType, raise_in: str, device: str) -> list[str]:
    """Which forward hooks run when forward (or a hook) raises."""
    log: list[str] = []

    class Failing(nn.Module):
        def forward(self, x: Any) -> Any:
            log.append("forward")
            if raise_in == "forward":
                raise ValueError("boom")
            return x

    def hook(name: str, fail: bool = False) -> Callable[..., None]:
        def run(m: Any, args: Any, *rest: Any) -> None:
            log.append(f"{name} output={rest[-1] is not None}")
            if fail:
                raise ValueError(f"{name} failed")

        return run

    m = Failing().to(device)
    handles = [
        mm.register_module_forward_hook(hook("g-plain")),
        mm.register_module_forward_hook(hook("g-always"), always_call=True),
        m.register_forward_hook(hook("always-0"), always_call=True),
        m.register_forward_hook(hook("plain", fail=raise_in == "hook")),
        m.register_forward_hook(hook("always-1"), always_call=True),
        m.register_forward_hook(hook("always-failing", fail=True), always_call=True),
        m.register_forward_hook(hook("always-kw"), always_call=True, with_kwargs=True),
    ]
    lib = torch if nn is torch.nn else ember
    try:
        with (
            pytest.warns(UserWarning, match=r"always_call=True"),
            pytest.raises(ValueError, match=r"boom|plain failed|always-failing failed"),
        ):
            m(lib.tensor([1.0], device=device))
    finally:
        for h in handles:
            h.remove()
    return log


@pytest.mark.parametrize("raise_in", ["forward", "hook"])
def test_always_call_hooks_run_when_forward_raises(device: str, raise_in: str) -> None:
    expected = _always_call_log(torch.nn, torch.nn.modules.module, raise_in, "cpu")
    actual = _always_call_log(ember.nn, ember_module, raise_in, device)
    assert actual == expected
    if raise_in == "forward":
        assert actual == [
            "forward",
            "g-always output=False",
            "always-0 output=False",
            "always-1 output=False",
            "always-failing output=False",
            "always-kw output=False",
        ]


def test_global_hooks_run_before_module_hooks_even_when_prepended(device: str) -> None:
    log: list[str] = []
    m = ember.nn.Sequential().to(device)
    m.register_forward_pre_hook(lambda m, a: log.append("module"), prepend=True)
    m.register_forward_hook(lambda m, a, o: log.append("module-fwd"), prepend=True)
    handles = [
        ember_module.register_module_forward_pre_hook(lambda m, a: log.append("global")),
        ember_module.register_module_forward_hook(lambda m, a, o: log.append("global-fwd")),
    ]
    try:
        m(ember.tensor([1.0], device=device))
    finally:
        for h in handles:
            h.remove()
    assert log == ["global", "module", "global-fwd", "module-fwd"]
