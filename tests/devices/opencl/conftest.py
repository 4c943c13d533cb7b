"""The opencl device's own tests run only where the device is installed and available;
under `CI`, where the project installs PoCL, a missing device fails the run instead."""

from __future__ import annotations

import os

import pytest

import ember


def _unavailable() -> str | None:
    try:
        import pyopencl  # noqa: F401
    except ImportError as exc:
        return f"pyopencl is not installed ({exc})"
    if not ember.is_available("opencl"):
        return "no usable OpenCL device (see `python -m ember info`)"
    return None


_reason = _unavailable()
if _reason is not None:
    if os.environ.get("CI"):
        raise RuntimeError(f"CI requires the OpenCL device (PoCL): {_reason}")
    pytest.skip(_reason, allow_module_level=True)
