"""pluggy entry point of ember-opencl (group `ember.plugins`, name `opencl`).

Kernel families live in `kernels_*.py` modules, each with `register(registry)`; the ones
present are registered, so that families can land one at a time.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Final

from ember.plugins.sdk import KernelRegistry, hookimpl
from ember_opencl.backend import BACKEND, OpenCLBackend

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


@hookimpl
def ember_devices() -> list[OpenCLBackend]:
    return [BACKEND]


@hookimpl
def ember_kernels(registry: KernelRegistry) -> None:
    if BACKEND.unavailable_reason() is not None:
        return  # without pyopencl or a device there is nothing to run kernels on
    for family in FAMILIES:
        name = f"ember_opencl.kernels_{family}"
        if importlib.util.find_spec(name) is None:
            continue
        importlib.import_module(name).register(registry)
