"""`explain`: which kernel an op runs on a device, who supplied it, and what it overrode."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ember._device import device as Device
from ember._dispatch import OPS, REGISTRY, Entry, describe_conflict
from ember.library._call import CUSTOM_OPS, CustomOp
from ember.library._kernels import registrant, resolve
from ember.plugins._manager import MANAGER

__all__ = ["Explanation", "Supplier", "explain", "table"]


@dataclass(frozen=True)
class Supplier:
    plugin: str  # entry-point name, or the top-level package of a library registration
    function: str  # module.qualname
    priority: int

    def __str__(self) -> str:
        return f"{self.function} from {self.plugin} (priority {self.priority})"


@dataclass(frozen=True)
class Explanation:
    """What `op` runs on `device_type`.

    kind: "native" (a hand-written kernel), "rendered" (generated from the expression
    table), "composite" (written in ember ops, or a custom op's default implementation)
    or "missing". `overrides`: the other registrations, next in precedence first;
    `replaces_composite`: the kernel runs instead of the op's composite.
    """

    op: str
    device_type: str
    kind: str
    supplier: Supplier | None
    overrides: tuple[Supplier, ...]
    conflict: str | None  # the tie at the priority in use, if there is one
    replaces_composite: bool = False

    def __str__(self) -> str:
        lines = [f"{self.op} on {self.device_type}: {self.kind}"]
        if self.supplier is not None:
            lines.append(f"  kernel: {self.supplier}")
        for other in self.overrides:
            lines.append(f"  overrides: {other}")
        if self.replaces_composite:
            lines.append("  replaces: the composite (the op written in ember ops)")
        if self.conflict is not None:
            lines.append(f"  conflict: {self.conflict}")
        return "\n".join(lines)


def _function(fn: Any) -> str:
    fn = getattr(fn, "__wrapped__", fn)
    module = getattr(fn, "__module__", None) or "?"
    return f"{module}.{getattr(fn, '__qualname__', type(fn).__name__)}"


def _supplier(entry: Entry) -> Supplier:
    return Supplier(entry.plugin, _function(entry.kernel), entry.priority)


def explain(op: str | CustomOp, device: str | Device) -> Explanation:
    """Which plugin and function supply `op`'s kernel on `device` (a device or its type)."""
    name = resolve(op)
    MANAGER.ensure_loaded()
    device_type = device.type if isinstance(device, Device) else str(device).partition(":")[0]
    entries = REGISTRY.entries(name, device_type)
    conflict = next(
        (c for c in REGISTRY.conflicts() if (c.op, c.device_type) == (name, device_type)), None
    )
    described = None if conflict is None else describe_conflict(conflict)
    if entries:
        kind = "rendered" if entries[0].rendered else "native"
        overrides = tuple(_supplier(e) for e in entries[1:])
        replaces = OPS[name].composite and name not in CUSTOM_OPS
        return Explanation(
            name, device_type, kind, _supplier(entries[0]), overrides, described, replaces
        )
    custom = CUSTOM_OPS.get(name)
    if custom is not None and custom._default is not None:
        default = Supplier(registrant(custom._default), _function(custom._default), 0)
        return Explanation(name, device_type, "composite", default, (), None)
    kind = "composite" if OPS[name].composite else "missing"
    return Explanation(name, device_type, kind, None, (), None)


def table() -> list[Explanation]:
    """`explain` for every op on every loaded device type (`python -m ember info --ops`)."""
    MANAGER.ensure_loaded()
    return [explain(name, device_type) for name in OPS for device_type in MANAGER.device_types]
