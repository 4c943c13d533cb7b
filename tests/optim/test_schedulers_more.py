"""The remaining torch.optim.lr_scheduler schedulers beside torch's: the same learning-rate
(and momentum) sequences over 40 steps, state-dict round trips, explicit epochs and errors."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import pytest

import ember
from ember import optim

torch = pytest.importorskip("torch")

Factory = Callable[[Any, Any], Any]  # (lr_scheduler module, optimizer) -> scheduler

CASES: dict[str, Factory] = {
    "MultiplicativeLR": lambda m, o: m.MultiplicativeLR(o, lambda e: 0.95 if e % 3 else 0.8),
    "MultiStepLR": lambda m, o: m.MultiStepLR(o, milestones=[5, 12, 12, 30], gamma=0.3),
    "ConstantLR": lambda m, o: m.ConstantLR(o, factor=0.25, total_iters=7),
    "LinearLR": lambda m, o: m.LinearLR(o, start_factor=0.1, end_factor=0.9, total_iters=13),
    "ExponentialLR": lambda m, o: m.ExponentialLR(o, gamma=0.9),
    "PolynomialLR": lambda m, o: m.PolynomialLR(o, total_iters=25, power=2.5),
    "CyclicLR-triangular": lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=4),
    "CyclicLR-triangular2": lambda m, o: m.CyclicLR(
        o, [0.01, 0.02], 0.1, step_size_up=3, step_size_down=5, mode="triangular2"
    ),
    "CyclicLR-exp_range": lambda m, o: m.CyclicLR(
        o, 0.01, 0.1, step_size_up=5, mode="exp_range", gamma=0.95, base_momentum=0.7
    ),
    "CyclicLR-scale_fn": lambda m, o: m.CyclicLR(
        o, 0.01, 0.1, step_size_up=6, scale_fn=lambda x: 0.9**x, scale_mode="iterations"
    ),
    "CosineAnnealingWarmRestarts": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=7),
    "CosineAnnealingWarmRestarts-mult": lambda m, o: m.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.001
    ),
    "SequentialLR": lambda m, o: m.SequentialLR(
        o,
        [m.LinearLR(o, 0.2, total_iters=5), m.ExponentialLR(o, 0.9), m.StepLR(o, 4, 0.5)],
        milestones=[6, 20],
    ),
    "ChainedScheduler": lambda m, o: m.ChainedScheduler(
        [m.ConstantLR(o, factor=0.5, total_iters=8), m.ExponentialLR(o, gamma=0.93)]
    ),
}


def _optimizers() -> tuple[Any, Any]:
    groups = [dict(lr=0.1), dict(lr=0.05)]
    ours = optim.SGD(
        [{**g, "params": [ember.zeros(2, requires_grad=True)]} for g in groups], momentum=0.9
    )
    theirs = torch.optim.SGD(
        [{**g, "params": [torch.zeros(2, requires_grad=True)]} for g in groups], momentum=0.9
    )
    return ours, theirs


def _momenta(optimizer: Any) -> list[float]:
    return [g["momentum"] for g in optimizer.param_groups]


def _assert_same(ours: list[float], theirs: list[float]) -> None:
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert math.isclose(a, b, rel_tol=1e-14, abs_tol=1e-17), (ours, theirs)


@pytest.mark.parametrize("name", list(CASES))
def test_sequence_matches_torch(name: str) -> None:
    opt_e, opt_t = _optimizers()
    sched_e = CASES[name](optim.lr_scheduler, opt_e)
    sched_t = CASES[name](torch.optim.lr_scheduler, opt_t)
    _assert_same(sched_e.get_last_lr(), sched_t.get_last_lr())
    for _ in range(40):
        opt_e.step()
        opt_t.step()
        sched_e.step()
        sched_t.step()
        _assert_same(sched_e.get_last_lr(), sched_t.get_last_lr())
        _assert_same([g["lr"] for g in opt_e.param_groups], [g["lr"] for g in opt_t.param_groups])
        _assert_same(_momenta(opt_e), _momenta(opt_t))


@pytest.mark.parametrize("name", list(CASES))
def test_state_dict_round_trip_continues(name: str) -> None:
    opt_e, opt_t = _optimizers()
    sched_e = CASES[name](optim.lr_scheduler, opt_e)
    sched_t = CASES[name](torch.optim.lr_scheduler, opt_t)
    for _ in range(9):
        opt_e.step()
        sched_e.step()
        opt_t.step()
        sched_t.step()
    saved = sched_e.state_dict()
    assert "optimizer" not in saved
    assert set(saved) == set(sched_t.state_dict())
    fresh = CASES[name](optim.lr_scheduler, opt_e)
    fresh.load_state_dict(saved)
    for group, lr in zip(opt_e.param_groups, sched_t.get_last_lr(), strict=True):
        group["lr"] = lr  # the fresh scheduler's construction reset them
    for _ in range(15):
        opt_e.step()
        fresh.step()
        opt_t.step()
        sched_t.step()
        _assert_same(fresh.get_last_lr(), sched_t.get_last_lr())


@pytest.mark.parametrize(
    "name", ["MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR", "PolynomialLR"]
)
def test_explicit_epoch_uses_the_closed_form(name: str) -> None:
    opt_e, opt_t = _optimizers()
    sched_e = CASES[name](optim.lr_scheduler, opt_e)
    sched_t = CASES[name](torch.optim.lr_scheduler, opt_t)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for epoch in (3, 17, 8, 40):
            opt_e.step()
            opt_t.step()
            sched_e.step(epoch)
            sched_t.step(epoch)
            _assert_same(sched_e.get_last_lr(), sched_t.get_last_lr())


def test_warm_restarts_with_fractional_epochs() -> None:
    opt_e, opt_t = _optimizers()
    sched_e = CASES["CosineAnnealingWarmRestarts-mult"](optim.lr_scheduler, opt_e)
    sched_t = CASES["CosineAnnealingWarmRestarts-mult"](torch.optim.lr_scheduler, opt_t)
    for epoch in (0.5, 2.25, 3.0, 7.75, 20.5, 1.0):
        sched_e.step(epoch)
        sched_t.step(epoch)
        _assert_same(sched_e.get_last_lr(), sched_t.get_last_lr())
        assert sched_e.T_i == sched_t.T_i and sched_e.last_epoch == sched_t.last_epoch


PLATEAU = [
    dict(),
    dict(mode="max", factor=0.5, patience=2, threshold=0.05, cooldown=2),
    dict(threshold_mode="abs", threshold=0.1, patience=1, min_lr=[0.02, 0.001]),
    dict(mode="max", threshold_mode="abs", patience=0, factor=0.3, min_lr=0.004, eps=1e-3),
]


@pytest.mark.parametrize("options", PLATEAU, ids=lambda o: "-".join(map(str, o.values())))
def test_reduce_lr_on_plateau_matches_torch(options: dict[str, Any]) -> None:
    opt_e, opt_t = _optimizers()
    sched_e = optim.lr_scheduler.ReduceLROnPlateau(opt_e, **options)
    sched_t = torch.optim.lr_scheduler.ReduceLROnPlateau(opt_t, **options)
    metrics = [1.0, 0.9, 0.95, 0.95, 0.89, 0.9, 0.91, 1.2, 0.5, 0.5, 0.5, 0.5] * 4
    for i, metric in enumerate(metrics):
        sched_e.step(metric)
        sched_t.step(metric)
        _assert_same(sched_e.get_last_lr(), sched_t.get_last_lr())
        assert sched_e.num_bad_epochs == sched_t.num_bad_epochs
        assert sched_e.in_cooldown == sched_t.in_cooldown
        if i == 20:
            state = sched_e.state_dict()
            sched_e = optim.lr_scheduler.ReduceLROnPlateau(opt_e, **options)
            sched_e.load_state_dict(state)


def test_cyclic_lr_cycles_adam_beta1() -> None:
    params_e = [ember.zeros(2, requires_grad=True)]
    params_t = [torch.zeros(2, requires_grad=True)]
    opt_e, opt_t = optim.Adam(params_e, lr=0.1), torch.optim.Adam(params_t, lr=0.1)
    sched_e = optim.lr_scheduler.CyclicLR(opt_e, 0.001, 0.01, step_size_up=3)
    sched_t = torch.optim.lr_scheduler.CyclicLR(opt_t, 0.001, 0.01, step_size_up=3)
    for _ in range(12):
        opt_e.step()
        opt_t.step()
        sched_e.step()
        sched_t.step()
        assert opt_e.param_groups[0]["betas"] == pytest.approx(opt_t.param_groups[0]["betas"])
        _assert_same(sched_e.get_last_lr(), sched_t.get_last_lr())


def test_errors_match_torch() -> None:
    opt_e, opt_t = _optimizers()
    for lib, opt in ((optim, opt_e), (torch.optim, opt_t)):
        m = lib.lr_scheduler
        with pytest.raises(ValueError, match="between 0 and 1"):
            m.ConstantLR(opt, factor=1.5)
        with pytest.raises(ValueError, match="greater than 0"):
            m.LinearLR(opt, start_factor=0.0)
        with pytest.raises(ValueError, match="positive integer T_0"):
            m.CosineAnnealingWarmRestarts(opt, T_0=0)
        with pytest.raises(ValueError, match=r"Factor should be < 1\.0"):
            m.ReduceLROnPlateau(opt, factor=1.0)
        with pytest.raises(ValueError, match="one more than the number of milestone"):
            m.SequentialLR(opt, [m.ExponentialLR(opt, 0.9)], milestones=[3])
        with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
            m.ChainedScheduler([m.ReduceLROnPlateau(opt)])
        with pytest.raises(ValueError, match="mode is invalid"):
            m.CyclicLR(opt, 0.1, 1.0, mode="sine")  # type: ignore[arg-type]
    rms = optim.Adagrad([ember.zeros(1, requires_grad=True)])
    with pytest.raises(ValueError, match="momentum or beta1"):
        optim.lr_scheduler.CyclicLR(rms, 0.1, 1.0)
