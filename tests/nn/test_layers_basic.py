"""Layers against PyTorch with the same weights: outputs, gradients, reprs and state_dict keys;
PyTorch's default initialisations; Dropout and Embedding behaviour."""

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

# name -> (builder taking the nn namespace, input shape)
LAYERS: dict[str, tuple[Callable[[Any], Any], tuple[int, ...]]] = {
    "Linear": (lambda m: m.Linear(5, 3), (4, 5)),
    "Linear-nobias-3d": (lambda m: m.Linear(5, 3, bias=False), (2, 4, 5)),
    "ReLU": (lambda m: m.ReLU(), (3, 4)),
    "ReLU6": (lambda m: m.ReLU6(), (3, 4)),
    "Hardtanh": (lambda m: m.Hardtanh(-0.5, 2.0), (3, 4)),
    "LeakyReLU": (lambda m: m.LeakyReLU(0.2), (3, 4)),
    "ELU": (lambda m: m.ELU(0.7), (3, 4)),
    "GELU": (lambda m: m.GELU(), (3, 4)),
    "GELU-tanh": (lambda m: m.GELU(approximate="tanh"), (3, 4)),
    "SiLU": (lambda m: m.SiLU(), (3, 4)),
    "Sigmoid": (lambda m: m.Sigmoid(), (3, 4)),
    "Tanh": (lambda m: m.Tanh(), (3, 4)),
    "Softplus": (lambda m: m.Softplus(beta=2.0, threshold=3.0), (3, 4)),
    "LogSigmoid": (lambda m: m.LogSigmoid(), (3, 4)),
    "Softmax": (lambda m: m.Softmax(dim=1), (3, 4)),
    "Softmin": (lambda m: m.Softmin(dim=0), (3, 4)),
    "LogSoftmax": (lambda m: m.LogSoftmax(dim=-1), (3, 4)),
    "Flatten": (lambda m: m.Flatten(), (2, 3, 4)),
    "Flatten-0-1": (lambda m: m.Flatten(0, 1), (2, 3, 4)),
    "Unflatten": (lambda m: m.Unflatten(1, (2, 2)), (3, 4)),
    "Identity": (lambda m: m.Identity(54, unused=True), (3, 4)),
    "LayerNorm": (lambda m: m.LayerNorm(4), (3, 4)),
    "LayerNorm-2d-nobias": (lambda m: m.LayerNorm([3, 4], bias=False), (2, 3, 4)),
    "LayerNorm-noaffine": (lambda m: m.LayerNorm(4, elementwise_affine=False), (3, 4)),
    "GroupNorm": (lambda m: m.GroupNorm(2, 4), (3, 4, 5)),
    "GroupNorm-noaffine": (lambda m: m.GroupNorm(4, 4, affine=False), (3, 4, 2, 2)),
    "BatchNorm1d": (lambda m: m.BatchNorm1d(4), (6, 4)),
    "BatchNorm1d-3d": (lambda m: m.BatchNorm1d(4, momentum=None), (6, 4, 3)),
    "BatchNorm2d": (lambda m: m.BatchNorm2d(3, affine=False), (2, 3, 4, 4)),
    "Dropout": (lambda m: m.Dropout(0.3), (3, 4)),
    "Sequential": (lambda m: m.Sequential(m.Linear(4, 6), m.ReLU(), m.Linear(6, 2)), (5, 4)),
    # In-place activations on a non-leaf: the graph continues through the written tensor.
    "inplace": (
        lambda m: m.Sequential(
            m.Linear(4, 6),
            m.ReLU(inplace=True),
            m.Linear(6, 6),
            m.LeakyReLU(0.1, inplace=True),
            m.Linear(6, 6),
            m.Hardtanh(inplace=True),
            m.Linear(6, 6),
            m.SiLU(inplace=True),
            m.Linear(6, 6),
            m.ELU(inplace=True),
            m.Dropout(0.5, inplace=True),
        ),
        (5, 4),
    ),
}


def _randomize(module: Any) -> None:
    """Non-default parameters, so that affine terms are exercised."""
    for parameter in module.parameters():
        with ember.no_grad():
            parameter.uniform_(-1.0, 1.0)


# Training-mode dropout draws different masks than torch; the dropout tests cover it.
_CASES = [
    (name, training)
    for name in sorted(LAYERS)
    for training in (True, False)
    if not (training and name in ("Dropout", "inplace"))
]


@pytest.mark.parametrize(("name", "training"), _CASES)
def test_layer_matches_torch(device: str, name: str, training: bool, rng: Any) -> None:
    build, shape = LAYERS[name]
    ours, theirs = build(nn).to(device), build(torch.nn)
    _randomize(ours)
    copy_into_torch(ours, theirs)
    ours.train(training)
    theirs.train(training)
    x, tx = pair(rng.standard_normal(shape), device, grad=True)
    out, expected = ours(x), theirs(tx)
    assert_same_outputs(out, expected)
    g = rng.standard_normal(tuple(expected.shape))
    out.backward(ember.tensor(g.astype(np.float32), device=device))
    expected.backward(torch.tensor(g.astype(np.float32)))
    assert_same_outputs(x.grad, tx.grad, atol=1e-4)
    assert_same_gradients(ours, theirs, atol=1e-4)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert_same_outputs(
        tuple(ours.state_dict().values()), tuple(theirs.state_dict().values()), atol=1e-5
    )


def test_bilinear_matches_torch(device: str, rng: Any) -> None:
    ours, theirs = nn.Bilinear(3, 2, 4).to(device), torch.nn.Bilinear(3, 2, 4)
    copy_into_torch(ours, theirs)
    (a, ta), (b, tb) = (
        pair(rng.standard_normal((5, 3)), device),
        pair(rng.standard_normal((5, 2)), device),
    )
    assert_same_outputs(ours(a, b), theirs(ta, tb))
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("make", [lambda m: m.Linear(50, 30), lambda m: m.Bilinear(20, 5, 30)])
def test_linear_default_init_bounds(device: str, make: Any) -> None:
    """Weight and bias uniform in ±1/sqrt(fan_in): kaiming_uniform_(a=sqrt(5)) as PyTorch."""
    layer = make(nn).to(device)
    fan_in = layer.weight.shape[1]
    bound = 1 / math.sqrt(fan_in)
    weight, bias = layer.weight.numpy(force=True), layer.bias.numpy(force=True)
    assert np.abs(weight).max() <= bound
    assert np.abs(weight).max() > 0.95 * bound  # spread over the whole range
    assert np.abs(bias).max() <= bound
    assert layer.weight.requires_grad and layer.bias.requires_grad


def test_default_init_follows_the_ember_seed(device: str) -> None:
    ember.manual_seed(3)
    first = nn.Linear(4, 4).weight.numpy(force=True).copy()
    ember.manual_seed(3)
    np.testing.assert_array_equal(nn.Linear(4, 4).weight.numpy(force=True), first)


def test_norm_default_init(device: str) -> None:
    for layer in (nn.LayerNorm(3), nn.GroupNorm(1, 3), nn.BatchNorm1d(3)):
        np.testing.assert_array_equal(layer.weight.numpy(force=True), np.ones(3))
        np.testing.assert_array_equal(layer.bias.numpy(force=True), np.zeros(3))


def test_embedding_matches_torch(device: str, rng: Any) -> None:
    ours = nn.Embedding(7, 3, padding_idx=2).to(device)
    theirs = torch.nn.Embedding(7, 3, padding_idx=2)
    copy_into_torch(ours, theirs)
    index = rng.integers(0, 7, (4, 5))
    out = ours(ember.tensor(index, device=device))
    expected = theirs(torch.tensor(index))
    assert_same_outputs(out, expected)
    g = rng.standard_normal((4, 5, 3)).astype(np.float32)
    out.backward(ember.tensor(g, device=device))
    expected.backward(torch.tensor(g))
    assert_same_gradients(ours, theirs)
    assert repr(ours) == repr(theirs)


def test_embedding_init_and_from_pretrained(device: str) -> None:
    layer = nn.Embedding(1000, 8, padding_idx=-1)
    assert layer.padding_idx == 999
    weight = layer.weight.numpy(force=True)
    np.testing.assert_array_equal(weight[999], np.zeros(8))
    assert abs(weight[:999].mean()) < 0.05 and abs(weight[:999].std() - 1) < 0.05
    pretrained = nn.Embedding.from_pretrained(ember.ones(3, 2))
    assert not pretrained.weight.requires_grad and pretrained.weight.shape == (3, 2)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)


def test_dropout_module_train_and_eval(device: str) -> None:
    layer = nn.Dropout(0.5)
    x = ember.ones(1000, device=device)
    out = layer(x).numpy(force=True)
    assert 0.4 < (out == 0).mean() < 0.6
    layer.eval()
    assert layer(x) is x
    assert repr(layer) == "Dropout(p=0.5, inplace=False)"
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        nn.Dropout(-0.1)


def test_softmax_module_without_dim_warns(device: str) -> None:
    with pytest.warns(UserWarning, match="Implicit dimension choice"):
        nn.Softmax()(ember.zeros(2, 3, device=device))
