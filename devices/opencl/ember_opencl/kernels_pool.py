"""Pooling kernels of the OpenCL device (see cl/pool.cl, launches of the shared em_pool.h):
max, average and adaptive average pooling over contiguous stacks of planes, forward and
backward, with the CPU device's window rules, index conventions and rounding.

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

from ember.plugins import kernels
from ember.plugins.kernels import windows
from ember.plugins.sdk import KernelRegistry, Tensor
from ember_opencl._launch import at, kernel, launch

__all__ = [
    "adaptive_avg_pool2d", "adaptive_avg_pool2d_backward", "avg_pool2d", "avg_pool2d_backward",
    "max_pool2d", "max_pool2d_backward", "register",
]  # fmt: skip

Pair = tuple[int, int]

_SOURCE: Final = (
    kernels.source("em_pool.h") + (resources.files("ember_opencl") / "cl" / "pool.cl").read_text()
)
_FLOATS: Final = frozenset({"float16", "float32", "float64"})
_INTEGERS: Final = frozenset({"uint8", "int8", "int32", "int64"})
_SCAN_ITEMS: Final = 64  # max_pool2d_backward: aim for this many work items in all
_SCAN_RUN: Final = 64  # ... each owning at least this many pixels
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


def _run(name: str, dtypes: frozenset[str], rows: int, target: Tensor, *args: Any) -> None:
    """Kernel `name` over (rows, planes of target) with `args` after target's (buffer, offset)."""
    k = _kernel(target, name, dtypes)
    launch(target.device, k, (rows, target.shape[0] * target.shape[1]), [*at(target), *args])


def _geometry(image: Tensor, pooled: Tensor, *window: Any) -> tuple[int, ...]:
    """em_pool_geometry's fields, passed as `long` arguments (see cl/pool.cl)."""
    return windows.pool2d(image.shape, pooled.shape, *window)


def max_pool2d(out: Tensor, indices: Tensor, x: Tensor, kernel_size: Pair, stride: Pair,
               padding: Pair, dilation: Pair) -> None:  # fmt: skip
    """max_pool2d(out, indices, x, kernel_size, stride, padding, dilation)."""
    geometry = _geometry(x, out, kernel_size, stride, padding, dilation)
    _run("max_pool2d", _FLOATS | _INTEGERS, out.shape[2], out, *at(indices), *at(x), *geometry)


def max_pool2d_backward(grad_input: Tensor, grad_out: Tensor, indices: Tensor) -> None:
    """max_pool2d_backward(grad_input, grad_out, indices): scatter-add by plane index."""
    planes = grad_input.shape[0] * grad_input.shape[1]
    plane_in = grad_input.shape[2] * grad_input.shape[3]
    # Split planes into runs when there are too few planes to occupy the device; each run
    # rescans the plane's indices, so runs stay long.
    splits = max(1, min(-(-_SCAN_ITEMS // max(planes, 1)), plane_in // _SCAN_RUN))
    geometry = _geometry(grad_input, grad_out)
    _run("max_pool2d_backward", _FLOATS, splits, grad_input,
         *at(grad_out), *at(indices), *geometry)  # fmt: skip


def avg_pool2d(out: Tensor, x: Tensor, kernel_size: Pair, stride: Pair, padding: Pair,
               count_include_pad: bool, divisor_override: int | None) -> None:  # fmt: skip
    """avg_pool2d(out, x, kernel_size, stride, padding, count_include_pad, divisor_override)."""
    window = (kernel_size, stride, padding, (1, 1), count_include_pad, divisor_override)
    _run("avg_pool2d", _FLOATS | _INTEGERS, out.shape[2], out, *at(x), *_geometry(x, out, *window))


def avg_pool2d_backward(grad_input: Tensor, grad_out: Tensor, kernel_size: Pair, stride: Pair,
                        padding: Pair, count_include_pad: bool,
                        divisor_override: int | None) -> None:  # fmt: skip
    """avg_pool2d_backward(grad_input, grad_out, kernel_size, stride, padding, ...)."""
    window = (kernel_size, stride, padding, (1, 1), count_include_pad, divisor_override)
    geometry = _geometry(grad_input, grad_out, *window)
    _run("avg_pool2d_backward", _FLOATS, grad_input.shape[2], grad_input, *at(grad_out), *geometry)


def adaptive_avg_pool2d(out: Tensor, x: Tensor) -> None:
    """adaptive_avg_pool2d(out, x): the output size is out's (Ho, Wo)."""
    _run("adaptive_avg_pool2d", _FLOATS, out.shape[2], out, *at(x), *_geometry(x, out))


def adaptive_avg_pool2d_backward(grad_input: Tensor, grad_out: Tensor) -> None:
    """adaptive_avg_pool2d_backward(grad_input, grad_out)."""
    geometry = _geometry(grad_input, grad_out)
    _run("adaptive_avg_pool2d_backward", _FLOATS, grad_input.shape[2], grad_input,
         *at(grad_out), *geometry)  # fmt: skip


def register(registry: KernelRegistry) -> None:
    """Register this family's kernels for the opencl device."""
    registry.register("max_pool2d", "opencl", max_pool2d)
    registry.register("max_pool2d_backward", "opencl", max_pool2d_backward)
    registry.register("avg_pool2d", "opencl", avg_pool2d)
    registry.register("avg_pool2d_backward", "opencl", avg_pool2d_backward)
    registry.register("adaptive_avg_pool2d", "opencl", adaptive_avg_pool2d)
    registry.register("adaptive_avg_pool2d_backward", "opencl", adaptive_avg_pool2d_backward)
