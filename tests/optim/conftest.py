"""Optimizer tests run on every available device (narrowed by EMBER_TEST_DEVICES)."""

from __future__ import annotations

import os

import pytest

import ember


def available_devices() -> list[str]:
    """Every available "type:index", or those EMBER_TEST_DEVICES names (types or full names)."""
    found = [f"{t}:{i}" for t in ember.devices() for i in range(ember.device_count(t))]
    wanted = [n.strip() for n in os.environ.get("EMBER_TEST_DEVICES", "").split(",") if n.strip()]
    if not wanted:
        return found
    return [d for d in found if d in wanted or d.split(":")[0] in wanted]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "device" in metafunc.fixturenames:
        devices = available_devices()
        metafunc.parametrize("device", devices, ids=devices)
