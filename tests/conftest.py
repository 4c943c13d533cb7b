"""Settings shared by every test folder: hypothesis profiles sized for a 2-core CI run, and
what CI requires to be installed."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# "ci" (the default) keeps the whole suite within a few minutes on two cores; "thorough"
# is for hunting bugs locally: HYPOTHESIS_PROFILE=thorough pytest tests/property
settings.register_profile(
    "ci", max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


#: the device types `make test` installs; under CI each must be available, so that the kit
#: and the device tests run on all of them instead of skipping the missing ones
EXPECTED_DEVICE_TYPES = ("cpu", "opencl")


def pytest_configure(config: object) -> None:
    """In CI the PyTorch parity tests and every expected device must run: a missing reference
    or device is an error, not a skip."""
    import importlib.util

    if not os.environ.get("CI"):
        return
    if importlib.util.find_spec("torch") is None:
        raise RuntimeError(
            "CI requires torch (the dev extra) for the parity tests; run `make test`, which "
            "installs it"
        )
    if importlib.util.find_spec("mpi4py") is None:
        raise RuntimeError(
            "CI requires mpi4py and MPICH (the dev extra) for the real MPI jobs of "
            "tests/distributed; run `make test`, which installs them"
        )
    import ember

    missing = [t for t in EXPECTED_DEVICE_TYPES if not ember.is_available(t)]
    if missing:
        raise RuntimeError(
            f"CI requires the device types {', '.join(missing)} (see `python -m ember info`); "
            "run `make test`, which installs them (PoCL for opencl)"
        )
