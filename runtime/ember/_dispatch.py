"""Op table and kernel registry: the part of dispatch that device plugins fill in.

Every op has a name, defined once here. A *primitive* must have a kernel on each device;
a *composite* is written once in ember ops and runs on any device that has the
primitives, unless the device registers a fused kernel that overrides it. Plugins register
kernels at load time; the result is frozen into one plain dict per op, so that dispatch
is a single dict lookup (`op.kernels[device.type]`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

__all__ = ["OPS", "REGISTRY", "KernelRegistry", "Op", "define", "kernel_for", "missing_kernel"]

Kernel = Callable[..., Any]


class Op:
    """One operation: its name, its kernels per device type, and its composite if any."""

    __slots__ = ("composite", "kernels", "name")

    def __init__(self, name: str, composite: bool) -> None:
        self.name: Final = name
        self.composite: Final = composite
        # device type -> kernel; rebuilt by `KernelRegistry.freeze`, read on every call.
        self.kernels: dict[str, Kernel] = {}

    def __repr__(self) -> str:
        kind = "composite" if self.composite else "primitive"
        return f"<ember op {self.name} ({kind}) on {sorted(self.kernels)}>"


OPS: dict[str, Op] = {}


def define(name: str, *, composite: bool = False) -> Op:
    """Declare an op; names are unique."""
    if name in OPS:
        raise ValueError(f"op {name!r} is already defined")
    op = Op(name, composite)
    OPS[name] = op
    REGISTRY.attach(op)
    return op


def missing_kernel(op: Op, device: object, dtype: object) -> NotImplementedError:
    """The error for an op with no kernel on a device."""
    have = sorted(op.kernels) or ["no device"]
    return NotImplementedError(
        f"{op.name}: no kernel for device {device} (dtype {dtype}); "
        f"it is implemented on {', '.join(have)}"
    )


class KernelRegistry:
    """Collects kernels from plugins, then freezes them into each op's table.

    Registrations are staged per plugin so that a plugin failing halfway leaves nothing
    behind (`discard`).
    """

    def __init__(self) -> None:
        # (op, device type) -> (plugin, kernel); later plugins override earlier ones.
        self._committed: dict[tuple[str, str], tuple[str, Kernel]] = {}
        self._staged: dict[tuple[str, str], Kernel] = {}
        self._plugin = "<direct>"

    def begin(self, plugin: str) -> None:
        """Start staging the registrations of `plugin`."""
        self._staged.clear()
        self._plugin = plugin

    def register(self, op: str, device_type: str, kernel: Kernel) -> None:
        """Register `kernel` for `op` on `device_type` (a later registration overrides).

        The op may be defined after its kernels are registered (ops of a module imported
        later, such as ember.nn.functional): `define` picks the kernels up then. Kernels of
        names never defined are listed by `orphans()` and `python -m ember info`.
        """
        if not callable(kernel):
            raise TypeError(f"register: kernel for {op!r} on {device_type!r} is not callable")
        self._staged[op, device_type] = kernel

    def kernel(self, op: str, device_type: str) -> Callable[[Kernel], Kernel]:
        """Decorator form of `register`."""

        def decorate(fn: Kernel) -> Kernel:
            self.register(op, device_type, fn)
            return fn

        return decorate

    def commit(self) -> None:
        for key, kernel in self._staged.items():
            self._committed[key] = (self._plugin, kernel)
        self._staged.clear()

    def remove_plugin(self, plugin: str) -> None:
        """Forget every kernel that `plugin` registered."""
        for key in [k for k, (owner, _) in self._committed.items() if owner == plugin]:
            del self._committed[key]

    def discard(self) -> None:
        self._staged.clear()

    def freeze(self) -> None:
        """Publish committed kernels into every op's dispatch table."""
        for op in OPS.values():
            op.kernels = {}
        for (name, device_type), (_, kernel) in self._committed.items():
            defined = OPS.get(name)
            if defined is not None:
                defined.kernels[device_type] = kernel

    def attach(self, op: Op) -> None:
        """Give a newly defined op the kernels already registered under its name."""
        for (name, device_type), (_, kernel) in self._committed.items():
            if name == op.name:
                op.kernels[device_type] = kernel

    def orphans(self) -> list[tuple[str, str, str]]:
        """(op, device type, plugin) of kernels registered for ops nobody defined."""
        return sorted(
            (name, device_type, plugin)
            for (name, device_type), (plugin, _) in self._committed.items()
            if name not in OPS
        )

    def implemented(self, device_type: str) -> tuple[list[str], list[str], list[str]]:
        """(native kernels, composites it inherits, primitives it lacks) for a device type."""
        native, inherited, missing = [], [], []
        for op in OPS.values():
            if (op.name, device_type) in self._committed:
                native.append(op.name)
            elif op.composite:
                inherited.append(op.name)
            else:
                missing.append(op.name)
        return native, inherited, missing


REGISTRY: Final = KernelRegistry()


def kernel_for(op: Op, device: Any, dtype: object) -> Kernel:
    """The kernel of `op` for `device`'s type, or NotImplementedError naming all three."""
    fn = op.kernels.get(device.type)
    if fn is None:
        raise missing_kernel(op, device, dtype)
    return fn
