"""Op table and kernel registry: the part of dispatch that device plugins fill in.

Every op has a name, defined once here. A *primitive* must have a kernel on each device;
a *composite* is written once in ember ops and runs on any device that has the
primitives, unless the device registers a fused kernel that overrides it. Plugins register
kernels at load time; the result is frozen into one plain dict per op, so that dispatch
is a single dict lookup (`op.kernels[device.type]`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, NamedTuple

__all__ = [
    "OPS", "REGISTRY", "Coverage", "KernelRegistry", "Op", "define", "kernel_for", "missing_kernel",
]  # fmt: skip

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


class Coverage(NamedTuple):
    """How a device runs the defined ops: hand-written kernels, kernels rendered from the
    expression table, composites it inherits, and primitives it lacks."""

    native: list[str]
    rendered: list[str]
    composite: list[str]
    missing: list[str]


class KernelRegistry:
    """Collects kernels from plugins, then freezes them into each op's table.

    Registrations are staged per plugin so that a plugin failing halfway leaves nothing
    behind (`discard`).
    """

    def __init__(self) -> None:
        # (op, device type) -> (plugin, kernel); later plugins (entry-point name order)
        # override earlier ones.
        self._committed: dict[tuple[str, str], tuple[str, Kernel]] = {}
        self._staged: dict[tuple[str, str], Kernel] = {}
        # (op, device type) of kernels rendered from the expression table.
        self._rendered: set[tuple[str, str]] = set()
        self._staged_rendered: set[tuple[str, str]] = set()
        self._plugin = "<direct>"

    def begin(self, plugin: str) -> None:
        """Start staging the registrations of `plugin`."""
        self._staged.clear()
        self._staged_rendered.clear()
        self._plugin = plugin

    def register(
        self, op: str, device_type: str, kernel: Kernel, *, rendered: bool = False
    ) -> None:
        """Register `kernel` for `op` on `device_type` (a later registration overrides).

        `rendered` marks a kernel generated from the expression table
        (`ember.plugins.expressions`) rather than written by hand; `python -m ember info`
        counts them apart. Kernels of names never defined are listed by `orphans()`.
        """
        if not callable(kernel):
            raise TypeError(f"register: kernel for {op!r} on {device_type!r} is not callable")
        self._staged[op, device_type] = kernel
        if rendered:
            self._staged_rendered.add((op, device_type))
        else:
            self._staged_rendered.discard((op, device_type))

    def kernel(self, op: str, device_type: str) -> Callable[[Kernel], Kernel]:
        """Decorator form of `register`."""

        def decorate(fn: Kernel) -> Kernel:
            self.register(op, device_type, fn)
            return fn

        return decorate

    def commit(self) -> None:
        for key, kernel in self._staged.items():
            self._committed[key] = (self._plugin, kernel)
            if key in self._staged_rendered:
                self._rendered.add(key)
            else:
                self._rendered.discard(key)
        self._staged.clear()
        self._staged_rendered.clear()

    def remove_plugin(self, plugin: str) -> None:
        """Forget every kernel that `plugin` registered."""
        for key in [k for k, (owner, _) in self._committed.items() if owner == plugin]:
            del self._committed[key]
            self._rendered.discard(key)

    def discard(self) -> None:
        self._staged.clear()
        self._staged_rendered.clear()

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

    def coverage(self, device_type: str) -> Coverage:
        """How a device type runs each defined op (op names, sorted by definition)."""
        native: list[str] = []
        rendered: list[str] = []
        composite: list[str] = []
        missing: list[str] = []
        for op in OPS.values():
            key = (op.name, device_type)
            if key in self._rendered:
                rendered.append(op.name)
            elif key in self._committed:
                native.append(op.name)
            elif op.composite:
                composite.append(op.name)
            else:
                missing.append(op.name)
        return Coverage(native, rendered, composite, missing)


REGISTRY: Final = KernelRegistry()


def kernel_for(op: Op, device: Any, dtype: object) -> Kernel:
    """The kernel of `op` for `device`'s type, or NotImplementedError naming all three."""
    fn = op.kernels.get(device.type)
    if fn is None:
        raise missing_kernel(op, device, dtype)
    return fn
