"""Fixtures of the op conformance tests: each test that takes `device` runs once per device
under test (`--ember-device`, EMBER_TEST_DEVICES); a per-test random generator; a fake
second device."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import ember
from ember.testing import pytest_generate_tests, rng

from ._fakedev import FAKE_TYPE, FakeDevicePlugin

__all__ = ["fake_device", "pytest_generate_tests", "rng"]


@pytest.fixture
def fake_device() -> Iterator[str]:
    """A second device type, "fakedev", registered for the test and removed after it.

    It keeps memory in NumPy byte arrays and has only the `fill_` and `copy_` kernels, so
    CPU-only CI can prove that mixing devices and missing kernels raise clear errors.
    """
    name = "ember-testing-fakedev"
    status = ember.plugins.register(FakeDevicePlugin(), name=name)
    try:
        assert status.status == "loaded", status.error
        yield f"{FAKE_TYPE}:0"
    finally:
        ember.plugins.unregister(name)
