"""pluggy entry point of ember-cuda (group `ember.plugins`, name `cuda`).

The device type is always reported, available or not, with the probe's reason
(`python -m ember info`, `ember.plugins.status()`). Kernels register only where the device
is available, and only families proven on a GPU: none yet. The elementwise programs are
rendered and compiled in CI (kernels_elementwise, tests/devices/cuda), but their launch
path has not run on a GPU, so registering them would claim what nobody has checked.
"""

from __future__ import annotations

import importlib
from typing import Final

from ember.plugins.sdk import CollectiveBackend, KernelRegistry, hookimpl
from ember_cuda.backend import BACKEND, CudaBackend
from ember_cuda.collectives import BACKEND_NCCL

#: Kernel families (modules `ember_cuda.kernels_<family>` with `register(registry)`) that
#: have run on a GPU; a family joins once the GPU session has proven it.
FAMILIES: Final[tuple[str, ...]] = ()


@hookimpl
def ember_devices() -> list[CudaBackend]:
    return [BACKEND]


@hookimpl
def ember_collective_backends() -> list[CollectiveBackend]:
    """NCCL for ember.distributed; it reports itself unavailable without a GPU."""
    return [BACKEND_NCCL]


@hookimpl
def ember_kernels(registry: KernelRegistry) -> None:
    if BACKEND.unavailable_reason() is not None:
        return  # without CuPy, a driver or a GPU there is nothing to run kernels on
    for family in FAMILIES:
        importlib.import_module(f"ember_cuda.kernels_{family}").register(registry)
