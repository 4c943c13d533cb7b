"""Settings shared by every test folder: hypothesis profiles sized for a 2-core CI run."""

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


def pytest_configure(config: object) -> None:
    """In CI the PyTorch parity tests must run: a missing reference is an error, not a skip."""
    import importlib.util

    if os.environ.get("CI") and importlib.util.find_spec("torch") is None:
        raise RuntimeError(
            "CI requires torch (the dev extra) for the parity tests; run `make test`, which "
            "installs it"
        )
