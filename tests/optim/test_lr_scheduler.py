"""StepLR, CosineAnnealingLR, LambdaLR and OneCycleLR give exactly torch's sequences: learning
rates, cycled momentum / betas, get_last_lr, last_epoch and state-dict round trips."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import pytest

import ember
from ember import optim
from ember.optim import lr_scheduler

torch = pytest.importorskip("torch")


def _pair(
    optimizer: str, groups: list[dict[str, Any]], **options: Any
) -> tuple[optim.Optimizer, Any]:
    e_groups = [{**g, "params": [ember.zeros(1).requires_grad_()]} for g in groups]
    t_groups = [{**g, "params": [torch.zeros(1, requires_grad=True)]} for g in groups]
    return (
        getattr(optim, optimizer)(e_groups, **options),
        getattr(torch.optim, optimizer)(t_groups, **options),
    )


def _run(
    name: str,
    kwargs: dict[str, Any],
    steps: int,
    optimizer: str = "SGD",
    groups: list[dict[str, Any]] | None = None,
    lr_lambda: Any = None,
    **options: Any,
) -> tuple[Any, Any]:
    groups = groups or [{"lr": 0.1}]
    e_opt, t_opt = _pair(optimizer, groups, **options)
    extra = {} if lr_lambda is None else {"lr_lambda": lr_lambda}
    e_sched = getattr(lr_scheduler, name)(e_opt, **kwargs, **extra)
    t_sched = getattr(torch.optim.lr_scheduler, name)(t_opt, **kwargs, **extra)
    _assert_same(e_sched, t_sched)
    for _ in range(steps):
        e_opt.step()
        t_opt.step()
        e_sched.step()
        t_sched.step()
        _assert_same(e_sched, t_sched)
    return e_sched, t_sched


def _assert_same(e_sched: Any, t_sched: Any) -> None:
    assert e_sched.get_last_lr() == t_sched.get_last_lr()  # exact: the same float arithmetic
    assert e_sched.last_epoch == t_sched.last_epoch
    for e_group, t_group in zip(
        e_sched.optimizer.param_groups, t_sched.optimizer.param_groups, strict=True
    ):
        for key in ("lr", "momentum", "betas", "initial_lr", "max_lr", "min_lr"):
            if key in t_group:
                assert e_group[key] == t_group[key], key


TWO_GROUPS = [{"lr": 0.1}, {"lr": 0.02}]


@pytest.mark.parametrize(("step_size", "gamma"), [(1, 0.5), (3, 0.1), (7, 0.9)])
def test_step_lr(step_size: int, gamma: float) -> None:
    _run("StepLR", dict(step_size=step_size, gamma=gamma), 25, groups=TWO_GROUPS)


@pytest.mark.parametrize(("T_max", "eta_min"), [(10, 0.0), (7, 0.001), (1, 0.0)])
def test_cosine_annealing_lr_beyond_t_max(T_max: int, eta_min: float) -> None:
    _run("CosineAnnealingLR", dict(T_max=T_max, eta_min=eta_min), 3 * T_max + 5, groups=TWO_GROUPS)


def test_lambda_lr_with_one_function_and_one_per_group() -> None:
    _run("LambdaLR", {}, 12, lr_lambda=lambda epoch: 0.95**epoch)
    _run(
        "LambdaLR",
        {},
        12,
        groups=TWO_GROUPS,
        lr_lambda=[lambda epoch: 1 / (epoch + 1), lambda epoch: 0.5 * epoch],
    )


ONE_CYCLE = [
    dict(
        anneal_strategy=strategy,
        three_phase=three_phase,
        pct_start=pct_start,
        div_factor=div_factor,
        final_div_factor=final_div,
        cycle_momentum=cycle,
    )
    for strategy, three_phase, pct_start, (div_factor, final_div), cycle in itertools.product(
        ("cos", "linear"), (False, True), (0.3, 0.25), ((25.0, 1e4), (10.0, 100.0)), (True, False)
    )
]


@pytest.mark.parametrize("options", ONE_CYCLE, ids=lambda o: "-".join(map(str, o.values())))
@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_one_cycle_lr(options: dict[str, Any], optimizer: str) -> None:
    extra = {"momentum": 0.9} if optimizer == "SGD" else {}
    _run(
        "OneCycleLR",
        dict(max_lr=[0.5, 0.05], total_steps=40, **options),
        40,
        optimizer=optimizer,
        groups=TWO_GROUPS,
        **extra,
    )


def test_one_cycle_lr_with_epochs_and_momentum_bounds() -> None:
    _run(
        "OneCycleLR",
        dict(max_lr=0.3, epochs=3, steps_per_epoch=7, base_momentum=0.7, max_momentum=0.99),
        21,
        momentum=0.9,
    )


def test_one_cycle_lr_errors() -> None:
    opt = optim.SGD([ember.zeros(1).requires_grad_()], lr=0.1, momentum=0.9)
    with pytest.raises(ValueError, match="total_steps OR"):
        lr_scheduler.OneCycleLR(opt, max_lr=0.1)
    with pytest.raises(ValueError, match="positive integer total_steps"):
        lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=0)
    with pytest.raises(ValueError, match="pct_start"):
        lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=10, pct_start=1.5)
    with pytest.raises(ValueError, match="anneal_strategy"):
        lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=10, anneal_strategy="step")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"same length as optimizer\.param_groups"):
        lr_scheduler.OneCycleLR(opt, max_lr=[0.1, 0.2], total_steps=10)
    plain = optim.Optimizer([ember.zeros(1).requires_grad_()], {"lr": 0.1})
    with pytest.raises(ValueError, match="must support momentum or beta1"):
        lr_scheduler.OneCycleLR(plain, max_lr=0.1, total_steps=10)
    sched = lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=2)
    opt.step()
    sched.step()
    sched.step()
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        sched.step()


CASES = [
    ("StepLR", dict(step_size=3, gamma=0.5), None),
    ("CosineAnnealingLR", dict(T_max=6, eta_min=0.01), None),
    ("OneCycleLR", dict(max_lr=0.4, total_steps=30, three_phase=True), None),
]


@pytest.mark.parametrize(("name", "kwargs", "lr_lambda"), CASES, ids=[c[0] for c in CASES])
def test_state_dict_round_trip_continues_the_sequence(
    name: str, kwargs: dict[str, Any], lr_lambda: Any
) -> None:
    e_sched, t_sched = _run(name, kwargs, 8, momentum=0.9)
    saved = e_sched.state_dict()
    assert "optimizer" not in saved and saved["last_epoch"] == 8
    assert set(saved) == set(t_sched.state_dict())
    opt = optim.SGD([ember.zeros(1).requires_grad_()], lr=0.1, momentum=0.9)
    opt.load_state_dict(e_sched.optimizer.state_dict())
    restored = getattr(lr_scheduler, name)(opt, **kwargs)
    restored.load_state_dict(saved)
    for _ in range(10):
        for o in (opt, e_sched.optimizer, t_sched.optimizer):
            o.step()
        restored.step()
        e_sched.step()
        t_sched.step()
        assert restored.get_last_lr() == e_sched.get_last_lr() == t_sched.get_last_lr()
        assert restored.last_epoch == t_sched.last_epoch


def test_lambda_lr_state_dict_keeps_callable_objects_state() -> None:
    class Decay:
        def __init__(self, rate: float) -> None:
            self.rate = rate

        def __call__(self, epoch: int) -> float:
            return self.rate**epoch

    opt = optim.SGD([ember.zeros(1).requires_grad_()], lr=1.0)
    sched = lr_scheduler.LambdaLR(opt, [Decay(0.5)])
    saved = sched.state_dict()
    assert saved["lr_lambdas"] == [{"rate": 0.5}]
    lambdas = lr_scheduler.LambdaLR(opt, lambda e: 1.0).state_dict()["lr_lambdas"]
    assert lambdas == [None]
    fresh = Decay(0.9)
    other = lr_scheduler.LambdaLR(opt, [fresh])
    other.load_state_dict(saved)
    assert fresh.rate == 0.5


def test_resuming_needs_initial_lr() -> None:
    opt = optim.SGD([ember.zeros(1).requires_grad_()], lr=0.1)
    with pytest.raises(KeyError, match="initial_lr"):
        lr_scheduler.StepLR(opt, step_size=2, last_epoch=4)
    opt.param_groups[0]["initial_lr"] = 0.1
    sched = lr_scheduler.StepLR(opt, step_size=2, last_epoch=4)
    assert sched.last_epoch == 5


def test_closed_form_with_an_explicit_epoch_warns_and_matches_torch() -> None:
    for name, kwargs in (("StepLR", dict(step_size=2)), ("CosineAnnealingLR", dict(T_max=5))):
        e_opt, t_opt = _pair("SGD", [{"lr": 0.1}])
        e_sched = getattr(lr_scheduler, name)(e_opt, **kwargs)
        t_sched = getattr(torch.optim.lr_scheduler, name)(t_opt, **kwargs)
        e_opt.step()
        t_opt.step()
        with pytest.warns(UserWarning, match="epoch parameter"):
            e_sched.step(7)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_sched.step(7)
        assert e_sched.get_last_lr() == t_sched.get_last_lr()


def test_warnings_on_call_order_and_get_lr_outside_step() -> None:
    opt = optim.SGD([ember.zeros(1).requires_grad_()], lr=0.1)
    sched = lr_scheduler.StepLR(opt, step_size=1)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()
    opt2 = optim.SGD([ember.zeros(1).requires_grad_()], lr=0.1)
    sched2 = lr_scheduler.StepLR(opt2, step_size=1)
    opt2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched2.step()
    assert sched2.get_last_lr() == [pytest.approx(0.01)]


def test_scheduler_requires_an_optimizer() -> None:
    with pytest.raises(TypeError, match="is not an Optimizer"):
        lr_scheduler.StepLR(object(), step_size=1)  # type: ignore[arg-type]
