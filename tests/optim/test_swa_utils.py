"""optim.swa_utils beside torch's: AveragedModel (SWA, EMA, multi-tensor forms, buffers),
update_bn and SWALR's learning-rate sequence."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from ember import nn, optim
from ember.optim import swa_utils

torch = pytest.importorskip("torch")


def _pair() -> tuple[Any, Any]:
    ours = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2)).double()
    theirs = torch.nn.Sequential(
        torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2)
    ).double()
    _copy_into(ours, theirs)
    return ours, theirs


def _copy_into(ours: Any, theirs: Any) -> None:
    for e, t in zip(ours.state_dict().values(), theirs.state_dict().values(), strict=True):
        if e.is_floating_point():
            e.copy_(ember.tensor(t.numpy()))


def _assert_same_state(ours: Any, theirs: Any) -> None:
    for (name, e), t in zip(ours.state_dict().items(), theirs.state_dict().values(), strict=True):
        np.testing.assert_allclose(np.asarray(e), t.numpy(), rtol=1e-12, atol=1e-12, err_msg=name)


def _perturb(rng: np.random.Generator, ours: Any, theirs: Any) -> None:
    for e, t in zip(ours.parameters(), theirs.parameters(), strict=True):
        step = rng.standard_normal(tuple(t.shape))
        with torch.no_grad():
            t.add_(torch.tensor(step))
        with ember.no_grad():
            e.add_(ember.tensor(step))
    x = rng.standard_normal((5, 3))
    ours.train()
    theirs.train()
    ours(ember.tensor(x))
    theirs(torch.tensor(x))  # moves the batch-norm running statistics


AVERAGING = {
    "swa": lambda m: {},
    "ema": lambda m: {"avg_fn": m.get_ema_avg_fn(0.9)},
    "ema-multi": lambda m: {"multi_avg_fn": m.get_ema_multi_avg_fn(0.8)},
    "swa-multi": lambda m: {"multi_avg_fn": m.get_swa_multi_avg_fn()},
    "swa-buffers": lambda m: {"use_buffers": True},
    "ema-buffers": lambda m: {"avg_fn": m.get_ema_avg_fn(0.7), "use_buffers": True},
}


@pytest.mark.parametrize("kind", list(AVERAGING))
def test_averaged_model_matches_torch(kind: str) -> None:
    rng = np.random.default_rng(0)
    ours, theirs = _pair()
    avg_e = swa_utils.AveragedModel(ours, **AVERAGING[kind](swa_utils))
    avg_t = torch.optim.swa_utils.AveragedModel(theirs, **AVERAGING[kind](torch.optim.swa_utils))
    for _ in range(5):
        _perturb(rng, ours, theirs)
        avg_e.update_parameters(ours)
        avg_t.update_parameters(theirs)
        _assert_same_state(avg_e, avg_t)
    assert int(avg_e.n_averaged.item()) == 5
    x = rng.standard_normal((2, 3))
    avg_e.eval()
    avg_t.eval()
    np.testing.assert_allclose(
        np.asarray(avg_e(ember.tensor(x)).detach()), avg_t(torch.tensor(x)).detach().numpy(),
        rtol=1e-12,
    )  # fmt: skip


def test_update_bn_matches_torch() -> None:
    rng = np.random.default_rng(1)
    ours, theirs = _pair()
    batches = [rng.standard_normal((6, 3)) for _ in range(4)]
    ours.eval()
    theirs.eval()
    swa_utils.update_bn([(ember.tensor(b), 0) for b in batches], ours)
    torch.optim.swa_utils.update_bn([(torch.tensor(b), 0) for b in batches], theirs)
    _assert_same_state(ours, theirs)
    assert not ours.training and ours[1].momentum == theirs[1].momentum


def test_averaging_functions_reject_bad_decay() -> None:
    for lib in (swa_utils, torch.optim.swa_utils):
        with pytest.raises(ValueError, match="Invalid decay value"):
            lib.get_ema_avg_fn(1.5)
        with pytest.raises(ValueError, match="Invalid decay value"):
            lib.get_ema_multi_avg_fn(-0.1)


@pytest.mark.parametrize(
    "options",
    [
        dict(swa_lr=0.05),
        dict(swa_lr=[0.01, 0.2], anneal_epochs=4, anneal_strategy="linear"),
        dict(swa_lr=0.02, anneal_epochs=0),
    ],
)
def test_swalr_matches_torch(options: dict[str, Any]) -> None:
    groups = [dict(lr=0.1), dict(lr=0.5)]
    opt_e = optim.SGD([{**g, "params": [ember.zeros(1, requires_grad=True)]} for g in groups])
    opt_t = torch.optim.SGD([{**g, "params": [torch.zeros(1, requires_grad=True)]} for g in groups])
    sched_e = swa_utils.SWALR(opt_e, **options)
    sched_t = torch.optim.swa_utils.SWALR(opt_t, **options)
    for step in range(30):
        opt_e.step()
        opt_t.step()
        sched_e.step()
        sched_t.step()
        np.testing.assert_allclose(sched_e.get_last_lr(), sched_t.get_last_lr(), rtol=1e-14)
        if step == 2:
            state = sched_e.state_dict()
            assert set(state) == set(sched_t.state_dict())
            sched_e.load_state_dict(state)
    with pytest.raises(ValueError, match="anneal_strategy must be one of"):
        swa_utils.SWALR(opt_e, 0.1, anneal_strategy="step")  # type: ignore[arg-type]
