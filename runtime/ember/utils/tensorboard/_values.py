"""What a summary logs, as NumPy: ember tensors, NumPy arrays and Python numbers alike."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["as_array", "as_scalar"]


def as_array(value: Any) -> np.ndarray:
    """`value` as a NumPy array, read back from whichever device holds it."""
    numpy = getattr(value, "numpy", None)
    if callable(numpy) and hasattr(value, "detach"):
        return np.asarray(value.detach().cpu().numpy())
    return np.asarray(value)


def as_scalar(value: Any, what: str) -> float:
    """One number from a 0-d or one-element value; ValueError naming `what` otherwise."""
    array = as_array(value)
    if array.size != 1:
        raise ValueError(f"{what}: expected a scalar, got a value of shape {list(array.shape)}")
    return float(array.reshape(()))
