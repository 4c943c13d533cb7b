"""The kit's `device` parametrization and `rng` fixture, for the nn tests."""

from __future__ import annotations

from ember.testing import pytest_generate_tests, rng

__all__ = ["pytest_generate_tests", "rng"]
