"""scaled_dot_product_attention and multi_head_attention_forward: a NumPy float64 reference,
PyTorch parity over every mask/option combination, gradients by finite differences."""

from __future__ import annotations

import contextlib
import itertools
from typing import Any

import numpy as np
import pytest

import ember
import ember.nn.functional as F

from ._helpers import check_gradients, tensor


def _attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, bias: np.ndarray) -> np.ndarray:
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]) + bias
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    return (weights / weights.sum(axis=-1, keepdims=True)) @ v


@pytest.mark.parametrize("mask", ["none", "causal", "bool", "float"])
def test_sdpa_values(device: str, mask: str, rng: Any) -> None:
    q, k, v = rng.standard_normal((3, 2, 2, 4, 3))
    bias = np.zeros((4, 4))
    kwargs: dict[str, Any] = {}
    if mask == "causal":
        bias = np.where(np.tril(np.ones((4, 4))) > 0, 0.0, -np.inf)
        kwargs["is_causal"] = True
    elif mask == "bool":
        allowed = rng.random((4, 4)) > 0.4
        allowed[:, 0] = True
        bias = np.where(allowed, 0.0, -np.inf)
        kwargs["attn_mask"] = ember.tensor(allowed, device=device)
    elif mask == "float":
        bias = rng.standard_normal((4, 4))
        kwargs["attn_mask"] = tensor(bias, device)
    result = F.scaled_dot_product_attention(*(tensor(a, device) for a in (q, k, v)), **kwargs)
    np.testing.assert_allclose(result.numpy(force=True), _attention(q, k, v, bias), atol=1e-12)


def test_sdpa_scale_and_fully_masked_rows(device: str, rng: Any) -> None:
    q, k, v = rng.standard_normal((3, 1, 3, 2))
    scaled = F.scaled_dot_product_attention(*(tensor(a, device) for a in (q, k, v)), scale=0.5)
    expected = _attention(q * 0.5 * np.sqrt(2), k, v, np.zeros((3, 3)))
    np.testing.assert_allclose(scaled.numpy(force=True), expected, atol=1e-12)
    blocked = np.ones((3, 3), dtype=bool)
    blocked[1] = False
    out = F.scaled_dot_product_attention(
        *(tensor(a, device) for a in (q, k, v)), attn_mask=ember.tensor(blocked, device=device)
    )
    np.testing.assert_array_equal(out.numpy(force=True)[0, 1], [0.0, 0.0])  # as PyTorch: 0, not nan


def test_sdpa_errors(device: str) -> None:
    q = ember.zeros(1, 2, 3, device=device)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=ember.zeros(2, 2), is_causal=True)


@pytest.mark.parametrize("mask", ["none", "causal", "float"])
def test_sdpa_gradients(device: str, mask: str, rng: Any) -> None:
    bias = tensor(rng.standard_normal((3, 3)), device)
    kwargs = {"none": {}, "causal": {"is_causal": True}, "float": {"attn_mask": bias}}[mask]
    arrays = list(rng.standard_normal((3, 2, 3, 2)))
    check_gradients(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **kwargs), arrays, device
    )


def test_sdpa_matches_torch_with_dropout_off_and_gqa(device: str, rng: Any) -> None:
    torch = pytest.importorskip("torch")
    q = rng.standard_normal((2, 4, 3, 8))
    k, v = rng.standard_normal((2, 2, 2, 5, 8))
    ours = F.scaled_dot_product_attention(
        *(tensor(a, device) for a in (q, k, v)), enable_gqa=True, scale=0.2
    )
    theirs = torch.nn.functional.scaled_dot_product_attention(
        *(torch.tensor(a) for a in (q, k, v)), enable_gqa=True, scale=0.2
    )
    np.testing.assert_allclose(ours.numpy(force=True), theirs.numpy(force=True), atol=1e-12)


def test_sdpa_dropout_keeps_expectation(device: str) -> None:
    q = ember.zeros(1, 1, 4, device=device)
    v = ember.ones(1, 400, 4, device=device)
    ember.manual_seed(0)
    out = F.scaled_dot_product_attention(q, v, v, dropout_p=0.5).numpy(force=True)
    assert abs(out.mean() - 1.0) < 0.15 and not np.allclose(out, 1.0)


# -- multi_head_attention_forward -------------------------------------------------------------


def _mha_arguments(rng: Any, embed: int, key_dim: int) -> dict[str, np.ndarray]:
    return {
        "in_proj_weight": rng.standard_normal((3 * embed, embed)) * 0.4,
        "in_proj_bias": rng.standard_normal(3 * embed) * 0.1,
        "q_proj_weight": rng.standard_normal((embed, embed)) * 0.4,
        "k_proj_weight": rng.standard_normal((embed, key_dim)) * 0.4,
        "v_proj_weight": rng.standard_normal((embed, key_dim)) * 0.4,
        "out_proj_weight": rng.standard_normal((embed, embed)) * 0.4,
        "out_proj_bias": rng.standard_normal(embed) * 0.1,
        "bias_k": rng.standard_normal((1, 1, embed)),
        "bias_v": rng.standard_normal((1, 1, embed)),
    }


_OPTIONS = list(
    itertools.product(
        [True, False],  # need_weights
        ["none", "padding", "bool", "float", "both"],  # masks
        ["plain", "bias_kv", "zero_attn", "separate"],  # variants
    )
)


@pytest.mark.parametrize(("need_weights", "masks", "variant"), _OPTIONS)
def test_multi_head_attention_forward_matches_torch(
    device: str, need_weights: bool, masks: str, variant: str, rng: Any
) -> None:
    torch = pytest.importorskip("torch")
    length, source, batch, embed, heads = 3, 4, 2, 6, 2
    key_dim = 5 if variant == "separate" else embed
    q = rng.standard_normal((length, batch, embed))
    k, v = rng.standard_normal((2, source, batch, key_dim))
    p = _mha_arguments(rng, embed, key_dim)
    padding = rng.random((batch, source)) > 0.7
    padding[:, 0] = False
    masks_by_name = {
        "none": (None, None),
        "padding": (padding, None),
        "bool": (None, rng.random((length, source)) > 0.7),
        "float": (None, rng.standard_normal((batch * heads, length, source))),
        "both": (padding, rng.standard_normal((length, source))),
    }
    key_padding_mask, attn_mask = masks_by_name[masks]
    if variant != "separate":
        p.pop("q_proj_weight"), p.pop("k_proj_weight"), p.pop("v_proj_weight")
    else:
        p.pop("in_proj_weight")
    if variant != "bias_kv":
        p.pop("bias_k"), p.pop("bias_v")

    def run(lib: Any, convert: Any) -> tuple[Any, Any]:
        named = {name: convert(value) for name, value in p.items()}
        return lib.multi_head_attention_forward(
            convert(q), convert(k), convert(v), embed, heads,
            named.get("in_proj_weight"), named["in_proj_bias"],
            named.get("bias_k"), named.get("bias_v"), variant == "zero_attn", 0.0,
            named["out_proj_weight"], named["out_proj_bias"], training=False,
            key_padding_mask=None if key_padding_mask is None else convert(key_padding_mask),
            need_weights=need_weights,
            attn_mask=None if attn_mask is None else convert(attn_mask),
            use_separate_proj_weight=variant == "separate",
            q_proj_weight=named.get("q_proj_weight"), k_proj_weight=named.get("k_proj_weight"),
            v_proj_weight=named.get("v_proj_weight"), average_attn_weights=masks != "none",
        )  # fmt: skip

    ours = run(F, lambda a: ember.tensor(a, device=device))
    # PyTorch warns about mixing a bool padding mask with a float attention mask.
    with pytest.warns(UserWarning) if masks == "both" else contextlib.nullcontext():
        theirs = run(torch.nn.functional, torch.tensor)
    np.testing.assert_allclose(ours[0].numpy(force=True), theirs[0].numpy(force=True), atol=1e-12)
    if need_weights:
        np.testing.assert_allclose(
            ours[1].numpy(force=True), theirs[1].numpy(force=True), atol=1e-12
        )
    else:
        assert ours[1] is None and theirs[1] is None


def test_multi_head_attention_forward_gradients(device: str, rng: Any) -> None:
    embed, heads = 4, 2
    mask = tensor(rng.standard_normal((3, 3)), device)

    def fn(x: Any, w: Any, b: Any, wo: Any) -> Any:
        out, _ = F.multi_head_attention_forward(
            x, x, x, embed, heads, w, b, None, None, False, 0.0, wo, None, attn_mask=mask
        )
        return out

    arrays = [
        rng.standard_normal((3, 2, embed)),
        rng.standard_normal((3 * embed, embed)) * 0.5,
        rng.standard_normal(3 * embed) * 0.1,
        rng.standard_normal((embed, embed)) * 0.5,
    ]
    check_gradients(fn, arrays, device)
