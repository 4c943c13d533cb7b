"""The device conformance suite's fixtures: devices under test, the known-failure ledger,
a per-test random generator and a fake second device.

Every test that takes a `device` argument runs once per available device ("type:index").
`EMBER_TEST_DEVICES` (a comma-separated list of types or "type:index" names) restricts
the run, so a third-party device runs this same suite against itself, unchanged.
"""

from __future__ import annotations

import importlib
import os
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import ember

from . import known_failures
from ._fakedev import FAKE_TYPE, FakeDevicePlugin

HERE = Path(__file__).resolve().parent
_devices: list[str] | None = None


def devices_under_test() -> list[str]:
    """The available devices, narrowed by EMBER_TEST_DEVICES (a typo is an error)."""
    global _devices
    if _devices is not None:
        return _devices
    available = [f"{t}:{i}" for t in ember.devices() for i in range(ember.device_count(t))]
    wanted = os.environ.get("EMBER_TEST_DEVICES", "")
    names = [name.strip().lower() for name in wanted.split(",") if name.strip()]
    if not names:
        _devices = available
        return _devices
    selected: list[str] = []
    for name in names:
        matches = [d for d in available if name in (d, d.split(":")[0])]
        if not matches:
            raise pytest.UsageError(
                f"EMBER_TEST_DEVICES names {name!r}, which is not available here "
                f"(available: {', '.join(available) or 'none'}; see `python -m ember info`)"
            )
        selected.extend(d for d in matches if d not in selected)
    _devices = selected
    return _devices


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "device" in metafunc.fixturenames:
        devices = devices_under_test()
        metafunc.parametrize("device", devices, ids=devices)


# -- the known-failure ledger -------------------------------------------------------------


def _ledger() -> dict[str, dict[known_failures.LedgerKey, str]]:
    merged = {kind: dict(entries) for kind, entries in known_failures.KNOWN_FAILURES.items()}
    extra = os.environ.get("EMBER_KNOWN_FAILURES")
    if extra:
        module = importlib.import_module(extra)
        for kind, entries in module.KNOWN_FAILURES.items():
            merged.setdefault(kind, {}).update(entries)
    return merged


def _test_id(item: pytest.Item, device: str) -> str:
    """The item's id relative to this folder, without the device parameter."""
    relative = Path(str(item.path)).resolve().relative_to(HERE).as_posix()
    name = item.name
    for old, new in ((f"[{device}]", ""), (f"[{device}-", "["), (f"-{device}]", "]")):
        name = name.replace(old, new)
    name = name.replace(f"-{device}-", "-")
    return f"{relative}::{name}"


def known_gap(item: pytest.Item, ledger: dict[str, dict[known_failures.LedgerKey, str]]) -> str:
    """The ledger's reason for `item` on its device, or ""."""
    callspec = getattr(item, "callspec", None)
    if callspec is None or "device" not in callspec.params:
        return ""
    device = callspec.params["device"]
    entries = ledger.get(device.split(":")[0], {})
    if not entries:
        return ""
    test_id = _test_id(item, device)
    function_id = test_id.split("[", 1)[0]
    op = callspec.params.get("op")
    dtypes = {v.name for v in callspec.params.values() if isinstance(v, ember.dtype)}
    for key, reason in entries.items():
        if isinstance(key, str):
            if key in (test_id, function_id):
                return reason
        elif op is not None and key[0] == op and (key[1] == "*" or key[1] in dtypes):
            return reason
    return ""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ledger = _ledger()
    for item in items:
        if not Path(str(item.path)).resolve().is_relative_to(HERE):
            continue
        reason = known_gap(item, ledger)
        if reason:
            item.add_marker(pytest.mark.xfail(strict=True, reason=f"known gap: {reason}"))


# -- fixtures -------------------------------------------------------------------------------


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    """A generator seeded from the test id: data differ between tests, never between runs."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


@pytest.fixture
def fake_device() -> Iterator[str]:
    """A second device type, "fakedev", registered for the test and removed after it.

    It keeps memory in NumPy byte arrays and has only the `fill_` and `copy_` kernels, so
    CPU-only CI can prove that mixing devices and missing kernels raise clear errors.
    """
    name = "conformance-fakedev"
    status = ember.plugins.register(FakeDevicePlugin(), name=name)
    try:
        assert status.status == "loaded", status.error
        yield f"{FAKE_TYPE}:0"
    finally:
        ember.plugins.unregister(name)
