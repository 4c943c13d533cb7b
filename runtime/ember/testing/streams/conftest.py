"""Parametrization of the stream tests: the Stream/Event API runs on every device under test
(`device`), the stream semantics only on the asynchronous ones (`async_device`), where work
really runs behind the host; on a synchronous device there is nothing to observe.

Both receive `ember.device` objects, since the API promises identity (`stream.device is
device`). With no asynchronous device under test the semantics tests are skipped, with
the reason, rather than silently not collected.
"""

from __future__ import annotations

import pytest

import ember
from ember.testing import asynchronous_devices_under_test, devices_under_test


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    config = metafunc.config
    if "device" in metafunc.fixturenames:
        names = devices_under_test(config)
        metafunc.parametrize("device", [ember.device(n) for n in names], ids=names)
    if "async_device" in metafunc.fixturenames:
        names = asynchronous_devices_under_test(config)
        if names:
            metafunc.parametrize("async_device", [ember.device(n) for n in names], ids=names)
            return
        tested = ", ".join(devices_under_test(config)) or "none"
        reason = f"no asynchronous device under test (tested: {tested})"
        skipped = pytest.param(None, marks=pytest.mark.skip(reason=reason))
        metafunc.parametrize("async_device", [skipped], ids=["no-asynchronous-device"])
