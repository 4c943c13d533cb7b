"""Long device work for the stream tests: big tensors, chains of many kernels."""

from __future__ import annotations

import ember

#: elements of the big tensors: 16 MiB of float32, a few milliseconds per kernel on PoCL
N = 1 << 22


def chain(x: ember.Tensor, kernels: int) -> ember.Tensor:
    """`(kernels + 1) * x`, computed by `kernels + 1` kernels that each read `x`."""
    acc = x * 1.0
    for _ in range(kernels):
        acc.add_(x)
    return acc


def idle(dev: ember.device) -> None:
    """Wait for all of `dev`'s work and drop its cached blocks: each test starts clean."""
    ember.synchronize(dev)
    ember.empty_cache(dev)
