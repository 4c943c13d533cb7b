"""Ember's OpenCL device: OpenCL C kernels through pyopencl, one in-order queue per stream.

`load_inline` builds a user's OpenCL C and launches it on ember's streams (see
`ember_opencl._inline`); it is imported on first use, so importing this package stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ember_opencl._inline import InlineKernel, InlineProgram, load_inline

__all__ = ["InlineKernel", "InlineProgram", "load_inline"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from ember_opencl import _inline

        return getattr(_inline, name)
    raise AttributeError(f"module 'ember_opencl' has no attribute {name!r}")
