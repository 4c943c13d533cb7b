"""The entry point Ember loads (`ember.plugins` group, name "fused"): it defines the fused
ops and registers their kernels through the same hook every kernel plugin uses."""

from __future__ import annotations

from ember.plugins import hookimpl
from ember.plugins.sdk import KernelRegistry


@hookimpl
def ember_kernels(registry: KernelRegistry) -> None:
    # Imported here, not at the top: loading the plugin is what defines the ops, and
    # importing ember_fused on its own changes nothing.
    from ember_fused import (
        _cpu,
        _cpu_attention,
        _cpu_foreach,
        _cpu_optim,
        _cpu_training,
        _opencl,
    )

    for device_type, kernels in (("cpu", _cpu.KERNELS), ("opencl", _opencl.KERNELS)):
        for op, kernel, priority in kernels:
            registry.register(op, device_type, kernel, priority=priority)
    # The training composites Ember lets a plugin fuse (layer norm, GELU's derivative,
    # attention, cross-entropy, Adam's multi-tensor step, clip_grad_norm_'s multi-tensor
    # norm and scale), by their SDK names; opencl and the other devices run the composites.
    for op, kernel, priority in (
        *_cpu_training.KERNELS,
        *_cpu_attention.KERNELS,
        *_cpu_optim.KERNELS,
        *_cpu_foreach.KERNELS,
    ):
        registry.register(op, "cpu", kernel, priority=priority)
