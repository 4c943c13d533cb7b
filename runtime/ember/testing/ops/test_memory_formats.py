"""clone(memory_format=) against torch 2.13: the strides of each format, values, the
gradient through a channels_last copy, errors, and .contiguous() staying row-major."""

from __future__ import annotations

import numpy as np
import pytest

import ember

from ._reference import host, make
from .test_gradients_reduction import check_gradients

torch = pytest.importorskip("torch")


FORMAT_CASES = {
    "preserve-transposed": (lambda m, x: x.transpose(1, 3), "preserve_format"),
    "preserve-sliced": (lambda m, x: x[:, :, ::2], "preserve_format"),
    "preserve-expanded": (lambda m, x: x[:1].expand(3, 3, 4, 5), "preserve_format"),
    "contiguous": (lambda m, x: x.transpose(0, 2), "contiguous_format"),
    "channels_last": (lambda m, x: x, "channels_last"),
    "channels_last-transposed": (lambda m, x: x.transpose(2, 3), "channels_last"),
}


@pytest.mark.parametrize("name", sorted(FORMAT_CASES))
def test_clone_memory_format_strides(device: str, name: str, rng: np.random.Generator) -> None:
    view, fmt = FORMAT_CASES[name]
    values = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    source = view(ember, make(values, device))
    want = view(torch, torch.tensor(values)).clone(memory_format=getattr(torch, fmt))
    got = source.clone(memory_format=getattr(ember, fmt))
    assert got.stride() == want.stride()
    np.testing.assert_array_equal(host(got), want.numpy())
    assert ember.clone(source, memory_format=getattr(ember, fmt)).stride() == want.stride()


def test_clone_memory_format_gradient_and_errors(device: str, rng: np.random.Generator) -> None:
    check_gradients(
        lambda t: t.clone(memory_format=ember.channels_last) * 2.0,
        rng.standard_normal((1, 2, 2, 3)),
        device=device,
    )
    with pytest.raises(RuntimeError):
        make(np.ones((2, 3, 4), np.float32), device).clone(memory_format=ember.channels_last)
    with pytest.raises(TypeError):
        make(np.ones(3, np.float32), device).clone(memory_format="channels_last")


def test_contiguous_stays_row_major(device: str) -> None:
    # clone's default (preserve_format) keeps a transposed layout; .contiguous() does not.
    x = make(np.ones((3, 4), np.float32), device).t()
    assert x.clone().stride() == torch.ones(3, 4).t().clone().stride() == (1, 4)
    assert x.contiguous().is_contiguous()
    assert x.contiguous().stride() == (3, 1)
