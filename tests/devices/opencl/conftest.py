"""The opencl device's own tests run only where the device is installed and available."""

from __future__ import annotations

import pytest

import ember

pytest.importorskip("pyopencl")
if not ember.is_available("opencl"):
    pytest.skip("no usable OpenCL device (see `python -m ember info`)", allow_module_level=True)
