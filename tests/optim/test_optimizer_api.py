"""The Optimizer base: parameter groups, zero_grad, hooks, state dicts, errors (PyTorch's)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from ember import optim
from ember.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)


def leaf(values: list[float], device: str = "cpu") -> ember.Tensor:
    return ember.tensor(values, device=device).requires_grad_()


def test_zero_grad_sets_to_none_by_default(device: str) -> None:
    a, b = leaf([1.0, 2.0], device), leaf([3.0], device)
    opt = optim.SGD([a, b], lr=0.1)
    a.grad = ember.ones(2, device=device)
    opt.zero_grad()
    assert a.grad is None and b.grad is None


def test_zero_grad_to_zeros_keeps_the_tensor(device: str) -> None:
    a = leaf([1.0, 2.0], device)
    opt = optim.SGD([a], lr=0.1)
    grad = a.grad = ember.ones(2, device=device)
    opt.zero_grad(set_to_none=False)
    assert a.grad is grad
    np.testing.assert_array_equal(np.asarray(grad), [0.0, 0.0])


def test_step_updates_in_place_and_skips_parameters_without_grad(device: str) -> None:
    a, b = leaf([1.0, 2.0], device), leaf([3.0], device)
    opt = optim.Adam([a, b], lr=0.1)
    storage, version = a.untyped_storage(), a._version
    a.grad = ember.ones(2, device=device)
    opt.step()
    assert a.untyped_storage() is storage and a._version > version
    assert a.requires_grad and a.is_leaf and a.grad_fn is None
    assert b not in opt.state and list(opt.state) == [a]
    np.testing.assert_array_equal(np.asarray(b.detach()), [3.0])


def test_step_restores_grad_mode_when_the_update_raises() -> None:
    a = leaf([1.0, 2.0])
    opt = optim.SGD([a], lr=0.1)
    a.grad = ember.ones(2)
    opt.param_groups[0]["lr"] = "not a number"
    with pytest.raises(TypeError):
        opt.step()
    assert ember.is_grad_enabled()


def test_custom_optimizer_step_runs_without_grad() -> None:
    class Halve(optim.Optimizer):
        def __init__(self, params: Any) -> None:
            super().__init__(params, {"factor": 0.5})

        def step(self, closure: Any = None) -> Any:
            for group in self.param_groups:
                for p in group["params"]:
                    p.mul_(group["factor"])  # in place on a leaf: only legal under no_grad
            return None

    a = leaf([4.0])
    Halve([a]).step()
    np.testing.assert_array_equal(np.asarray(a.detach()), [2.0])


def test_param_groups_take_defaults_and_their_own_options() -> None:
    a, b = leaf([1.0]), leaf([2.0])
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert [g["momentum"] for g in opt.param_groups] == [0.9, 0.9]
    assert opt.param_groups[1]["params"] == [b]
    c = leaf([3.0])
    opt.add_param_group({"params": [c], "momentum": 0.0})
    assert opt.param_groups[2]["lr"] == 0.1 and opt.param_groups[2]["momentum"] == 0.0


def test_named_parameters_are_kept_as_param_names() -> None:
    a, b = leaf([1.0]), leaf([2.0])
    opt = optim.Adam([("weight", a), ("bias", b)])
    assert opt.param_groups[0]["params"] == [a, b]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["weight", "bias"]
    with pytest.raises(ValueError, match="with/without names"):
        opt.add_param_group({"params": [leaf([3.0])]})


@pytest.mark.parametrize(
    ("params", "error", "message"),
    [
        ([], ValueError, "empty parameter list"),
        ("tensor", TypeError, "iterable of Tensors or dicts"),
        ([[1.0]], TypeError, "can only optimize Tensors"),
        ("set", TypeError, "ordered collections"),
        ("non-leaf", ValueError, "can't optimize a non-leaf Tensor"),
        ("twice", ValueError, "more than one parameter group"),
    ],
)
def test_parameter_errors(params: Any, error: type[Exception], message: str) -> None:
    a = leaf([1.0])
    if params == "tensor":
        params = a
    elif params == "set":
        params = [{"params": {a}}]
    elif params == "non-leaf":
        params = [ember.mul(a, 2.0)]
    elif params == "twice":
        params = [{"params": [a]}, {"params": [a]}]
    with pytest.raises(error, match=message):
        optim.SGD(params, lr=0.1)


def test_duplicate_parameters_in_a_group_warn() -> None:
    a = leaf([1.0])
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([a, a], lr=0.1)


@pytest.mark.parametrize(
    ("cls", "options", "message"),
    [
        (optim.SGD, dict(lr=-1.0), "Invalid learning rate: -1.0"),
        (optim.SGD, dict(momentum=-0.1), "Invalid momentum value: -0.1"),
        (optim.SGD, dict(weight_decay=-1), "Invalid weight_decay value: -1"),
        (optim.SGD, dict(nesterov=True), "Nesterov momentum requires a momentum"),
        (optim.SGD, dict(nesterov=True, momentum=0.9, dampening=0.1), "zero dampening"),
        (optim.Adam, dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
        (optim.Adam, dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
        (optim.Adam, dict(eps=-1e-8), "Invalid epsilon value"),
        (optim.AdamW, dict(lr=-0.1), "Invalid learning rate"),
        (optim.RMSprop, dict(alpha=-0.5), "Invalid alpha value: -0.5"),
        (optim.RMSprop, dict(momentum=-1.0), "Invalid momentum value"),
    ],
)
def test_option_errors(cls: type[optim.Optimizer], options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        cls([leaf([1.0])], **options)


def test_adamw_defaults_and_decoupled_flag() -> None:
    opt = optim.AdamW([leaf([1.0])])
    group = opt.param_groups[0]
    assert group["weight_decay"] == 1e-2 and group["decoupled_weight_decay"] is True
    saved = opt.state_dict()
    saved["param_groups"][0]["decoupled_weight_decay"] = False
    opt.load_state_dict(saved)
    assert opt.param_groups[0]["decoupled_weight_decay"] is True


def test_step_counter_is_a_tensor_and_rereads_external_writes() -> None:
    a = leaf([1.0])
    opt = optim.Adam([a], lr=0.1)
    for _ in range(3):
        a.grad = ember.ones(1)
        opt.step()
    step = opt.state[a]["step"]
    assert step.dtype is ember.float32 and step.shape == () and float(step) == 3.0
    step.fill_(10.0)  # someone else writes it: the next step continues from there
    a.grad = ember.ones(1)
    opt.step()
    assert float(opt.state[a]["step"]) == 11.0


def test_step_counter_is_float64_under_a_float64_default_dtype() -> None:
    previous = ember.get_default_dtype()
    ember.set_default_dtype(ember.float64)
    try:
        a = leaf([1.0])
        opt = optim.RMSprop([a])
        a.grad = ember.ones(1)
        opt.step()
        assert opt.state[a]["step"].dtype is ember.float64
    finally:
        ember.set_default_dtype(previous)


def test_load_state_dict_accepts_a_plain_number_step() -> None:
    a = leaf([1.0, 2.0])
    opt = optim.Adam([a], lr=0.1)
    a.grad = ember.ones(2)
    opt.step()
    saved = opt.state_dict()
    saved["state"][0]["step"] = 1
    other = optim.Adam([leaf([1.0, 2.0])], lr=0.1)
    other.load_state_dict(saved)
    other.param_groups[0]["params"][0].grad = ember.ones(2)
    other.step()
    assert float(other.state[other.param_groups[0]["params"][0]]["step"]) == 2.0


def test_state_dict_numbers_parameters_across_groups() -> None:
    a, b, c = leaf([1.0]), leaf([2.0]), leaf([3.0])
    opt = optim.SGD([{"params": [a, b]}, {"params": [c], "lr": 0.5}], lr=0.1, momentum=0.9)
    for p in (a, c):
        p.grad = ember.ones(1)
    opt.step()
    saved = opt.state_dict()
    assert [g["params"] for g in saved["param_groups"]] == [[0, 1], [2]]
    assert sorted(saved["state"]) == [0, 2]
    assert saved["state"][2]["momentum_buffer"] is opt.state[c]["momentum_buffer"]
    assert saved["param_groups"][1]["lr"] == 0.5


@pytest.mark.parametrize(
    ("groups", "message"),
    [
        ([[0.0]], "different number of parameter groups"),
        ([[0.0], [1.0, 2.0], [3.0]], "different number of parameter groups"),
        ([[0.0, 5.0], [1.0]], "doesn't match the size of optimizer's group"),
    ],
)
def test_load_state_dict_mismatch_errors(groups: list[list[float]], message: str) -> None:
    opt = optim.SGD([{"params": [leaf([0.0])]}, {"params": [leaf([1.0])]}], lr=0.1)
    other = optim.SGD([{"params": [leaf([v]) for v in g]} for g in groups], lr=0.1)
    with pytest.raises(ValueError, match=message):
        opt.load_state_dict(other.state_dict())


def test_load_state_dict_fills_options_the_dict_lacks() -> None:
    a = leaf([1.0])
    opt = optim.Adam([a], lr=0.1)
    saved = opt.state_dict()
    del saved["param_groups"][0]["maximize"]
    opt.load_state_dict(saved)
    assert opt.param_groups[0]["maximize"] is False
    a.grad = ember.ones(1)
    opt.step()


def test_load_state_dict_casts_state_to_the_parameter_dtype() -> None:
    a = leaf([1.0, 2.0])
    opt = optim.SGD([a], lr=0.1, momentum=0.9)
    saved = {
        "state": {0: {"momentum_buffer": ember.tensor([1.0, 2.0], dtype=ember.float64)}},
        "param_groups": opt.state_dict()["param_groups"],
    }
    opt.load_state_dict(saved)
    assert opt.state[a]["momentum_buffer"].dtype is ember.float32


def test_step_hooks_run_in_order_and_can_replace_arguments() -> None:
    a = leaf([1.0])
    opt = optim.SGD([a], lr=0.1)
    calls: list[str] = []

    def pre(optimizer: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        calls.append("pre")
        assert optimizer is opt and args == (opt,) and kwargs == {}
        return args, {"closure": lambda: calls.append("closure")}

    handles = [
        register_optimizer_step_pre_hook(lambda o, a, k: calls.append("global pre")),
        opt.register_step_pre_hook(pre),
        opt.register_step_post_hook(lambda o, a, k: calls.append("post")),
        register_optimizer_step_post_hook(lambda o, a, k: calls.append("global post")),
    ]
    try:
        opt.step()
        assert calls == ["global pre", "pre", "closure", "post", "global post"]
    finally:
        for handle in handles:
            handle.remove()
    calls.clear()
    opt.step()
    assert calls == []


def test_step_pre_hook_with_a_bad_result_raises() -> None:
    opt = optim.SGD([leaf([1.0])], lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: "nonsense")
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        opt.step()


def test_state_dict_hooks() -> None:
    opt = optim.SGD([leaf([1.0])], lr=0.1)
    seen: list[str] = []
    opt.register_state_dict_pre_hook(lambda o: seen.append("pre"))
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    assert opt.state_dict()["extra"] == 1 and seen == ["pre"]
    opt.register_load_state_dict_pre_hook(lambda o, sd: {k: v for k, v in sd.items() if k != "x"})
    opt.register_load_state_dict_post_hook(lambda o: seen.append("loaded"))
    saved = opt.state_dict()
    saved["x"] = object()
    opt.load_state_dict(saved)
    assert seen[-1] == "loaded"


def test_repr_lists_each_group() -> None:
    opt = optim.SGD([leaf([1.0])], lr=0.1)
    text = repr(opt)
    assert text.startswith("SGD (\nParameter Group 0\n    dampening: 0\n")
    assert "    lr: 0.1\n" in text and text.endswith(")")


def test_scheduler_sees_whether_the_optimizer_stepped() -> None:
    opt = optim.SGD([leaf([1.0])], lr=0.1)
    assert not opt._opt_called
    opt.step()
    assert opt._opt_called
