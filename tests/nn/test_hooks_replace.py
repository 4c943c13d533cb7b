"""What a module hook's return value may replace, removable handles, and the hook-free path."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
import ember.nn.modules.module as ember_module
from ember import nn


class Recorder(nn.Module):
    """Returns its positional and keyword arguments, so a test sees what forward received."""

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return args, kwargs


class Double(nn.Module):
    def forward(self, x: ember.Tensor) -> ember.Tensor:
        return x * 2.0


def test_pre_hook_single_return_value_is_wrapped_in_a_tuple() -> None:
    m = Recorder()
    m.register_forward_pre_hook(lambda m, args: "replaced")
    assert m(1, 2, k=3) == (("replaced",), {"k": 3})


def test_pre_hook_tuple_replaces_args_and_the_next_hook_sees_them() -> None:
    m = Recorder()
    seen = []
    m.register_forward_pre_hook(lambda m, args: (*args, "extra"))
    m.register_forward_pre_hook(lambda m, args: seen.append(args))
    assert m(1) == ((1, "extra"), {})
    assert seen == [(1, "extra")]


def test_pre_hook_with_kwargs_replaces_args_and_kwargs() -> None:
    m = Recorder()
    m.register_forward_pre_hook(
        lambda m, args, kwargs: ((0,), {**kwargs, "added": True}), with_kwargs=True
    )
    assert m(1, k=2) == ((0,), {"k": 2, "added": True})


def test_pre_hook_with_kwargs_must_return_a_pair() -> None:
    m = Recorder()
    m.register_forward_pre_hook(lambda m, args, kwargs: (1, 2, 3), with_kwargs=True)
    with pytest.raises(RuntimeError, match=r"forward pre-hook must return None or a tuple of"):
        m(1)


def test_forward_hook_replaces_output_and_sees_args_and_kwargs() -> None:
    m = Recorder()
    seen = []
    m.register_forward_hook(lambda m, args, out: "first")
    m.register_forward_hook(
        lambda m, args, kwargs, out: seen.append((args, kwargs, out)), with_kwargs=True
    )
    m.register_forward_hook(lambda m, args, out: out + "+second")
    assert m(1, k=2) == "first+second"
    assert seen == [((1,), {"k": 2}, "first")]


def test_global_forward_hook_with_kwargs() -> None:
    seen = []
    handle = ember_module.register_module_forward_hook(
        lambda m, args, kwargs, out: seen.append(kwargs), with_kwargs=True
    )
    with handle:
        Recorder()(k=1)
    Recorder()(k=2)
    assert seen == [{"k": 1}]


def test_backward_pre_hook_replaces_grad_output(device: str) -> None:
    m = Double().to(device)
    m.register_full_backward_pre_hook(lambda m, grad_output: (grad_output[0] * 10.0,))
    x = ember.tensor([1.0, 2.0], device=device).requires_grad_()
    m(x).backward(ember.tensor([1.0, 1.0], device=device))
    assert x.grad is not None
    np.testing.assert_array_equal(x.grad.numpy(force=True), [20.0, 20.0])


def test_backward_hook_replaces_grad_input(device: str) -> None:
    m = Double().to(device)
    seen = []
    m.register_full_backward_hook(lambda m, gi, go: (gi[0] + 100.0,))
    m.register_full_backward_hook(lambda m, gi, go: seen.append(gi[0].tolist()))
    x = ember.tensor([1.0, 2.0], device=device).requires_grad_()
    m(x).backward(ember.tensor([1.0, 3.0], device=device))
    assert seen == [[102.0, 106.0]]
    assert x.grad is not None
    np.testing.assert_array_equal(x.grad.numpy(force=True), [102.0, 106.0])


def test_backward_hooks_returning_the_wrong_number_of_gradients_raise(device: str) -> None:
    x = ember.tensor([1.0], device=device).requires_grad_()
    m = Double().to(device)
    m.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
    with pytest.raises(
        RuntimeError,
        match=r"Backward pre hook returned an invalid number of grad_output, got 2, but "
        r"expected 1",
    ):
        m(x).backward(ember.tensor([1.0], device=device))
    m = Double().to(device)
    m.register_full_backward_hook(lambda m, gi, go: ())
    with pytest.raises(
        RuntimeError,
        match=r"Backward hook returned an invalid number of grad_input, got 0, but expected 1",
    ):
        m(x).backward(ember.tensor([1.0], device=device))


def test_backward_hooks_of_a_module_whose_inputs_need_no_grad(device: str) -> None:
    """They fire at the outputs, with grad_input all None, and must not return gradients."""
    scale = nn.Parameter(ember.tensor([3.0], device=device))

    class Scaled(nn.Module):
        def forward(self, x: ember.Tensor) -> ember.Tensor:
            return x * scale

    m = Scaled().to(device)
    seen = []
    m.register_full_backward_hook(lambda m, gi, go: seen.append((gi, go[0].tolist())))
    with pytest.warns(UserWarning, match="no inputs require gradients"):
        m(ember.tensor([2.0], device=device)).backward(ember.tensor([1.0], device=device))
    assert seen == [((None,), [1.0])]
    assert scale.grad is not None and scale.grad.tolist() == [2.0]
    m.register_full_backward_hook(lambda m, gi, go: (ember.tensor([1.0], device=device),))
    with (
        pytest.warns(UserWarning, match="no inputs require gradients"),
        pytest.raises(RuntimeError, match="should always return None or None for all"),
    ):
        m(ember.tensor([2.0], device=device)).backward(ember.tensor([1.0], device=device))


def test_no_grad_call_sets_up_no_backward_hooks(device: str) -> None:
    m = Double().to(device)
    calls = []
    m.register_full_backward_hook(lambda *a: calls.append(a))
    x = ember.tensor([1.0], device=device).requires_grad_()
    with ember.no_grad():
        out = m(x)
    assert not out.requires_grad
    assert calls == []


def test_removed_hooks_no_longer_run(device: str) -> None:
    m = Double().to(device)
    log: list[str] = []
    handles = [
        m.register_forward_pre_hook(lambda m, a: log.append("pre")),
        m.register_forward_hook(lambda m, a, o: log.append("fwd")),
        m.register_full_backward_pre_hook(lambda m, g: log.append("bpre")),
        m.register_full_backward_hook(lambda m, gi, go: log.append("bwd")),
        ember_module.register_module_forward_pre_hook(lambda m, a: log.append("g-pre")),
        ember_module.register_module_forward_hook(lambda m, a, o: log.append("g-fwd")),
        ember_module.register_module_full_backward_pre_hook(lambda m, g: log.append("g-bpre")),
        ember_module.register_module_full_backward_hook(lambda m, gi, go: log.append("g-bwd")),
    ]
    x = ember.tensor([1.0], device=device).requires_grad_()
    m(x).backward(ember.tensor([1.0], device=device))
    assert sorted(log) == sorted(["pre", "fwd", "bpre", "bwd", "g-pre", "g-fwd", "g-bpre", "g-bwd"])
    for handle in handles:
        handle.remove()
        handle.remove()  # removing twice is harmless
    log.clear()
    m(x).backward(ember.tensor([1.0], device=device))
    assert log == []


def test_a_hook_may_remove_itself_while_running(device: str) -> None:
    m = Double().to(device)
    log: list[str] = []

    def once(module: nn.Module, args: Any) -> None:
        log.append("once")
        handle.remove()

    handle = m.register_forward_pre_hook(once)
    m.register_forward_pre_hook(lambda m, a: log.append("always"))
    m(ember.tensor([1.0], device=device))
    m(ember.tensor([1.0], device=device))
    assert log == ["once", "always", "always"]


def test_handle_is_a_context_manager(device: str) -> None:
    m = Double().to(device)
    log: list[int] = []
    with m.register_forward_hook(lambda m, a, o: log.append(1)):
        m(ember.tensor([1.0], device=device))
    m(ember.tensor([1.0], device=device))
    assert log == [1]


def test_a_module_whose_hooks_were_all_removed_returns_to_the_hook_free_path(device: str) -> None:
    m = Double().to(device)
    assert m._maybe_call_hooks is False
    handle = m.register_forward_hook(lambda m, a, o: None)
    assert m._maybe_call_hooks is True
    handle.remove()
    m(ember.tensor([1.0], device=device))
    assert m._maybe_call_hooks is False


def test_missing_forward_names_the_module() -> None:
    with pytest.raises(NotImplementedError, match=r"Module \[Module\] is missing the required"):
        nn.Module()(1)
