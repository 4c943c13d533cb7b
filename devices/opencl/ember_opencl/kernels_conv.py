"""Convolution kernels of the OpenCL device: im2col and col2im (see cl/conv.cl, launches of
the shared em_im2col.h).

im2col moves NCHW windows into the column matrix that the runtime multiplies through the
mm/bmm kernels; col2im is its adjoint, computed by work items that each own one image row
and add its column elements in the CPU's order, so it needs no atomics and matches the
CPU bit for bit. Signatures and layouts are documented beside the op definitions in
ember.nn.functional._convolution.
"""

from __future__ import annotations

import struct
from importlib import resources
from typing import Any, Final

from ember.plugins import kernels
from ember.plugins.kernels import windows
from ember.plugins.sdk import KernelRegistry, Tensor
from ember_opencl._launch import at, kernel, launch

__all__ = ["col2im", "im2col", "register"]

Pair = tuple[int, int]

_SOURCE: Final = (
    kernels.source("em_im2col.h") + (resources.files("ember_opencl") / "cl" / "conv.cl").read_text()
)
_MOVE: Final = {1: "uchar", 2: "ushort", 4: "uint", 8: "ulong"}  # im2col: by item size
# col2im adds: floats natively, integers in unsigned arithmetic of their width (wrapping).
_ADD: Final = {
    "float32": "float", "float64": "double", "uint8": "uchar", "int8": "uchar",
    "int32": "uint", "int64": "ulong",
}  # fmt: skip
_GEOMETRY: Final = struct.Struct("18q")  # em_conv_geometry
_kernels: dict[tuple[Any, str, str], Any] = {}


def _kernel(device: Any, name: str, element: str) -> Any:
    key = (device, name, element)
    k = _kernels.get(key)
    if k is None:
        k = _kernels[key] = kernel(device, _SOURCE, name, f"-DT={element}")
    return k


def _geometry(image: Tensor, cols: Tensor, stride: Pair, padding: Pair, dilation: Pair) -> bytes:
    fields = windows.conv2d(image.shape, cols.shape, cols.stride(), stride, padding, dilation)
    return _GEOMETRY.pack(*fields)


def im2col(cols: Tensor, x: Tensor, stride: Pair, padding: Pair, dilation: Pair) -> None:
    """im2col(cols, x, stride, padding, dilation): cols (N, C, kh, kw, Ho, Wo) <- windows of x."""
    n, c, kh, kw = cols.shape[:4]
    k = _kernel(x.device, "im2col", _MOVE[x.dtype.itemsize])
    args = [*at(cols), *at(x), _geometry(x, cols, stride, padding, dilation)]
    launch(x.device, k, (kh * kw, n * c), args)


def col2im(x: Tensor, cols: Tensor, stride: Pair, padding: Pair, dilation: Pair) -> None:
    """col2im(x, cols, stride, padding, dilation): x = the sum of cols scattered back."""
    element = _ADD.get(x.dtype.name)
    if element is None:
        raise RuntimeError(f"col2im: the opencl device does not support {x.dtype.name}")
    n, c, h = x.shape[:3]
    args = [*at(x), *at(cols), _geometry(x, cols, stride, padding, dilation)]
    launch(x.device, _kernel(x.device, "col2im", element), (h, n * c), args)


def register(registry: KernelRegistry) -> None:
    """Register this family's kernels for the opencl device."""
    registry.register("im2col", "opencl", im2col)
    registry.register("col2im", "opencl", col2im)
