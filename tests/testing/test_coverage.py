"""The coverage report adds up each kit test once, by its worst report, per device."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from ember.testing._coverage import CoverageRecorder, render
from ember.testing._items import DEVICE_PROPERTY, SUBJECT_PROPERTY


def _report(nodeid: str, when: str, outcome: str, device: str | None, **extra: Any) -> Any:
    properties = [(DEVICE_PROPERTY, device), (SUBJECT_PROPERTY, "add")] if device else []
    return SimpleNamespace(
        nodeid=nodeid,
        when=when,
        outcome=outcome,
        skipped=outcome == "skipped",
        user_properties=properties,
        **extra,
    )


def test_each_test_counts_once_by_its_worst_report() -> None:
    recorder = CoverageRecorder()
    reports = [
        _report("a", "setup", "passed", "cpu:0"),
        _report("a", "call", "passed", "cpu:0"),
        _report("a", "teardown", "failed", "cpu:0"),  # a failed teardown fails the test
        _report("b", "call", "skipped", "cpu:0", wasxfail="known gap: x"),
        _report("c", "call", "failed", "cpu:0", wasxfail="known gap: x"),  # strict XPASS
        _report("d", "call", "passed", "opencl:0"),
        _report("e", "call", "failed", None),  # not a kit test on a device
    ]
    for report in reports:
        recorder.pytest_runtest_logreport(report)
    devices = recorder.by_device()
    assert set(devices) == {"cpu:0", "opencl:0"}
    assert devices["cpu:0"].outcomes == {"failed": 2, "known failure": 1}
    assert devices["cpu:0"].failed == {"add": 2}
    assert devices["cpu:0"].known == {"add": 1}
    assert devices["opencl:0"].outcomes == {"passed": 1}


def test_the_report_lists_native_composite_and_failed_ops() -> None:
    recorder = CoverageRecorder()
    recorder.pytest_runtest_logreport(_report("a", "call", "failed", "cpu:0"))
    lines = render(recorder.by_device())
    assert lines[0] == "cpu:0: 1 failed"
    text = "\n".join(lines)
    assert "native kernels (" in text and " add," in text
    assert "through composites (" in text and "mean" in text
    assert "failed (1): add" in text and "known failures (0): -" in text
