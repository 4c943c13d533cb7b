"""Op table and kernel registry: the part of dispatch that device plugins fill in.

Every op has a name, defined once here. A *primitive* must have a kernel on each device;
a *composite* is written once in ember ops and runs on any device that has the
primitives, unless the device registers a fused kernel that overrides it. Plugins register
kernels at load time; the result is frozen into one plain dict per op, so that dispatch
is a single dict lookup (`op.kernels[device.type]`).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from typing import Any, Final, NamedTuple

__all__ = [
    "OPS", "REGISTRY", "Conflict", "Coverage", "Entry", "KernelConflictWarning", "KernelRegistry",
    "Op", "define", "describe_conflict", "kernel_for", "missing_kernel",
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


class Entry(NamedTuple):
    """One registration of a kernel for (op, device type)."""

    op: str
    device_type: str
    plugin: str  # the plugin (entry-point name) or library registrant that supplied it
    kernel: Kernel
    priority: int
    sequence: int  # registration order, the tie-breaker after priority
    rendered: bool  # generated from the expression table rather than written by hand


class Conflict(NamedTuple):
    """Kernels of several plugins for one (op, device type) at one priority: the latest
    registration wins, and the others are named so that nothing is overridden silently."""

    op: str
    device_type: str
    winner: Entry
    others: tuple[Entry, ...]


class KernelConflictWarning(UserWarning):
    """Two plugins registered a kernel for one op and device at the same priority."""


class KernelRegistry:
    """Collects kernels from plugins and `ember.library`, then freezes them into each op's
    table.

    Every (op, device type) keeps all its registrations; the one in use has the highest
    `priority`, then the latest registration. Plugin registrations are staged per plugin
    so that a plugin failing halfway leaves nothing behind (`discard`).
    """

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], list[Entry]] = {}
        self._staged: dict[tuple[str, str], tuple[Kernel, int, bool]] = {}
        self._plugin = "<direct>"
        self._sequence = itertools.count()
        self._warned: set[tuple[str, str, tuple[str, ...]]] = set()

    def begin(self, plugin: str) -> None:
        """Start staging the registrations of `plugin`."""
        self._staged.clear()
        self._plugin = plugin

    def register(
        self,
        op: str,
        device_type: str,
        kernel: Kernel,
        *,
        rendered: bool = False,
        priority: int = 0,
    ) -> None:
        """Register `kernel` for `op` on `device_type` (within one plugin, the later call
        replaces the earlier).

        Among plugins, the kernel with the highest `priority` is used, then the one
        registered last; two plugins at one priority are a conflict, reported once.
        `rendered` marks a kernel generated from the expression table
        (`ember.plugins.expressions`) rather than written by hand; `python -m ember info`
        counts them apart. Kernels of names never defined are listed by `orphans()`.
        """
        if not callable(kernel):
            raise TypeError(f"register: kernel for {op!r} on {device_type!r} is not callable")
        self._staged[op, device_type] = (kernel, priority, rendered)

    def kernel(self, op: str, device_type: str) -> Callable[[Kernel], Kernel]:
        """Decorator form of `register`."""

        def decorate(fn: Kernel) -> Kernel:
            self.register(op, device_type, fn)
            return fn

        return decorate

    def commit(self) -> None:
        for (op, device_type), (kernel, priority, rendered) in self._staged.items():
            self.add(op, device_type, kernel, self._plugin, priority=priority, rendered=rendered)
        self._staged.clear()

    def add(
        self,
        op: str,
        device_type: str,
        kernel: Kernel,
        plugin: str,
        *,
        priority: int = 0,
        rendered: bool = False,
    ) -> Entry:
        """Add one registration now, above the earlier ones of its priority (the caller
        freezes); removing it brings the previous one back."""
        entry = Entry(op, device_type, plugin, kernel, priority, next(self._sequence), rendered)
        self._entries.setdefault((op, device_type), []).append(entry)
        return entry

    def remove(self, entry: Entry) -> bool:
        """Take one registration back (the caller freezes); False if it was gone already."""
        entries = self._entries.get((entry.op, entry.device_type), [])
        if entry not in entries:
            return False
        entries.remove(entry)
        if not entries:
            del self._entries[entry.op, entry.device_type]
        return True

    def remove_plugin(self, plugin: str) -> None:
        """Forget every kernel that `plugin` registered."""
        for key, entries in list(self._entries.items()):
            entries[:] = [e for e in entries if e.plugin != plugin]
            if not entries:
                del self._entries[key]

    def discard(self) -> None:
        self._staged.clear()

    def entries(self, op: str, device_type: str) -> list[Entry]:
        """The registrations for (op, device type), the one in use first."""
        return sorted(
            self._entries.get((op, device_type), ()),
            key=lambda e: (e.priority, e.sequence),
            reverse=True,
        )

    def _winner(self, key: tuple[str, str]) -> Entry:
        return max(self._entries[key], key=lambda e: (e.priority, e.sequence))

    def freeze(self) -> None:
        """Publish the registration in use for every key into its op's dispatch table, and
        warn once about each new conflict."""
        tables: dict[str, dict[str, Kernel]] = {name: {} for name in OPS}
        for key in self._entries:
            table = tables.get(key[0])
            if table is not None:
                table[key[1]] = self._winner(key).kernel
        for name, op in OPS.items():
            op.kernels = tables[name]
        for conflict in self.conflicts():
            plugins = tuple(e.plugin for e in (conflict.winner, *conflict.others))
            marker = (conflict.op, conflict.device_type, plugins)
            if marker not in self._warned:
                self._warned.add(marker)
                warnings.warn(describe_conflict(conflict), KernelConflictWarning, stacklevel=2)

    def conflicts(self) -> list[Conflict]:
        """Every (op, device type) where plugins tie at the priority in use."""
        found = []
        for key in sorted(self._entries):
            winner = self._winner(key)
            others = tuple(
                e
                for e in self.entries(*key)[1:]
                if e.priority == winner.priority and e.plugin != winner.plugin
            )
            if others:
                found.append(Conflict(key[0], key[1], winner, others))
        return found

    def attach(self, op: Op) -> None:
        """Give a newly defined op the kernels already registered under its name."""
        for key in self._entries:
            if key[0] == op.name:
                op.kernels[key[1]] = self._winner(key).kernel

    def orphans(self) -> list[tuple[str, str, str]]:
        """(op, device type, plugin) of kernels registered for ops nobody defined."""
        return sorted(
            (name, device_type, self._winner((name, device_type)).plugin)
            for name, device_type in self._entries
            if name not in OPS
        )

    def coverage(self, device_type: str) -> Coverage:
        """How a device type runs each defined op (op names, sorted by definition).

        Custom ops (qualified names, "mylib::op") that a device has no kernel for are not
        counted: no device is expected to implement them."""
        native: list[str] = []
        rendered: list[str] = []
        composite: list[str] = []
        missing: list[str] = []
        for op in OPS.values():
            key = (op.name, device_type)
            if key in self._entries:
                (rendered if self._winner(key).rendered else native).append(op.name)
            elif "::" in op.name:
                continue
            elif op.composite:
                composite.append(op.name)
            else:
                missing.append(op.name)
        return Coverage(native, rendered, composite, missing)


def describe_conflict(conflict: Conflict) -> str:
    others = ", ".join(f"{e.plugin} ({_qualname(e.kernel)})" for e in conflict.others)
    return (
        f"{conflict.op} on {conflict.device_type}: {conflict.winner.plugin} "
        f"({_qualname(conflict.winner.kernel)}) overrides {others} at priority "
        f"{conflict.winner.priority}; pass priority= to make the choice explicit"
    )


def _qualname(fn: Kernel) -> str:
    module = getattr(fn, "__module__", None) or "?"
    return f"{module}.{getattr(fn, '__qualname__', type(fn).__name__)}"


REGISTRY: Final = KernelRegistry()


def kernel_for(op: Op, device: Any, dtype: object) -> Kernel:
    """The kernel of `op` for `device`'s type, or NotImplementedError naming all three."""
    fn = op.kernels.get(device.type)
    if fn is None:
        raise missing_kernel(op, device, dtype)
    return fn
