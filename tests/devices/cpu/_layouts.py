"""Shared helpers of the cpu kernel tests: kernels by name, and tensors in chosen layouts.

Planned kernels (elementwise, reductions, scans) take storages and a plan; `kernel(name)`
gives them a tensor-level face that builds the plan as the runtime does (ember._ops._launch),
so the tests state operands as tensors and exercise exactly the runtime's calls.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember
from ember import _dtype
from ember._device import device
from ember._dispatch import OPS
from ember._ops import _launch
from ember._tensor import Tensor, empty_tensor, make_view
from ember.plugins import ops

CPU = device("cpu")


def _binary(name: str) -> Any:
    def call(out: Tensor, a: Any, b: Any) -> None:
        compute = a._dtype if isinstance(a, Tensor) else b._dtype
        _launch.launch_binary(OPS[name], out, a, b, compute)

    return call


def kernel(name: str) -> Any:
    """The cpu kernel registered for op `name`, called with tensors."""
    ember.zeros(1)  # loads the plugins
    op = OPS[name]
    if name in ops.UNARY:
        return lambda out, a: _launch.launch_unary(op, out, a)
    if name in ops.BINARY:
        return _binary(name)
    if name in ops.REDUCTIONS:
        return lambda out, a, dims: _launch.launch_reduction(op, out, a, tuple(dims))
    if name in (ops.ARGMAX, ops.ARGMIN, ops.CUMSUM):
        return lambda out, a, dim: _launch.launch_scan(op, out, a, dim)
    planned = {ops.COPY: _launch.copy, ops.FILL: _launch.fill, ops.WHERE: _launch.launch_where}
    return planned.get(name, op.kernels["cpu"])


def tensor(arr: np.ndarray, layout: str = "contiguous") -> Tensor:
    """A cpu tensor whose logical values are `arr`, stored with the given layout.

    "transposed" stores arr with its axes reversed; "stepped" every other element of the
    last dim after a skipped leading slice; "broadcast" only arr[0], viewed with a zero
    stride (arr must repeat it).
    """
    dt = _dtype.FROM_NUMPY[arr.dtype]
    if layout == "contiguous" or arr.ndim == 0:
        t = empty_tensor(arr.shape, dt, CPU)
        t.numpy()[...] = arr
        return t
    if layout == "transposed":
        base = empty_tensor(arr.shape[::-1], dt, CPU)
        base.numpy()[...] = arr.T
        return make_view(base, 0, arr.shape, base._strides[::-1])
    if layout == "broadcast":
        row = tensor(np.ascontiguousarray(arr[0]))
        return make_view(row, 0, arr.shape, (0, *row._strides))
    if arr.ndim == 1:  # stepped: every other element, after one skipped
        base = empty_tensor((2 * arr.shape[0] + 1,), dt, CPU)
        base.numpy()[1::2] = arr
        return make_view(base, 1, arr.shape, (2,))
    base = empty_tensor((arr.shape[0] + 1, *arr.shape[1:-1], 2 * arr.shape[-1]), dt, CPU)
    base.numpy()[1:, ..., ::2] = arr
    return make_view(base, base._strides[0], arr.shape, (*base._strides[:-1], 2))


def empty(shape: tuple[int, ...], name: str, strided: bool = False) -> Tensor:
    """An output tensor; `strided` makes it a stepped view with an offset."""
    dt = _dtype.BY_NAME[name]
    if not strided or not shape:
        return empty_tensor(shape, dt, CPU)
    base = empty_tensor((*shape[:-1], 2 * shape[-1] + 1), dt, CPU)
    return make_view(base, 1, shape, (*base._strides[:-1], 2))
