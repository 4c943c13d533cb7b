"""What the kit knows about one of its collected tests: its device, its id relative to the
kit, the op it exercises and the ledger's reason for expecting it to fail."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import ember

from ._ledger import KIT_DIR, Ledger

#: the parameters through which a kit test receives its device
DEVICE_PARAMETERS: Final = ("device", "async_device")
#: user properties that carry an item's device and subject to the coverage report (they
#: travel with the test report, also from pytest-xdist workers)
DEVICE_PROPERTY: Final = "ember_testing_device"
SUBJECT_PROPERTY: Final = "ember_testing_subject"


def in_kit(path: Any, kit_dir: Path = KIT_DIR) -> bool:
    """Whether `path` (a test's file) belongs to the kit."""
    return Path(str(path)).resolve().is_relative_to(kit_dir)


def device_name(value: object) -> str | None:
    """A device parameter's value as its tensors print it (the kit passes names or devices)."""
    if isinstance(value, ember.device):
        return str(value.placement)
    return value if isinstance(value, str) else None


def item_device(item: Any) -> str | None:
    """The device that a kit test runs on, or None for a device-independent test."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    for name in DEVICE_PARAMETERS:
        if name in params:
            return device_name(params[name])
    return None


def kit_test_id(item: Any, device: str | None, kit_dir: Path = KIT_DIR) -> str:
    """The item's id relative to the kit's folder, without the device parameter."""
    relative = Path(str(item.path)).resolve().relative_to(kit_dir).as_posix()
    name = item.name
    if device is not None:
        for old, new in ((f"[{device}]", ""), (f"[{device}-", "["), (f"-{device}]", "]")):
            name = name.replace(old, new)
        name = name.replace(f"-{device}-", "-")
    return f"{relative}::{name}"


def subject(item: Any, kit_dir: Path = KIT_DIR) -> str:
    """What the coverage report files the item under: its `op` parameter, else its test."""
    op = getattr(getattr(item, "callspec", None), "params", {}).get("op")
    if isinstance(op, str):
        return op
    return kit_test_id(item, None, kit_dir).split("[", 1)[0]


def known_gap(item: Any, ledger: Ledger, kit_dir: Path = KIT_DIR) -> str:
    """The ledger's reason for `item` on its device, or ""."""
    device = item_device(item)
    if device is None:
        return ""
    entries = ledger.get(device.split(":")[0], {})
    if not entries:
        return ""
    test_id = kit_test_id(item, device, kit_dir)
    function_id = test_id.split("[", 1)[0]
    params = item.callspec.params
    op = params.get("op")
    dtypes = {v.name for v in params.values() if isinstance(v, ember.dtype)}
    for key, reason in entries.items():
        if isinstance(key, str):
            if key in (test_id, function_id):
                return reason
        elif op is not None and key[0] == op and (key[1] == "*" or key[1] in dtypes):
            return reason
    return ""
