"""The kit's `device` parametrization, for the distributions tests that run per device."""

from __future__ import annotations

from ember.testing import pytest_generate_tests

__all__ = ["pytest_generate_tests"]
