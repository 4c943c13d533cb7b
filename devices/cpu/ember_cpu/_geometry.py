"""Helpers the kernel families share to hand a tensor's geometry to the C side.

Each family keeps its own `Scratch` array of shapes and strides, filled just before a call;
`address` is a tensor's first element and `check_rank` enforces the C side's EM_MAX_DIMS.
"""

from __future__ import annotations

import threading
from typing import Any, Final

from ember._tensor import Tensor
from ember_cpu._lib import ffi

__all__ = ["MAX_DIMS", "Scratch", "address", "check_rank"]

MAX_DIMS: Final = 16


class Scratch(threading.local):
    """A per-thread int64 array of `size` entries, allocated once per thread.

    Per thread because cffi releases the GIL during a call: another thread could otherwise
    refill the array while a kernel reads it.
    """

    def __init__(self, size: int) -> None:
        self.buffer: Any = ffi.new("int64_t[]", size)


def address(t: Tensor) -> int:
    """The address of t's first element."""
    return t._storage.ptr + t._offset * t._dtype.itemsize


def check_rank(t: Tensor, op: str) -> int:
    """t's number of dims, or a RuntimeError past what the cpu device supports."""
    ndim = len(t._shape)
    if ndim > MAX_DIMS:
        raise RuntimeError(f"{op}: the cpu device supports at most {MAX_DIMS} dims, got {ndim}")
    return ndim
