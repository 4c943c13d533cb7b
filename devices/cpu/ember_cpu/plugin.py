"""pluggy entry point of ember-cpu (group `ember.plugins`, name `cpu`)."""

from __future__ import annotations

from ember.plugins.sdk import KernelRegistry, hookimpl
from ember_cpu import (
    kernels_conv,
    kernels_elementwise,
    kernels_index,
    kernels_lapack,
    kernels_linalg,
    kernels_random,
    kernels_reduce,
    kernels_softmax,
)
from ember_cpu.backend import CpuBackend


@hookimpl
def ember_devices() -> list[CpuBackend]:
    return [CpuBackend()]


@hookimpl
def ember_kernels(registry: KernelRegistry) -> None:
    kernels_elementwise.register(registry)
    kernels_random.register(registry)
    kernels_reduce.register(registry)
    kernels_linalg.register(registry)
    kernels_index.register(registry)
    kernels_conv.register(registry)
    kernels_softmax.register(registry)
    kernels_lapack.register(registry)
