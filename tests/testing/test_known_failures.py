"""The known-failures format: Ember's own file is well formed, the parser rejects what the
format does not allow, and each kind of key selects exactly the tests it names."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import ember
from ember.testing import LedgerError, load_known_failures, parse_known_failures
from ember.testing._items import known_gap
from ember.testing._ledger import KIT_DIR, OWN_LEDGER, unknown_tests

EXAMPLE = """
[mydevice.tests]
"ops/test_linalg.py::test_mm[contiguous-int32]" = "no integer GEMM yet"
"ops/test_random.py::test_manual_seed_makes_streams_repeat" = "every parametrization"

[mydevice.ops.gelu]
"*" = "no gelu kernel"

[mydevice.ops.matmul]
float16 = "no half GEMM"

[other]
"""


def test_embers_own_ledger_loads_and_names_real_tests() -> None:
    ledger = load_known_failures(OWN_LEDGER)
    assert set(ledger) >= {"cpu", "opencl"}
    assert unknown_tests(ledger) == []


def test_the_format_parses_into_keys_and_reasons() -> None:
    assert parse_known_failures(EXAMPLE) == {
        "mydevice": {
            "ops/test_linalg.py::test_mm[contiguous-int32]": "no integer GEMM yet",
            "ops/test_random.py::test_manual_seed_makes_streams_repeat": "every parametrization",
            ("gelu", "*"): "no gelu kernel",
            ("matmul", "float16"): "no half GEMM",
        },
        "other": {},
    }


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("[cpu\n", "not valid TOML"),
        ('[CPU.tests]\n"a.py::t" = "x"\n', "lower-case"),
        ('["cpu:0".tests]\n"a.py::t" = "x"\n', "without an index"),
        ('[cpu.skips]\n"a.py::t" = "x"\n', "only the tables"),
        ('[cpu]\ntests = "x"\n', "must be a table"),
        ('[cpu.tests]\n"a.py::t" = ""\n', "non-empty string"),
        ('[cpu.tests]\n"a.py::t" = 3\n', "non-empty string"),
        ('[cpu.ops.add]\nfloat = "x"\n', "no dtype name"),
        ('[cpu.ops]\nadd = "x"\n', "must be a table"),
    ],
)
def test_the_parser_rejects_what_the_format_does_not_allow(text: str, complaint: str) -> None:
    with pytest.raises(LedgerError, match=complaint) as raised:
        parse_known_failures(text, "mine.toml")
    assert str(raised.value).startswith("mine.toml")


def test_a_test_key_must_name_a_test_of_the_kit(tmp_path: Path) -> None:
    real = "ops/test_linalg.py::test_mm[contiguous-int32]"
    assert "def test_mm(" in (KIT_DIR / "ops/test_linalg.py").read_text()
    assert unknown_tests({"cpu": {real: "x"}}) == []
    file = tmp_path / "known_failures.toml"
    file.write_text('[cpu.tests]\n"ops/test_linalg.py::test_no_such_thing" = "typo"\n')
    with pytest.raises(LedgerError, match="has no test 'test_no_such_thing'"):
        load_known_failures(file)
    file.write_text('[cpu.tests]\n"ops/test_nothing.py::test_x" = "typo"\n')
    with pytest.raises(LedgerError, match="no test file"):
        load_known_failures(file)
    with pytest.raises(LedgerError, match="cannot read"):
        load_known_failures(tmp_path / "missing.toml")


def _item(name: str, **params: Any) -> Any:
    return SimpleNamespace(
        path=KIT_DIR / "ops" / "test_example.py", name=name, callspec=SimpleNamespace(params=params)
    )


def test_ledger_keys_select_their_tests() -> None:
    ledger: dict[str, dict[Any, str]] = {
        "cpu": {
            "ops/test_example.py::test_one[float16]": "by id",
            "ops/test_example.py::test_all": "every parametrization",
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


def test_stream_tests_are_selected_through_their_device_object() -> None:
    ledger: dict[str, dict[Any, str]] = {"cpu": {"ops/test_example.py::test_s": "by id"}}
    cpu = ember.device("cpu:0")
    assert known_gap(_item("test_s[cpu:0]", async_device=cpu), ledger) == "by id"
