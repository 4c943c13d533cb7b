"""Optimizer tests run on every device under test (the kit's `device` parametrization)."""

from __future__ import annotations

from ember.testing import pytest_generate_tests

__all__ = ["pytest_generate_tests"]
