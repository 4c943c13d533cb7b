"""The kit's own hooks, active only once pytest collects the kit: the known-failure marks and
the per-test properties that the coverage report (in `plugin.py`) adds up."""

from __future__ import annotations

import os

import pytest

import ember

from ._items import DEVICE_PROPERTY, SUBJECT_PROPERTY, in_kit, item_device, known_gap, subject
from ._ledger import OWN_LEDGER, Ledger, LedgerError, load_known_failures, merge
from ._selection import devices_under_test
from .plugin import KNOWN_FAILURES_ENV_VAR, KNOWN_FAILURES_OPTION, PLUGIN_NAME


def pytest_configure(config: pytest.Config) -> None:
    # Without the plugin `--ember-device` does not exist and no coverage report is printed.
    if not config.pluginmanager.has_plugin(PLUGIN_NAME):
        raise pytest.UsageError(
            f"the ember.testing kit needs its pytest plugin: install ember (its pytest11 "
            f"entry point) or run pytest with `-p {PLUGIN_NAME}`"
        )


def known_failure_files(config: pytest.Config) -> list[str]:
    """Ember's own ledger, each device plugin's, then those named by the option or variable."""
    paths = [str(OWN_LEDGER)]
    for device in devices_under_test(config):
        declared = ember.device(device).backend.known_failures_file
        if declared:
            paths.append(declared)
    paths.extend(config.getoption(KNOWN_FAILURES_OPTION, None) or [])
    paths.extend(p for p in os.environ.get(KNOWN_FAILURES_ENV_VAR, "").split(os.pathsep) if p)
    return list(dict.fromkeys(paths))


def run_ledger(config: pytest.Config) -> Ledger:
    """Every known failure of this run."""
    try:
        return merge(load_known_failures(path) for path in known_failure_files(config))
    except LedgerError as error:
        raise pytest.UsageError(str(error)) from error


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kit_items = [item for item in items if in_kit(item.path)]
    if not kit_items:
        return
    ledger = run_ledger(config)
    for item in kit_items:
        device = item_device(item)
        if device is None:
            continue
        item.user_properties.append((DEVICE_PROPERTY, device))
        item.user_properties.append((SUBJECT_PROPERTY, subject(item)))
        reason = known_gap(item, ledger)
        if reason:
            item.add_marker(pytest.mark.xfail(strict=True, reason=f"known gap: {reason}"))
