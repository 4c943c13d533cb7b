"""The known-failure ledger is well formed, and its keys select the tests they name."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import ember

from . import known_failures
from .conftest import HERE, known_gap

DTYPE_NAMES = {d.name for d in (ember.bool, ember.uint8, ember.int8, ember.int32, ember.int64,
                                ember.float16, ember.float32, ember.float64)}  # fmt: skip


def test_ledger_entries_are_well_formed() -> None:
    for device_type, entries in known_failures.KNOWN_FAILURES.items():
        assert device_type == device_type.lower() and ":" not in device_type
        for key, reason in entries.items():
            assert isinstance(reason, str) and reason.strip(), f"{key!r} needs a reason"
            if isinstance(key, tuple):
                op, dtype = key
                assert isinstance(op, str) and (dtype == "*" or dtype in DTYPE_NAMES), key
            else:
                file, _, test = key.partition("::")
                assert (HERE / file).is_file(), f"{key!r}: no such test file"
                function = test.split("[", 1)[0]
                assert f"def {function}(" in (HERE / file).read_text(), f"{key!r}: no such test"


def _item(name: str, **params: Any) -> Any:
    return SimpleNamespace(
        path=HERE / "test_example.py", name=name, callspec=SimpleNamespace(params=params)
    )


def test_ledger_keys_select_their_tests() -> None:
    ledger: dict[str, dict[Any, str]] = {
        "cpu": {
            "test_example.py::test_one[float16]": "by id",
            "test_example.py::test_all": "every parametrization",
            ("matmul", "int32"): "by op and dtype",
            ("gelu", "*"): "every dtype",
        }
    }
    f16, i32 = ember.float16, ember.int32
    assert known_gap(_item("test_one[cpu:0-float16]", device="cpu:0", dtype=f16), ledger)
    assert known_gap(_item("test_one[float16-cpu:0]", device="cpu:0", dtype=f16), ledger)
    assert not known_gap(_item("test_one[cpu:0-float32]", device="cpu:0"), ledger)
    assert (
        known_gap(_item("test_all[cpu:0-x-y]", device="cpu:0"), ledger) == "every parametrization"
    )
    assert known_gap(_item("test_all[cpu:0]", device="cpu:0"), ledger)
    assert known_gap(_item("test_mm[cpu:0]", device="cpu:0", op="matmul", dtype=i32), ledger)
    assert not known_gap(_item("test_mm[cpu:0]", device="cpu:0", op="matmul", dtype=f16), ledger)
    assert known_gap(_item("test_u[cpu:0]", device="cpu:0", op="gelu", dtype=f16), ledger)
    other_device = _item("test_all[opencl:0]", device="opencl:0")
    assert not known_gap(other_device, ledger)  # entries are per device type
    assert not known_gap(SimpleNamespace(path=Path(__file__), name="test_x"), ledger)
