"""MultiheadAttention against PyTorch's with the same weights: every option, masks,
gradients, parameter names, initialisation."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import ember
from ember import nn

from ._torch_parity import assert_same_gradients, assert_same_outputs, copy_into_torch, pair

torch = pytest.importorskip("torch")

CONFIGS = {
    "default": {},
    "batch-first": {"batch_first": True},
    "kdim-vdim": {"kdim": 5, "vdim": 3},
    "no-bias": {"bias": False},
    "bias-kv": {"add_bias_kv": True},
    "zero-attn": {"add_zero_attn": True, "batch_first": True},
}
# Every call option on the default layer; on the others, the two paths (with and without
# weights), each with both masks.
CASES = [
    ("default", *call)
    for call in itertools.product([True, False], [True, False], ["none", "padding", "attn", "both"])
] + [
    (config, need, True, "both")
    for config in CONFIGS
    if config != "default"
    for need in (True, False)
]


def _inputs(config: dict[str, Any], rng: Any, batched: bool = True) -> list[np.ndarray]:
    length, source, batch, embed = 3, 4, 2, 6
    shapes = [
        (length, embed),
        (source, config.get("kdim", embed)),
        (source, config.get("vdim", embed)),
    ]
    if not batched:
        return [rng.standard_normal(s) for s in shapes]
    if config.get("batch_first"):
        return [rng.standard_normal((batch, *s)) for s in shapes]
    return [rng.standard_normal((s[0], batch, s[1])) for s in shapes]


@pytest.mark.parametrize(("config", "need_weights", "average", "masks"), CASES)
def test_multihead_attention_matches_torch(
    device: str, config: str, need_weights: bool, average: bool, masks: str, rng: Any
) -> None:
    options = CONFIGS[config]
    ours = nn.MultiheadAttention(6, 2, **options).to(device)
    theirs = torch.nn.MultiheadAttention(6, 2, **options)
    copy_into_torch(ours, theirs)
    ours.eval()
    theirs.eval()
    (q, tq), (k, tk), (v, tv) = (pair(a, device, grad=True) for a in _inputs(options, rng))
    padding = rng.random((2, 4)) > 0.6
    padding[:, 0] = False
    attn = rng.random((3, 4)) > 0.6
    attn[:, 0] = False
    kwargs: dict[str, Any] = {"need_weights": need_weights, "average_attn_weights": average}
    torch_kwargs = dict(kwargs)
    if masks in ("padding", "both"):
        kwargs["key_padding_mask"] = ember.tensor(padding, device=device)
        torch_kwargs["key_padding_mask"] = torch.tensor(padding)
    if masks in ("attn", "both"):
        kwargs["attn_mask"] = ember.tensor(attn, device=device)
        torch_kwargs["attn_mask"] = torch.tensor(attn)
    out, weights = ours(q, k, v, **kwargs)
    expected, expected_weights = theirs(tq, tk, tv, **torch_kwargs)
    assert_same_outputs(out, expected, atol=1e-5)
    assert_same_outputs(weights, expected_weights, atol=1e-5)
    g = rng.standard_normal(tuple(expected.shape)).astype(np.float32)
    out.backward(ember.tensor(g, device=device))
    expected.backward(torch.tensor(g))
    for ours_input, torch_input in ((q, tq), (k, tk), (v, tv)):
        assert_same_outputs(ours_input.grad, torch_input.grad, atol=1e-4)
    assert_same_gradients(ours, theirs, atol=1e-4)


def test_self_attention_unbatched_and_causal(device: str, rng: Any) -> None:
    ours, theirs = nn.MultiheadAttention(4, 2).to(device), torch.nn.MultiheadAttention(4, 2)
    copy_into_torch(ours, theirs)
    x, tx = pair(rng.standard_normal((5, 4)), device)
    causal = np.triu(np.ones((5, 5), dtype=bool), 1)
    out = ours(x, x, x, attn_mask=ember.tensor(causal, device=device), is_causal=True)
    expected = theirs(tx, tx, tx, attn_mask=torch.tensor(causal), is_causal=True)
    assert_same_outputs(out, expected, atol=1e-5)
    out = ours(
        x, x, x, attn_mask=ember.tensor(causal, device=device), need_weights=False, is_causal=True
    )
    expected = theirs(
        tx, tx, tx, attn_mask=torch.tensor(causal), need_weights=False, is_causal=True
    )
    assert_same_outputs(out, expected, atol=1e-5)


def test_parameters_and_init_follow_torch(device: str) -> None:
    ours, theirs = (
        nn.MultiheadAttention(8, 2, add_bias_kv=True),
        torch.nn.MultiheadAttention(8, 2, add_bias_kv=True),
    )
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert repr(ours) == repr(theirs)
    bound = np.sqrt(6 / (24 + 8))  # xavier_uniform_ of the (3E, E) in_proj_weight
    weight = ours.in_proj_weight.numpy(force=True)
    assert np.abs(weight).max() <= bound and np.abs(weight).max() > 0.8 * bound
    np.testing.assert_array_equal(ours.in_proj_bias.numpy(force=True), np.zeros(24))
    np.testing.assert_array_equal(ours.out_proj.bias.numpy(force=True), np.zeros(8))
    separate = nn.MultiheadAttention(8, 2, kdim=3, vdim=5)
    assert separate.in_proj_weight is None and separate.k_proj_weight.shape == (8, 3)
    torch_separate = torch.nn.MultiheadAttention(8, 2, kdim=3, vdim=5)
    assert list(separate.state_dict()) == list(torch_separate.state_dict())


def test_dropout_only_in_training(device: str, rng: Any) -> None:
    layer = nn.MultiheadAttention(4, 1, dropout=0.9).to(device)
    x = ember.tensor(rng.standard_normal((6, 1, 4)).astype(np.float32), device=device)
    layer.eval()
    first, _ = layer(x, x, x)
    second, _ = layer(x, x, x)
    np.testing.assert_array_equal(first.numpy(force=True), second.numpy(force=True))
    layer.train()
    ember.manual_seed(1)
    dropped, _ = layer(x, x, x)
    assert not np.allclose(dropped.numpy(force=True), first.numpy(force=True))


def test_constructor_errors() -> None:
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(6, 4)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        nn.MultiheadAttention(0, 1)
