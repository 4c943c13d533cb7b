"""Fixtures of the stream-semantics tests: the asynchronous device they need, and helpers.

The semantics can only be shown on a device that really runs behind the host: OpenCL
(PoCL on a CPU-only machine). Without it the tests skip with the reason, except under
`CI`, where the project installs PoCL: there a missing OpenCL device fails the tests.
"""

from __future__ import annotations

import os

import pytest

import ember


def _opencl_reason() -> str | None:
    """None when opencl:0 is usable, else why not."""
    if ember.is_available("opencl"):
        return None
    try:
        dev = ember.device("opencl")
    except RuntimeError as error:  # the plugin is not installed
        return str(error)
    reason = dev.backend.unavailable_reason()
    return f"opencl is unavailable: {reason or 'no device'}"


@pytest.fixture(scope="session")
def opencl() -> ember.device:
    """The asynchronous device under test (opencl:0)."""
    reason = _opencl_reason()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI requires an OpenCL device (PoCL) for the stream tests: {reason}")
        pytest.skip(reason)
    return ember.device("opencl:0")


@pytest.fixture(params=["cpu", "opencl"])
def device(request: pytest.FixtureRequest) -> ember.device:
    """Each device type the generic API tests run on."""
    if request.param == "opencl":
        dev: ember.device = request.getfixturevalue("opencl")
        return dev
    return ember.device("cpu")
