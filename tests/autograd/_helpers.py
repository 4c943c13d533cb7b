"""Small helpers shared by the autograd tests (default device, float64 leaves)."""

from __future__ import annotations

from typing import Any

import numpy as np

import ember


def leaf(values: Any, dtype: ember.dtype = ember.float64) -> ember.Tensor:
    """A tensor of `values` that requires grad."""
    return ember.tensor(values, dtype=dtype).requires_grad_()


def values(t: ember.Tensor | None) -> np.ndarray:
    """The values of a (gradient) tensor as a NumPy array."""
    assert t is not None, "expected a tensor, got None"
    return np.array(t.detach().numpy(force=True))


def ones_like(t: ember.Tensor) -> ember.Tensor:
    return ember.ones_like(t.detach())
