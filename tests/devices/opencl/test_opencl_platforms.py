"""Choosing OpenCL platforms and devices: `opencl:N` across platforms, EMBER_OPENCL_PLATFORM."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pyopencl as cl
import pytest

from ember_opencl.backend import OpenCLBackend, select_devices


class FakePlatform:
    def __init__(self, name: str, devices: list[str] | None) -> None:
        self.name = name
        self._devices = devices

    def get_devices(self) -> list[str]:
        if self._devices is None:
            raise cl.Error("DEVICE_NOT_FOUND")  # what a platform without devices does
        return self._devices


PLATFORMS = [
    FakePlatform("NVIDIA CUDA", ["gpu0", "gpu1"]),
    FakePlatform("Empty Vendor", None),
    FakePlatform("Portable Computing Language", ["cpu0"]),
]


def test_all_platforms_in_order() -> None:
    assert select_devices(PLATFORMS, None) == ["gpu0", "gpu1", "cpu0"]
    assert select_devices(PLATFORMS, "") == ["gpu0", "gpu1", "cpu0"]


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("0", ["gpu0", "gpu1"]),
        ("2", ["cpu0"]),
        ("portable", ["cpu0"]),
        (" CUDA ", ["gpu0", "gpu1"]),
    ],
)
def test_platform_choice(choice: str, expected: list[str]) -> None:
    assert select_devices(PLATFORMS, choice) == expected


@pytest.mark.parametrize(("choice", "message"), [("7", "only 3"), ("rocm", "matches no")])
def test_bad_platform_choice_names_the_variable(choice: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as error:
        select_devices(PLATFORMS, choice)
    assert "EMBER_OPENCL_PLATFORM" in str(error.value)


def test_no_platform_is_unavailable_with_a_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_platforms() -> list[Any]:
        raise cl.LogicError("clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR")

    monkeypatch.setattr(cl, "get_platforms", no_platforms)
    backend = OpenCLBackend()
    assert backend.device_count() == 0
    reason = backend.unavailable_reason()
    assert reason is not None and "no OpenCL" in reason


def _count_in_subprocess(choice: str) -> str:
    env = {**os.environ, "EMBER_OPENCL_PLATFORM": choice}
    code = (
        "import ember, ember.plugins as p; p.MANAGER.ensure_loaded(); "
        "info = p.MANAGER.device_types['opencl']; print(info.count, info.reason)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_environment_variable_pins_a_platform() -> None:
    name = cl.get_platforms()[0].name
    expected = len(cl.get_platforms()[0].get_devices())
    assert _count_in_subprocess(name[:8].upper()) == f"{expected} None"
    assert _count_in_subprocess("0") == f"{expected} None"
    missing = _count_in_subprocess("no-such-platform")
    assert missing.startswith("0 ") and "EMBER_OPENCL_PLATFORM" in missing
