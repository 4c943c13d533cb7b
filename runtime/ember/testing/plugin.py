"""The kit's pytest plugin (pytest11 entry point `ember.testing.plugin`).

Loaded by every pytest run where ember is installed, so it stays inert: it adds the kit's
options and, only when kit tests ran, prints the coverage report. Everything else the kit
does lives in its conftest.py files, which pytest loads only when it collects the kit.
"""

from __future__ import annotations

from typing import Final

import pytest

from ._coverage import CoverageRecorder

PLUGIN_NAME: Final = "ember.testing.plugin"
KNOWN_FAILURES_OPTION: Final = "ember_known_failures"
KNOWN_FAILURES_ENV_VAR: Final = "EMBER_KNOWN_FAILURES"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ember", "ember.testing (the device conformance kit)")
    group.addoption(
        "--ember-device",
        action="append",
        dest="ember_device",
        metavar="NAME",
        help="run the kit on this device: a type (cpu) or type:index; repeatable or "
        "comma-separated (default: EMBER_TEST_DEVICES, else every available device)",
    )
    group.addoption(
        "--ember-known-failures",
        action="append",
        dest=KNOWN_FAILURES_OPTION,
        metavar="PATH",
        help="a known-failures TOML file to apply, besides those the device plugins declare; "
        "repeatable (also EMBER_KNOWN_FAILURES, os.pathsep-separated)",
    )


def pytest_configure(config: pytest.Config) -> None:
    # pytest-xdist workers report to the controller, which prints the summary.
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(CoverageRecorder(), "ember-testing-coverage")
