"""pluggy entry point of ember-opencl (group `ember.plugins`, name `opencl`).

Kernel families live in `kernels_*.py` modules, each with `register(registry)`; the ones
present are registered, so that families can land one at a time.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Final

from ember._dispatch import KernelRegistry
from ember.plugins import hookimpl
from ember_opencl.backend import OpenCLBackend

FAMILIES: Final = (
    "elementwise",
    "reduce",
    "softmax",
    "linalg",
    "conv",
    "pool",
    "index",
    "random",
)

_BACKEND: Final = OpenCLBackend()


@hookimpl
def ember_devices() -> list[OpenCLBackend]:
    return [_BACKEND]


@hookimpl
def ember_kernels(registry: KernelRegistry) -> None:
    if _BACKEND.unavailable_reason() is not None:
        return  # without pyopencl or a device there is nothing to run kernels on
    for family in FAMILIES:
        name = f"ember_opencl.kernels_{family}"
        if importlib.util.find_spec(name) is None:
            continue
        importlib.import_module(name).register(registry)
