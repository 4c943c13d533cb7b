"""Conv1d, Conv2d, ConvTranspose2d and the pooling layers against PyTorch with the same
weights: outputs, gradients, reprs, default initialisation, constructor errors."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember import nn

from ._torch_parity import assert_same_gradients, assert_same_outputs, copy_into_torch, pair

torch = pytest.importorskip("torch")

LAYERS: dict[str, tuple[Callable[[Any], Any], tuple[int, ...]]] = {
    "Conv1d": (lambda m: m.Conv1d(3, 4, 3), (2, 3, 9)),
    "Conv1d-same-dilated": (lambda m: m.Conv1d(2, 4, 4, padding="same", dilation=2), (2, 2, 9)),
    "Conv1d-reflect": (lambda m: m.Conv1d(2, 2, 3, padding=2, padding_mode="reflect"), (1, 2, 7)),
    "Conv2d": (lambda m: m.Conv2d(3, 4, 3), (2, 3, 7, 6)),
    "Conv2d-stride-pad": (lambda m: m.Conv2d(3, 2, (3, 2), stride=2, padding=(1, 2)), (2, 3, 7, 6)),
    "Conv2d-groups-nobias": (lambda m: m.Conv2d(4, 6, 3, groups=2, bias=False), (1, 4, 5, 5)),
    "Conv2d-same": (lambda m: m.Conv2d(2, 3, 4, padding="same"), (2, 2, 6, 5)),
    "Conv2d-valid": (lambda m: m.Conv2d(2, 3, 2, padding="valid"), (2, 2, 4, 4)),
    "Conv2d-circular": (
        lambda m: m.Conv2d(2, 2, 3, padding=1, padding_mode="circular"),
        (1, 2, 5, 5),
    ),
    "Conv2d-replicate-same": (
        lambda m: m.Conv2d(2, 2, 2, padding="same", padding_mode="replicate"),
        (1, 2, 5, 4),
    ),
    "Conv2d-unbatched": (lambda m: m.Conv2d(2, 3, 3), (2, 5, 5)),
    "ConvTranspose2d": (lambda m: m.ConvTranspose2d(3, 2, 3), (2, 3, 4, 5)),
    "ConvTranspose2d-strided": (
        lambda m: m.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1, groups=2),
        (2, 4, 3, 3),
    ),
    "MaxPool2d": (lambda m: m.MaxPool2d(2), (2, 3, 6, 6)),
    "MaxPool2d-strided": (
        lambda m: m.MaxPool2d(3, stride=2, padding=1, ceil_mode=True),
        (1, 2, 7, 6),
    ),
    "AvgPool2d": (lambda m: m.AvgPool2d(2), (2, 3, 6, 6)),
    "AvgPool2d-padded": (lambda m: m.AvgPool2d(3, 2, 1, count_include_pad=False), (1, 2, 7, 6)),
    "AdaptiveAvgPool2d": (lambda m: m.AdaptiveAvgPool2d((2, 3)), (2, 3, 7, 8)),
    "AdaptiveAvgPool2d-1": (lambda m: m.AdaptiveAvgPool2d(1), (2, 3, 5, 5)),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")
def test_layer_matches_torch(device: str, name: str, rng: Any) -> None:
    build, shape = LAYERS[name]
    ours, theirs = build(nn).to(device), build(torch.nn)
    copy_into_torch(ours, theirs)
    x, tx = pair(rng.standard_normal(shape), device, grad=True)
    out, expected = ours(x), theirs(tx)
    assert_same_outputs(out, expected, atol=1e-5)
    g = rng.standard_normal(tuple(expected.shape)).astype(np.float32)
    out.backward(ember.tensor(g, device=device))
    expected.backward(torch.tensor(g))
    assert_same_outputs(x.grad, tx.grad, atol=1e-4)
    assert_same_gradients(ours, theirs, atol=1e-4)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_conv_transpose_output_size(device: str, rng: Any) -> None:
    ours, theirs = (
        nn.ConvTranspose2d(2, 3, 3, stride=2).to(device),
        torch.nn.ConvTranspose2d(2, 3, 3, stride=2),
    )
    copy_into_torch(ours, theirs)
    x, tx = pair(rng.standard_normal((1, 2, 4, 4)), device)
    assert_same_outputs(ours(x, output_size=[10, 9]), theirs(tx, output_size=[10, 9]))
    with pytest.raises(ValueError, match="requested an output size of"):
        ours(x, output_size=[12, 12])


def test_max_pool_return_indices(device: str, rng: Any) -> None:
    x, tx = pair(rng.standard_normal((1, 2, 4, 4)), device)
    out, index = nn.MaxPool2d(2, return_indices=True)(x)
    expected, expected_index = torch.nn.MaxPool2d(2, return_indices=True)(tx)
    assert_same_outputs(out, expected)
    np.testing.assert_array_equal(index.numpy(force=True), expected_index.numpy(force=True))


@pytest.mark.parametrize(
    "make", [lambda m: m.Conv2d(6, 8, (3, 2), groups=2), lambda m: m.ConvTranspose2d(4, 6, 3)]
)
def test_conv_default_init_bounds(device: str, make: Any) -> None:
    layer = make(nn)
    fan_in = math.prod(layer.weight.shape[1:])
    bound = 1 / math.sqrt(fan_in)
    weight, bias = layer.weight.numpy(force=True), layer.bias.numpy(force=True)
    assert np.abs(weight).max() <= bound and np.abs(weight).max() > 0.9 * bound
    assert np.abs(bias).max() <= bound


def test_conv_constructor_errors() -> None:
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="out_channels must be divisible by groups"):
        nn.Conv2d(4, 3, 3, groups=2)
    with pytest.raises(ValueError, match="groups must be a positive integer"):
        nn.Conv2d(4, 4, 3, groups=0)
    with pytest.raises(ValueError, match="Invalid padding string 'full'"):
        nn.Conv2d(1, 1, 3, padding="full")
    with pytest.raises(ValueError, match="padding='same' is not supported for strided"):
        nn.Conv2d(1, 1, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv1d(1, 1, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported'):
        nn.ConvTranspose2d(1, 1, 3, padding_mode="reflect")


def test_small_cnn_trains(device: str, rng: Any) -> None:
    """Conv, pool, flatten, linear, cross-entropy end to end: the loss goes down with SGD."""
    ember.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64, 3)
    ).to(device)
    x = ember.tensor(rng.standard_normal((12, 1, 8, 8)).astype(np.float32), device=device)
    y = ember.tensor(rng.integers(0, 3, 12), device=device)
    losses = []
    for _ in range(30):
        loss = nn.functional.cross_entropy(model(x), y)
        model.zero_grad()
        loss.backward()
        with ember.no_grad():
            for parameter in model.parameters():
                parameter.sub_(parameter.grad * 0.1)
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
