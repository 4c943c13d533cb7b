"""Twin tensors for the opencl kernel tests: the same values in the same memory layout on
the cpu device (the reference, whose kernels the conformance suite checks against NumPy)
and on opencl, so that a kernel's whole output storage can be compared between them."""

from __future__ import annotations

import numpy as np

import ember
from ember._device import device
from ember._tensor import Tensor, make_view

__all__ = ["DEVICES", "LAYOUTS", "Pair", "pair"]

DEVICES = (device("cpu"), device("opencl", 0))
Pair = tuple[Tensor, Tensor]
#: "transposed": every dim reversed in memory; "swapped": the last two only; "stepped":
#: every other element of the last dim, after a skipped first row (1-d: after one
#: skipped element); "broadcast": arr[0] viewed with a zero leading stride.
LAYOUTS = ("contiguous", "transposed", "swapped", "stepped", "broadcast")


def pair(arr: np.ndarray, layout: str = "contiguous") -> Pair:
    """The same values in the same layout on both devices (views of equal bases)."""
    strides: tuple[int, ...] | None
    itemsize = arr.itemsize
    if layout == "contiguous" or arr.ndim == 0:
        base, offset, strides = arr, 0, None
    elif layout == "transposed":
        base, offset = np.ascontiguousarray(arr.T), 0
        strides = tuple(s // itemsize for s in base.strides[::-1])
    elif layout == "swapped":
        base, offset = np.ascontiguousarray(np.swapaxes(arr, -1, -2)), 0
        element = [s // itemsize for s in base.strides]
        strides = (*element[:-2], element[-1], element[-2])
    elif layout == "broadcast":  # the view overlaps itself
        base, offset = np.ascontiguousarray(arr[0]), 0  # 1-d: arr[0] becomes shape (1,)
        strides = (0, *(s // itemsize for s in base.strides[: arr.ndim - 1]))
    elif layout == "stepped" and arr.ndim == 1:
        base = np.zeros(2 * arr.shape[0] + 1, arr.dtype)
        base[1::2] = arr
        offset, strides = 1, (2,)
    elif layout == "stepped":
        base = np.zeros((arr.shape[0] + 1, *arr.shape[1:-1], 2 * arr.shape[-1]), arr.dtype)
        base[1:, ..., ::2] = arr
        element = [s // itemsize for s in base.strides]
        offset, strides = element[0], (*element[:-1], 2)
    else:
        raise ValueError(f"unknown layout {layout!r}; known: {', '.join(LAYOUTS)}")
    made = []
    for dev in DEVICES:
        t = ember.tensor(np.array(base, order="C"), device=str(dev))  # 0-d stays 0-d
        made.append(t if strides is None else make_view(t, offset, arr.shape, strides))
    return made[0], made[1]
