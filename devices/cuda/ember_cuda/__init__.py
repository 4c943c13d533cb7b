"""Ember's CUDA device: NVIDIA GPUs through CuPy's raw CUDA bindings and NVRTC.

Importing this package (and its plugin) imports nothing of CuPy. `load_inline` compiles
CUDA C++ to a cubin with NVRTC, which needs no GPU (see `ember_cuda._inline`); it is
imported on first use, so importing this package stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ember_cuda._inline import InlineKernel, InlineModule, load_inline

__all__ = ["InlineKernel", "InlineModule", "load_inline"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from ember_cuda import _inline

        return getattr(_inline, name)
    raise AttributeError(f"module 'ember_cuda' has no attribute {name!r}")
