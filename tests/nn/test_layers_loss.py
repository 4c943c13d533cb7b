"""Loss modules against PyTorch's: values, input gradients, weight buffers in the state_dict."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember import nn

from ._torch_parity import assert_same_outputs, pair

torch = pytest.importorskip("torch")

WEIGHT = np.array([0.5, 2.0, 1.0, 1.5], dtype=np.float32)


def _classes(rng: Any) -> tuple[np.ndarray, np.ndarray]:
    target = rng.integers(0, 4, (6,))
    target[0] = 2
    return rng.standard_normal((6, 4)), target


# name -> (builder(nn, weight converter), data(rng) -> (input, target), integer target?)
LOSSES: dict[str, tuple[Callable[[Any, Any], Any], Callable[[Any], Any], bool]] = {
    "CrossEntropyLoss": (lambda m, w: m.CrossEntropyLoss(), _classes, True),
    "CrossEntropyLoss-all": (
        lambda m, w: m.CrossEntropyLoss(
            weight=w(WEIGHT), ignore_index=2, reduction="sum", label_smoothing=0.2
        ),
        _classes,
        True,
    ),
    "CrossEntropyLoss-none": (
        lambda m, w: m.CrossEntropyLoss(reduction="none", label_smoothing=0.1),
        _classes,
        True,
    ),
    "CrossEntropyLoss-probabilities": (
        lambda m, w: m.CrossEntropyLoss(weight=w(WEIGHT), label_smoothing=0.3),
        lambda rng: (rng.standard_normal((5, 4)), rng.dirichlet(np.ones(4), 5)),
        False,
    ),
    "NLLLoss": (lambda m, w: m.NLLLoss(weight=w(WEIGHT), ignore_index=1), _classes, True),
    "MSELoss": (lambda m, w: m.MSELoss(), lambda rng: rng.standard_normal((2, 3, 4)), False),
    "L1Loss": (
        lambda m, w: m.L1Loss(reduction="sum"),
        lambda rng: rng.standard_normal((2, 5)),
        False,
    ),
    "HuberLoss": (
        lambda m, w: m.HuberLoss(delta=0.5),
        lambda rng: rng.standard_normal((2, 6)),
        False,
    ),
    "SmoothL1Loss": (
        lambda m, w: m.SmoothL1Loss(beta=0.5, reduction="none"),
        lambda rng: rng.standard_normal((2, 6)),
        False,
    ),
    "BCELoss": (
        lambda m, w: m.BCELoss(weight=w(WEIGHT)),
        lambda rng: (rng.uniform(0.05, 0.95, (2, 3, 4)), rng.uniform(0, 1, (2, 3, 4))),
        False,
    ),
    "BCEWithLogitsLoss": (
        lambda m, w: m.BCEWithLogitsLoss(weight=w(WEIGHT), pos_weight=w(WEIGHT[::-1].copy())),
        lambda rng: (rng.standard_normal((3, 4)) * 3, rng.uniform(0, 1, (3, 4))),
        False,
    ),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_module_matches_torch(device: str, name: str, rng: Any) -> None:
    build, data, integer_target = LOSSES[name]
    ours = build(nn, lambda a: ember.tensor(a, device=device))
    theirs = build(torch.nn, torch.tensor)
    values = data(rng)
    x_array, t_array = (
        values if isinstance(values, tuple) else (values, rng.standard_normal(values.shape))
    )
    x, tx = pair(x_array, device, grad=True)
    if integer_target:
        t, tt = ember.tensor(t_array, device=device), torch.tensor(t_array)
    else:
        t, tt = pair(t_array, device)
    out, expected = ours(x, t), theirs(tx, tt)
    assert_same_outputs(out, expected, atol=1e-5)
    g = rng.standard_normal(tuple(expected.shape)).astype(np.float32)
    out.backward(ember.tensor(g, device=device))
    expected.backward(torch.tensor(g))
    assert_same_outputs(x.grad, tx.grad, atol=1e-5)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)


def test_legacy_flags_set_reduction() -> None:
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        assert nn.MSELoss(size_average=False).reduction == "sum"
    with pytest.warns(UserWarning):
        assert nn.CrossEntropyLoss(reduce=False).reduction == "none"


def test_weight_buffer_follows_the_module() -> None:
    loss = nn.CrossEntropyLoss(weight=ember.tensor([1.0, 2.0]))
    assert list(dict(loss.named_buffers())) == ["weight"]
    assert loss.double().weight.dtype == ember.float64
