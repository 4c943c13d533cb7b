"""Ember's device conformance kit, a pytest plugin: `pytest --pyargs ember.testing`.

It runs every op against NumPy float64, gradients against finite differences, the error
cases and, on asynchronous devices, the stream semantics, on each device chosen with
`--ember-device` (or EMBER_TEST_DEVICES), and reports per device what ran natively,
through composites, failed or is a known failure. See docs/plugins/testing-a-device.md.

A project's own device-generic tests share the kit's parametrization from a conftest.py:
``from ember.testing import pytest_generate_tests, rng``.
"""

from __future__ import annotations

from ._fixtures import pytest_generate_tests, rng
from ._ledger import Ledger, LedgerError, load_known_failures, parse_known_failures
from ._selection import asynchronous_devices_under_test, devices_under_test

__all__ = [
    "Ledger",
    "LedgerError",
    "asynchronous_devices_under_test",
    "devices_under_test",
    "load_known_failures",
    "parse_known_failures",
    "pytest_generate_tests",
    "rng",
]
