"""Which devices the kit runs on: `--ember-device`, else EMBER_TEST_DEVICES, else all of them.

A name is a device type (`cpu`, every index of it) or a full `type:index` (`cpu:0` names the
unindexed cpu, whose tests are ids `[cpu]` as its tensors print); the option is
repeatable and comma-separated. A name that matches no available device is a usage error,
so a typo never turns into a run that silently tests nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Final

import pytest

import ember

ENV_VAR: Final = "EMBER_TEST_DEVICES"
OPTION: Final = "ember_device"

_SELECTED: Final = pytest.StashKey[list[str]]()


def requested_names(option_values: Iterable[str] | None, environ: str | None) -> list[str]:
    """The device names asked for: the option's values if any were given, else the variable's."""
    values = list(option_values or []) or [environ or ""]
    names = [name.strip().lower() for value in values for name in value.split(",")]
    return [name for name in names if name]


def select(names: list[str], available: list[str]) -> list[str]:
    """The available devices that `names` pick, in their order; all when `names` is empty."""
    if not names:
        return list(available)
    selected: list[str] = []
    for name in names:
        matches = [d for d in available if name in (d, d.split(":")[0]) or _names(name, d)]
        if not matches:
            raise pytest.UsageError(
                f"--ember-device / {ENV_VAR} names {name!r}, which is not available here "
                f"(available: {', '.join(available) or 'none'}; see `python -m ember info`)"
            )
        selected.extend(d for d in matches if d not in selected)
    return selected


def _names(name: str, available: str) -> bool:
    """Whether `name` ("cpu:0") is another name of the available device ("cpu")."""
    try:
        return str(ember.device(name).placement) == available
    except (RuntimeError, ValueError):
        return False


def available_devices() -> list[str]:
    """Every installed and available device, as its tensors print it ("cpu", "opencl:0")."""
    return [
        str(ember.device(t, i).placement)
        for t in ember.devices()
        for i in range(ember.device_count(t))
    ]


def devices_under_test(config: pytest.Config) -> list[str]:
    """The devices this run tests ("cpu", "opencl:0"), resolved once per run."""
    if _SELECTED not in config.stash:
        names = requested_names(config.getoption(OPTION, None), os.environ.get(ENV_VAR))
        config.stash[_SELECTED] = select(names, available_devices())
    return config.stash[_SELECTED]


def asynchronous_devices_under_test(config: pytest.Config) -> list[str]:
    """The devices under test whose work runs behind the host (`not backend.synchronous`)."""
    return [d for d in devices_under_test(config) if not ember.device(d).backend.synchronous]
