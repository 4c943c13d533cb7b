"""Transformer layers against PyTorch's with the same weights: every option, masks,
outputs and gradients, submodule names, initialisation, the causal mask."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from ember import nn
from ember.nn import functional as F

from ._torch_parity import assert_same_gradients, assert_same_outputs, copy_into_torch, pair

torch = pytest.importorskip("torch")

D_MODEL, HEADS, FF = 8, 2, 16
CONFIGS = {
    "post-norm": {},
    "pre-norm-gelu-batch-first": {"norm_first": True, "activation": "gelu", "batch_first": True},
    "no-bias-eps": {"bias": False, "layer_norm_eps": 1e-3},
}


def _both(kind: str, options: dict[str, Any], **extra: Any) -> tuple[Any, Any]:
    ours = getattr(nn, kind)(D_MODEL, HEADS, FF, dropout=0.0, **options, **extra)
    theirs = getattr(torch.nn, kind)(D_MODEL, HEADS, FF, dropout=0.0, **options, **extra)
    return ours, theirs


def _seq(rng: Any, length: int, batch_first: bool, device: str = "cpu") -> tuple[Any, Any]:
    shape = (2, length, D_MODEL) if batch_first else (length, 2, D_MODEL)
    return pair(rng.standard_normal(shape), device, grad=True)


def _masks(rng: Any, rows: int, columns: int, float_mask: bool) -> tuple[Any, Any, Any]:
    """(attn mask ours, attn mask torch, key padding as NumPy), bool or additive float."""
    attn = rng.random((rows, columns)) > 0.7
    attn[:, 0] = False
    padding = rng.random((2, columns)) > 0.7
    padding[:, 0] = False
    if float_mask:
        attn_values = np.where(attn, -np.inf, rng.standard_normal(attn.shape)).astype(np.float32)
        padding_values = np.where(padding, -np.inf, 0.0).astype(np.float32)
        return ember.tensor(attn_values), torch.tensor(attn_values), padding_values
    return ember.tensor(attn), torch.tensor(attn), padding


def _check_backward(out: Any, expected: Any, inputs: list[tuple[Any, Any]], rng: Any,
                    ours: Any, theirs: Any) -> None:  # fmt: skip
    assert_same_outputs(out, expected, atol=1e-5)
    g = rng.standard_normal(tuple(expected.shape)).astype(np.float32)
    out.backward(ember.tensor(g, device=out.device))
    expected.backward(torch.tensor(g))
    for a, b in inputs:
        assert_same_outputs(a.grad, b.grad, atol=1e-4)
    assert_same_gradients(ours, theirs, atol=1e-4)


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("float_mask", [False, True])
def test_encoder_layer_matches_torch(config: str, float_mask: bool, rng: Any) -> None:
    options = CONFIGS[config]
    ours, theirs = _both("TransformerEncoderLayer", options)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    copy_into_torch(ours, theirs)
    x, tx = _seq(rng, 5, bool(options.get("batch_first")))
    mask, tmask, padding = _masks(rng, 5, 5, float_mask)
    out = ours(x, src_mask=mask, src_key_padding_mask=ember.tensor(padding))
    expected = theirs(tx, src_mask=tmask, src_key_padding_mask=torch.tensor(padding))
    _check_backward(out, expected, [(x, tx)], rng, ours, theirs)


@pytest.mark.parametrize("config", CONFIGS)
def test_decoder_layer_matches_torch(config: str, rng: Any) -> None:
    options = CONFIGS[config]
    ours, theirs = _both("TransformerDecoderLayer", options)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    copy_into_torch(ours, theirs)
    batch_first = bool(options.get("batch_first"))
    tgt, ttgt = _seq(rng, 4, batch_first)
    memory, tmemory = _seq(rng, 6, batch_first)
    causal = nn.Transformer.generate_square_subsequent_mask(4)
    tcausal = torch.nn.Transformer.generate_square_subsequent_mask(4)
    memory_mask, tmemory_mask, padding = _masks(rng, 4, 6, False)
    out = ours(tgt, memory, tgt_mask=causal, memory_mask=memory_mask,
               memory_key_padding_mask=ember.tensor(padding), tgt_is_causal=True)  # fmt: skip
    expected = theirs(
        ttgt, tmemory, tgt_mask=tcausal, memory_mask=tmemory_mask,
        memory_key_padding_mask=torch.tensor(padding), tgt_is_causal=True,
    )  # fmt: skip
    _check_backward(out, expected, [(tgt, ttgt), (memory, tmemory)], rng, ours, theirs)


def test_full_transformer_matches_torch(rng: Any) -> None:
    options = {"num_encoder_layers": 2, "num_decoder_layers": 2, "dim_feedforward": FF,
               "dropout": 0.0, "batch_first": True}  # fmt: skip
    ours = nn.Transformer(D_MODEL, HEADS, **options)
    theirs = torch.nn.Transformer(D_MODEL, HEADS, **options)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in theirs.named_parameters()
    ]
    # xavier_uniform_ on every matrix, as torch's _reset_parameters
    weight = ours.encoder.layers[0].linear1.weight.numpy(force=True)
    bound = np.sqrt(6 / (D_MODEL + FF))
    assert np.abs(weight).max() <= bound and np.abs(weight).max() > 0.7 * bound
    copy_into_torch(ours, theirs)
    src, tsrc = _seq(rng, 5, True)
    tgt, ttgt = _seq(rng, 4, True)
    padding = np.array([[False] * 5, [False] * 3 + [True] * 2])
    tgt_mask = ours.generate_square_subsequent_mask(4)
    out = ours(src, tgt, tgt_mask=tgt_mask, src_key_padding_mask=ember.tensor(padding),
               memory_key_padding_mask=ember.tensor(padding))  # fmt: skip
    expected = theirs(tsrc, ttgt, tgt_mask=torch.tensor(tgt_mask.numpy()),
                      src_key_padding_mask=torch.tensor(padding),
                      memory_key_padding_mask=torch.tensor(padding))  # fmt: skip
    _check_backward(out, expected, [(src, tsrc), (tgt, ttgt)], rng, ours, theirs)
    with pytest.raises(RuntimeError, match="batch number"):
        ours(ember.zeros(3, 5, D_MODEL), ember.zeros(2, 4, D_MODEL))


def test_encoder_stack_with_norm_and_causal_detection(rng: Any) -> None:
    layer = nn.TransformerEncoderLayer(D_MODEL, HEADS, FF, 0.0, activation=lambda t: F.gelu(t))
    tlayer = torch.nn.TransformerEncoderLayer(D_MODEL, HEADS, FF, 0.0, activation=torch.nn.GELU())
    ours = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(D_MODEL))
    theirs = torch.nn.TransformerEncoder(tlayer, 2, norm=torch.nn.LayerNorm(D_MODEL),
                                         enable_nested_tensor=False)  # fmt: skip
    assert ours.layers[0] is not layer and ours.layers[0].linear1.weight is not layer.linear1.weight
    copy_into_torch(ours, theirs)
    x, tx = _seq(rng, 5, False)
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    out = ours(x, mask=mask)
    expected = theirs(tx, mask=torch.tensor(mask.numpy()))
    _check_backward(out, expected, [(x, tx)], rng, ours, theirs)
    unbatched, tunbatched = pair(rng.standard_normal((5, D_MODEL)), "cpu")
    assert_same_outputs(ours(unbatched), theirs(tunbatched), atol=1e-5)


def test_square_subsequent_mask_and_dropout_modes() -> None:
    mask = nn.Transformer.generate_square_subsequent_mask(4, dtype=ember.float64)
    expected = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    np.testing.assert_array_equal(mask.numpy(), expected.numpy())
    assert mask.dtype == ember.float64
    layer = nn.TransformerEncoderLayer(D_MODEL, HEADS, FF, dropout=0.5)
    x = ember.ones(3, 2, D_MODEL)
    assert not np.allclose(layer(x).numpy(force=True), layer(x).numpy(force=True))
    layer.eval()
    np.testing.assert_array_equal(layer(x).numpy(force=True), layer(x).numpy(force=True))
    with pytest.raises(RuntimeError, match="relu/gelu"):
        nn.TransformerEncoderLayer(D_MODEL, HEADS, activation="tanh")


def test_decoder_stack_on_every_device(device: str, rng: Any) -> None:
    layer, tlayer = _both("TransformerDecoderLayer", {"norm_first": True})
    ours = nn.TransformerDecoder(layer, 2).to(device)
    theirs = torch.nn.TransformerDecoder(tlayer, 2)
    copy_into_torch(ours, theirs)
    tgt, ttgt = _seq(rng, 3, False, device)
    memory, tmemory = _seq(rng, 4, False, device)
    _check_backward(ours(tgt, memory), theirs(ttgt, tmemory),
                    [(tgt, ttgt), (memory, tmemory)], rng, ours, theirs)  # fmt: skip
