"""Pooling kernels of the OpenCL device (see cl/pool.cl): max, average and adaptive average
pooling over contiguous stacks of planes, forward and backward, with the CPU device's
window rules, index conventions and rounding.

Work items own whole output rows (forward) or input rows (backward): a backward item adds
into its row the outputs whose windows reach it, in the CPU's order, instead of
scattering with float atomics. max_pool2d_backward only has the indices, not the windows,
so its work items each own a run of pixels of one plane and scan that plane's indices in
order. Signatures are documented beside the op definitions in
ember.nn.functional._pool.
"""

from __future__ import annotations

from importlib import resources
from typing import Any, Final

import numpy as np

from ember.plugins.sdk import KernelRegistry, Tensor
from ember_opencl._launch import at, kernel, launch, mem

__all__ = [
    "adaptive_avg_pool2d", "adaptive_avg_pool2d_backward", "avg_pool2d", "avg_pool2d_backward",
    "max_pool2d", "max_pool2d_backward", "register",
]  # fmt: skip

Pair = tuple[int, int]

_SOURCE: Final = (resources.files("ember_opencl") / "cl" / "pool.cl").read_text()
_FLOATS: Final = frozenset({"float16", "float32", "float64"})
_INTEGERS: Final = frozenset({"uint8", "int8", "int32", "int64"})
_SCAN_ITEMS: Final = 64  # max_pool2d_backward: aim for this many work items in all
_SCAN_RUN: Final = 64  # ... each owning at least this many pixels
_i64 = np.int64
_i32 = np.int32
_kernels: dict[tuple[Any, str, str], Any] = {}


def _kernel(t: Tensor, name: str, dtypes: frozenset[str]) -> Any:
    """Kernel `name` for t's device and dtype (one of `dtypes`, as on the CPU device)."""
    dtype = t.dtype.name
    key = (t.device, name, dtype)
    k = _kernels.get(key)
    if k is None:
        if dtype not in dtypes:
            raise RuntimeError(f"{name}: the opencl device does not support {dtype}")
        k = _kernels[key] = kernel(t.device, _SOURCE, name, f"-DEM_{dtype.upper()}")
    return k


def _window(image: Tensor, out: Tensor, kernel_size: Pair, stride: Pair,
            padding: Pair) -> list[Any]:  # fmt: skip
    """H, W, OH, OW, kernel, stride and padding as kernel arguments."""
    h, w = image.shape[2:]
    oh, ow = out.shape[2:]
    return [_i64(v) for v in (h, w, oh, ow, *kernel_size, *stride, *padding)]


def _planes(t: Tensor) -> int:
    return t.shape[0] * t.shape[1]


def max_pool2d(out: Tensor, indices: Tensor, x: Tensor, kernel_size: Pair, stride: Pair,
               padding: Pair, dilation: Pair) -> None:  # fmt: skip
    """max_pool2d(out, indices, x, kernel_size, stride, padding, dilation)."""
    k = _kernel(x, "max_pool2d", _FLOATS | _INTEGERS)
    args = [*at(out), *at(indices), mem(x),
            _i64(x.storage_offset()), *_window(x, out, kernel_size, stride, padding),
            _i64(dilation[0]), _i64(dilation[1])]  # fmt: skip
    launch(x.device, k, (out.shape[2], _planes(out)), args)


def max_pool2d_backward(grad_input: Tensor, grad_out: Tensor, indices: Tensor) -> None:
    """max_pool2d_backward(grad_input, grad_out, indices): scatter-add by plane index."""
    k = _kernel(grad_input, "max_pool2d_backward", _FLOATS)
    planes = _planes(grad_input)
    plane_in = grad_input.shape[2] * grad_input.shape[3]
    plane_out = grad_out.shape[2] * grad_out.shape[3]
    # Split planes into runs when there are too few planes to occupy the device; each run
    # rescans the plane's indices, so runs stay long.
    splits = max(1, min(-(-_SCAN_ITEMS // max(planes, 1)), plane_in // _SCAN_RUN))
    args = [*at(grad_input), *at(grad_out),
            *at(indices), _i64(plane_in), _i64(plane_out)]  # fmt: skip
    launch(grad_input.device, k, (splits, planes), args)


def avg_pool2d(out: Tensor, x: Tensor, kernel_size: Pair, stride: Pair, padding: Pair,
               count_include_pad: bool, divisor_override: int | None) -> None:  # fmt: skip
    """avg_pool2d(out, x, kernel_size, stride, padding, count_include_pad, divisor_override)."""
    k = _kernel(x, "avg_pool2d", _FLOATS | _INTEGERS)
    args = [*at(out), *at(x),
            *_window(x, out, kernel_size, stride, padding),
            _i32(count_include_pad), _i64(divisor_override or 0)]  # fmt: skip
    launch(x.device, k, (out.shape[2], _planes(out)), args)


def avg_pool2d_backward(grad_input: Tensor, grad_out: Tensor, kernel_size: Pair, stride: Pair,
                        padding: Pair, count_include_pad: bool,
                        divisor_override: int | None) -> None:  # fmt: skip
    """avg_pool2d_backward(grad_input, grad_out, kernel_size, stride, padding, ...)."""
    k = _kernel(grad_input, "avg_pool2d_backward", _FLOATS)
    args = [*at(grad_input), *at(grad_out),
            *_window(grad_input, grad_out, kernel_size, stride, padding),
            _i32(count_include_pad), _i64(divisor_override or 0)]  # fmt: skip
    launch(grad_input.device, k, (grad_input.shape[2], _planes(grad_input)), args)


def _adaptive(name: str, image: Tensor, pooled: Tensor, target: Tensor, source: Tensor) -> None:
    h, w = image.shape[2:]
    oh, ow = pooled.shape[2:]
    args = [*at(target), *at(source),
            _i64(h), _i64(w), _i64(oh), _i64(ow)]  # fmt: skip
    rows = target.shape[2]
    launch(target.device, _kernel(target, name, _FLOATS), (rows, _planes(target)), args)


def adaptive_avg_pool2d(out: Tensor, x: Tensor) -> None:
    """adaptive_avg_pool2d(out, x): the output size is out's (Ho, Wo)."""
    _adaptive("adaptive_avg_pool2d", x, out, out, x)


def adaptive_avg_pool2d_backward(grad_input: Tensor, grad_out: Tensor) -> None:
    """adaptive_avg_pool2d_backward(grad_input, grad_out)."""
    _adaptive("adaptive_avg_pool2d_backward", grad_input, grad_out, grad_input, grad_out)


def register(registry: KernelRegistry) -> None:
    """Register this family's kernels for the opencl device."""
    registry.register("max_pool2d", "opencl", max_pool2d)
    registry.register("max_pool2d_backward", "opencl", max_pool2d_backward)
    registry.register("avg_pool2d", "opencl", avg_pool2d)
    registry.register("avg_pool2d_backward", "opencl", avg_pool2d_backward)
    registry.register("adaptive_avg_pool2d", "opencl", adaptive_avg_pool2d)
    registry.register("adaptive_avg_pool2d_backward", "opencl", adaptive_avg_pool2d_backward)
