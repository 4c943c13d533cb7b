"""BatchNorm running statistics against PyTorch over several steps (momentum, cumulative
average, train/eval, affine, track_running_stats), state_dict compatibility, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from ember import nn

from ._torch_parity import assert_same_gradients, assert_same_outputs, copy_into_torch, pair

torch = pytest.importorskip("torch")

CONFIGS = {
    "default": {},
    "momentum": {"momentum": 0.3},
    "cumulative": {"momentum": None},
    "no-affine": {"affine": False},
    "no-bias": {"bias": False},
    "untracked": {"track_running_stats": False},
    "eps": {"eps": 1e-2},
}


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("kind,shape", [("BatchNorm1d", (8, 3)), ("BatchNorm2d", (4, 3, 5, 5))])
def test_batch_norm_steps_match_torch(
    device: str, config: str, kind: str, shape: tuple[int, ...], rng: Any
) -> None:
    ours = getattr(nn, kind)(3, **CONFIGS[config]).to(device)
    theirs = getattr(torch.nn, kind)(3, **CONFIGS[config])
    if ours.weight is not None:
        with ember.no_grad():
            ours.weight.uniform_(0.5, 1.5)
    copy_into_torch(ours, theirs)
    for step in range(4):
        x, tx = pair(rng.standard_normal(shape) * (step + 1) + step, device, grad=True)
        out, expected = ours(x), theirs(tx)
        assert_same_outputs(out, expected, atol=1e-5)
        g = rng.standard_normal(shape).astype(np.float32)
        out.backward(ember.tensor(g, device=device))
        expected.backward(torch.tensor(g))
        assert_same_outputs(x.grad, tx.grad, atol=1e-4)
        assert_same_gradients(ours, theirs, atol=1e-4)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        for name, value in theirs.state_dict().items():
            np.testing.assert_allclose(
                ours.state_dict()[name].numpy(force=True),
                value.numpy(force=True),
                rtol=1e-5,
                atol=1e-6,
                err_msg=name,
            )
    ours.eval()
    theirs.eval()
    x, tx = pair(rng.standard_normal(shape), device)
    assert_same_outputs(ours(x), theirs(tx), atol=1e-5)
    assert repr(ours) == repr(theirs)


def test_batch_norm_buffers_and_counter(device: str, rng: Any) -> None:
    layer = nn.BatchNorm1d(2).to(device)
    assert [name for name, _ in layer.named_buffers()] == [
        "running_mean", "running_var", "num_batches_tracked",
    ]  # fmt: skip
    assert layer.num_batches_tracked.dtype == ember.int64
    x = ember.tensor(rng.standard_normal((5, 2)).astype(np.float32), device=device)
    layer(x)
    layer(x)
    assert layer.num_batches_tracked.item() == 2
    layer.eval()
    layer(x)
    assert layer.num_batches_tracked.item() == 2  # eval does not count
    layer.reset_running_stats()
    np.testing.assert_array_equal(layer.running_mean.numpy(force=True), [0, 0])
    np.testing.assert_array_equal(layer.running_var.numpy(force=True), [1, 1])
    assert layer.num_batches_tracked.item() == 0


def test_batch_norm_untracked_has_no_buffers_and_uses_batch_stats_in_eval(device: str) -> None:
    layer = nn.BatchNorm1d(2, track_running_stats=False).to(device).eval()
    assert dict(layer.named_buffers()) == {}
    assert layer.running_mean is None
    x = ember.tensor([[1.0, 2.0], [3.0, 6.0]], device=device)
    np.testing.assert_allclose(layer(x).numpy(force=True), [[-1, -1], [1, 1]], atol=1e-3)


def test_batch_norm_loads_a_version_1_state_dict(device: str) -> None:
    """Checkpoints from before num_batches_tracked (PyTorch's version 1) still load."""
    source = nn.BatchNorm1d(2)
    state = source.state_dict()
    del state["num_batches_tracked"]
    state._metadata[""]["version"] = 1  # type: ignore[attr-defined]
    target = nn.BatchNorm1d(2)
    target.load_state_dict(state)
    assert target.num_batches_tracked.item() == 0


def test_batch_norm_input_checks(device: str) -> None:
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(3)(ember.zeros(2, 3, 4, 4, device=device))
    with pytest.raises(ValueError, match=r"expected 4D input \(got 2D input\)"):
        nn.BatchNorm2d(3)(ember.zeros(2, 3, device=device))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        nn.BatchNorm1d(3)(ember.zeros(1, 3, device=device))


def test_group_norm_module_errors() -> None:
    with pytest.raises(ValueError, match=r"num_channels \(6\) must be divisible by num_groups"):
        nn.GroupNorm(4, 6)
