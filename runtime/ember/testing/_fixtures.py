"""The fixtures and parametrization the kit shares with the project's device-generic tests."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from ._items import in_kit, kit_test_id
from ._selection import devices_under_test


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run every test that takes `device` once per device under test ("cpu", "opencl:0")."""
    if "device" in metafunc.fixturenames:
        devices = devices_under_test(metafunc.config)
        metafunc.parametrize("device", devices, ids=devices)


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    """A generator seeded from the test id: data differ between tests, never between runs.

    A kit test is seeded from its id relative to the kit, so its data do not depend on
    where ember is installed or which folder pytest was started from.
    """
    node = request.node
    test_id = kit_test_id(node, None) if in_kit(node.path) else node.nodeid
    return np.random.default_rng(zlib.crc32(test_id.encode()))
