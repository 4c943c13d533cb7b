"""Global buffer / parameter / module registration hooks: when they run, what they replace."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

import ember
import ember.nn.modules.module as ember_module
from ember import nn

torch = pytest.importorskip("torch")


def _registrations(lib: Any, mm: ModuleType, device: str) -> list[str]:
    """Log every registration hook call while building and editing a small model."""
    log: list[str] = []

    def describe(value: Any) -> str:
        return "None" if value is None else type(value).__name__

    handles = [
        mm.register_module_buffer_registration_hook(
            lambda m, name, value: log.append(f"buffer {name} {describe(value)}")
        ),
        mm.register_module_parameter_registration_hook(
            lambda m, name, value: log.append(f"param {name} {describe(value)}")
        ),
        mm.register_module_module_registration_hook(
            lambda m, name, value: log.append(f"module {name} {describe(value)}")
        ),
    ]
    try:
        root = lib.nn.Module()
        root.weight = lib.nn.Parameter(lib.zeros(1, device=device))
        root.register_parameter("bias", None)
        root.register_buffer("mean", lib.zeros(1, device=device))
        root.register_buffer("scratch", None, persistent=False)
        root.mean = lib.ones(1, device=device)
        root.child = lib.nn.Module()
        root.add_module("other", None)
        root.register_module("third", lib.nn.Module())
        root.child = None
        root.seq = lib.nn.Sequential(lib.nn.Module())
    finally:
        for h in handles:
            h.remove()
    return log


def test_registration_hook_calls_match_torch(device: str) -> None:
    expected = _registrations(torch, torch.nn.modules.module, "cpu")  # the reference: cpu
    assert _registrations(ember, ember_module, device) == expected
    assert "param bias None" not in expected  # a None parameter skips the hooks
    assert "module other None" in expected


@pytest.fixture
def registration_hooks() -> Iterator[list[Any]]:
    handles: list[Any] = []
    yield handles
    for handle in handles:
        handle.remove()


def test_registration_hooks_replace_the_registered_value(
    device: str, registration_hooks: list[Any]
) -> None:
    replacement_buffer = ember.ones(2, device=device)
    replacement_param = nn.Parameter(ember.full((2,), 5.0, device=device))
    replacement_module = nn.Sequential()
    registration_hooks += [
        ember_module.register_module_buffer_registration_hook(
            lambda m, name, value: replacement_buffer
        ),
        ember_module.register_module_parameter_registration_hook(
            lambda m, name, value: replacement_param
        ),
        ember_module.register_module_module_registration_hook(
            lambda m, name, value: replacement_module if name == "child" else None
        ),
    ]
    m = nn.Module()
    m.register_buffer("b", ember.zeros(2, device=device))
    m.p = nn.Parameter(ember.zeros(2, device=device))
    m.child = nn.Module()
    m.kept = nn.Module()
    assert m.b is replacement_buffer and m.p is replacement_param
    assert m.child is replacement_module and type(m.kept) is nn.Module


def test_removed_registration_hooks_stop_running(
    device: str, registration_hooks: list[Any]
) -> None:
    calls: list[str] = []
    handle = ember_module.register_module_parameter_registration_hook(
        lambda m, name, value: calls.append(name)
    )
    m = nn.Module()
    m.a = nn.Parameter(ember.zeros(1, device=device))
    handle.remove()
    m.b = nn.Parameter(ember.zeros(1, device=device))
    assert calls == ["a"]
