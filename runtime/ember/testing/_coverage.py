"""The coverage report printed after a kit run: per device, the ops it runs through its own
kernels, those it runs through composites, the primitives it lacks, and which ops' tests
failed or are known failures."""

from __future__ import annotations

import textwrap
from collections import Counter
from dataclasses import dataclass, field
from typing import Final

import pytest

import ember
from ember._dispatch import REGISTRY

from ._items import DEVICE_PROPERTY, SUBJECT_PROPERTY

#: the order in which one test's reports overrule each other (a failed teardown after a
#: passed call still fails the test)
_RANK: Final = {"passed": 0, "skipped": 1, "known failure": 2, "failed": 3}
_LABEL: Final = {
    "passed": "passed",
    "skipped": "skipped",
    "known failure": "known failures",
    "failed": "failed",
}


@dataclass
class DeviceCoverage:
    """What one device's kit tests came to."""

    outcomes: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    known: Counter[str] = field(default_factory=Counter)


def outcome(report: pytest.TestReport) -> str:
    """One of _RANK's outcomes for a single setup, call or teardown report."""
    if hasattr(report, "wasxfail"):
        return "known failure" if report.skipped else "failed"  # a strict XPASS fails
    return report.outcome


class CoverageRecorder:
    """Collects the outcome of every kit test from its reports and prints the summary."""

    def __init__(self) -> None:
        self.tests: dict[str, tuple[str, str, str]] = {}  # nodeid -> device, subject, outcome

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        properties = dict(report.user_properties)
        device = properties.get(DEVICE_PROPERTY)
        if not isinstance(device, str):
            return
        result = outcome(report)
        previous = self.tests.get(report.nodeid)
        if previous is None or _RANK[result] > _RANK[previous[2]]:
            self.tests[report.nodeid] = (device, str(properties.get(SUBJECT_PROPERTY)), result)

    def by_device(self) -> dict[str, DeviceCoverage]:
        devices: dict[str, DeviceCoverage] = {}
        for device, subject, result in self.tests.values():
            coverage = devices.setdefault(device, DeviceCoverage())
            coverage.outcomes[result] += 1
            if result == "failed":
                coverage.failed[subject] += 1
            elif result == "known failure":
                coverage.known[subject] += 1
        return devices

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.tests:
            return
        terminalreporter.section("ember.testing coverage")
        for line in render(self.by_device()):
            terminalreporter.line(line)


def render(devices: dict[str, DeviceCoverage]) -> list[str]:
    """The report's lines, one block per device."""
    ember.devices()  # loads the plugins, whose kernels the registry then holds
    lines: list[str] = []
    for device in sorted(devices):
        coverage = devices[device]
        native, rendered, composite, missing = REGISTRY.coverage(device.split(":")[0])
        counts = ", ".join(
            f"{coverage.outcomes[o]} {_LABEL[o]}" for o in _RANK if coverage.outcomes[o]
        )
        lines.append(f"{device}: {counts}")
        lines += _names("native kernels", native)
        lines += _names("rendered kernels", rendered)
        lines += _names("through composites", composite)
        lines += _names("missing primitives", missing)
        lines += _names("failed", _counted(coverage.failed))
        lines += _names("known failures", _counted(coverage.known))
    return lines


def _counted(subjects: Counter[str]) -> list[str]:
    return [f"{s} ({n})" if n > 1 else s for s, n in sorted(subjects.items())]


def _names(title: str, names: list[str]) -> list[str]:
    text = f"{title} ({len(names)}): {', '.join(sorted(names)) or '-'}"
    return textwrap.wrap(text, width=96, initial_indent="  ", subsequent_indent="      ")
