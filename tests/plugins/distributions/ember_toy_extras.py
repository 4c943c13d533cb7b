"""Third-party kernels for a device type that another plugin (ember-toy) owns."""

from __future__ import annotations

from ember.plugins.sdk import ElementwisePlan, KernelRegistry, Storage, hookimpl


def neg(out: Storage, a: Storage, plan: ElementwisePlan) -> None:
    from ember_toy import view

    view(out, plan, 0)[...] = -view(a, plan, 1)


@hookimpl
def ember_kernels(registry: KernelRegistry) -> None:
    registry.register("neg", "toydev", neg)
