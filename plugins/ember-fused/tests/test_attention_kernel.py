"""ember-fused's flash-style cpu `attention` kernels behind F.scaled_dot_product_attention:
values and gradients equal to PyTorch's, to the composite's (the numpy device runs it) and
to finite differences, causal or not, over key tiles (S > 64), L != S and batch shapes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from ember import library
from ember.plugins import ops

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(9)
Shapes = tuple[tuple[int, ...], tuple[int, ...], int]

SHAPES: list[Shapes] = [
    ((2, 3, 5, 8), (2, 3, 5, 8), 8),  # (B, H, L, E), self-attention
    ((12, 4, 64, 32), (12, 4, 64, 32), 32),  # the GPT benchmark's
    ((2, 70, 16), (2, 150, 16), 6),  # S over two key tiles, Ev != E
    ((1, 9, 4), (1, 3, 4), 5),  # L > S: causal rows past S see every key
    ((1, 1), (4, 1), 2),  # 2-d operands, one query
    ((2, 40, 16), (2, 37, 16), 32),  # the vectorised path: S not a multiple of 16
    ((1, 5, 32), (1, 50, 32), 16),  # the vectorised path with L < S
]


def _run(
    lib: Any, device: str, dtype: Any, arrays: list[np.ndarray], causal: bool
) -> list[np.ndarray]:
    q, k, v = (lib.tensor(a, dtype=dtype, device=device).requires_grad_() for a in arrays[:3])
    out = lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    out.backward(lib.tensor(arrays[3], dtype=dtype, device=device))
    return [
        np.asarray(t.detach().cpu().numpy(), dtype=np.float64)
        for t in (out, q.grad, k.grad, v.grad)
    ]


def _arrays(shapes: Shapes) -> list[np.ndarray]:
    query, key, value_width = shapes
    return [
        RNG.normal(size=query),
        RNG.normal(size=key),
        RNG.normal(size=(*key[:-1], value_width)),
        RNG.normal(size=(*query[:-1], value_width)),
    ]


def test_registered_for_cpu_by_the_plugin() -> None:
    ember.ones(1)
    for op in (ops.ATTENTION, ops.ATTENTION_BACKWARD):
        assert "ember_fused" in str(library.explain(op, "cpu"))


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("shapes", SHAPES)
def test_matches_torch_and_the_composite(shapes: Shapes, causal: bool) -> None:
    arrays = _arrays(shapes)
    fused = _run(ember, "cpu", ember.float32, arrays, causal)
    composite = _run(ember, "numpy", ember.float32, arrays, causal)
    reference = _run(torch, "cpu", torch.float32, arrays, causal)
    for got, want, other in zip(fused, reference, composite, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-5)
        np.testing.assert_allclose(got, other, rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("causal", [True, False])
def test_float64_matches_torch(causal: bool) -> None:
    arrays = _arrays(((2, 6, 5), (2, 7, 5), 3))
    fused = _run(ember, "cpu", ember.float64, arrays, causal)
    reference = _run(torch, "cpu", torch.float64, arrays, causal)
    for got, want in zip(fused, reference, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_scale_and_no_grad_path() -> None:
    arrays = _arrays(((3, 10, 8), (3, 10, 8), 8))
    with ember.no_grad():
        got = ember.nn.functional.scaled_dot_product_attention(
            *(ember.tensor(a, dtype=ember.float32) for a in arrays[:3]), is_causal=True, scale=0.3
        )
    want = torch.nn.functional.scaled_dot_product_attention(
        *(torch.tensor(a, dtype=torch.float32) for a in arrays[:3]), is_causal=True, scale=0.3
    )
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_float32_gradient_by_finite_differences() -> None:
    q, k, v, r = _arrays(((2, 12, 4), (2, 12, 4), 4))
    direction = [RNG.normal(size=a.shape) for a in (q, k, v)]
    probe = ember.tensor(r, dtype=ember.float32)
    leaves = [ember.tensor(a, dtype=ember.float32, requires_grad=True) for a in (q, k, v)]
    attention = ember.nn.functional.scaled_dot_product_attention
    (attention(*leaves, is_causal=True) * probe).sum().backward()
    analytic = sum(
        float((leaf.grad.numpy() * d).sum()) for leaf, d in zip(leaves, direction, strict=True)
    )

    def value(step: float) -> float:
        with ember.no_grad():
            moved = [
                ember.tensor(a + step * d, dtype=ember.float32)
                for a, d in zip((q, k, v), direction, strict=True)
            ]
            return float((attention(*moved, is_causal=True) * probe).sum().item())

    numeric = (value(1e-2) - value(-1e-2)) / 2e-2
    assert analytic == pytest.approx(numeric, rel=2e-2, abs=1e-2)


def test_gradcheck_and_double_backward_float64() -> None:
    leaves = [
        ember.tensor(RNG.normal(size=(1, 4, 3)), dtype=ember.float64, requires_grad=True)
        for _ in range(3)
    ]

    def attention(q: ember.Tensor, k: ember.Tensor, v: ember.Tensor) -> ember.Tensor:
        return ember.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

    assert ember.autograd.gradcheck(attention, tuple(leaves))
    assert ember.autograd.gradgradcheck(attention, tuple(leaves))


def test_masks_and_dropout_keep_the_composite() -> None:
    arrays = _arrays(((2, 5, 4), (2, 5, 4), 4))
    mask = RNG.random((5, 5)) > 0.3
    np.fill_diagonal(mask, True)
    got = ember.nn.functional.scaled_dot_product_attention(
        *(ember.tensor(a, dtype=ember.float32) for a in arrays[:3]), attn_mask=ember.tensor(mask)
    )
    want = torch.nn.functional.scaled_dot_product_attention(
        *(torch.tensor(a, dtype=torch.float32) for a in arrays[:3]), attn_mask=torch.tensor(mask)
    )
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def _projected(lib: Any, x: Any, heads: int, causal: bool) -> Any:
    """nanoGPT's attention on a (B, T, 3C) projection: split, heads by view + transpose,
    and back to (B, T, C) by transpose + contiguous + view."""
    batch, length, triple = x.shape
    width = triple // 3
    q, k, v = (
        t.view(batch, length, heads, width // heads).transpose(1, 2) for t in x.split(width, 2)
    )
    y = lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return y, y.transpose(1, 2).contiguous().view(batch, length, width)


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize(("heads", "head_width"), [(4, 32), (3, 5)])
def test_heads_split_from_one_projection_match_torch(
    causal: bool, heads: int, head_width: int
) -> None:
    """q, k, v read in place from the projection (fast and general kernels), the output
    written heads-interleaved as PyTorch's flash kernel, and the projection's gradient
    (split's backward taking the three gradients' buffer whole) equal to PyTorch's."""
    shape = (2, 19, 3 * heads * head_width)
    x_values, probe = RNG.normal(size=shape), RNG.normal(size=(2, 19, heads * head_width))
    results = []
    for lib in (ember, torch):
        x = lib.tensor(x_values, dtype=lib.float32, requires_grad=True)
        y, merged = _projected(lib, x, heads, causal)
        (merged * lib.tensor(probe, dtype=lib.float32)).sum().backward()
        results.append((y.transpose(1, 2).is_contiguous(), merged.detach().numpy(), x.grad.numpy()))
    (ours_dense, ours, ours_grad), (theirs_dense, theirs, theirs_grad) = results
    assert ours_dense and theirs_dense
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=2e-5)
    np.testing.assert_allclose(ours_grad, theirs_grad, rtol=1e-4, atol=2e-5)


def test_rows_of_other_strides_are_copied_first() -> None:
    """A query whose last dim is not unit-stride (a transposed leaf) still matches."""
    arrays = _arrays(((2, 3, 16, 8), (2, 3, 16, 8), 8))
    grads = []
    for lib in (ember, torch):
        leaf = lib.tensor(arrays[0].swapaxes(-1, -2).copy(), dtype=lib.float32)
        leaf.requires_grad_()
        k, v = (lib.tensor(a, dtype=lib.float32) for a in arrays[1:3])
        out = lib.nn.functional.scaled_dot_product_attention(leaf.transpose(-1, -2), k, v)
        out.backward(lib.tensor(arrays[3], dtype=lib.float32))
        grads.append((out.detach().numpy(), leaf.grad.numpy()))
    for got, want in zip(*grads, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-5)
