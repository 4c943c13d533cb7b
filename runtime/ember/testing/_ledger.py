"""Known failures: the checked-in ledger of a device's gaps, read from TOML files.

The format (docs/plugins/testing-a-device.md) has one table per device type::

    [mydevice.tests]
    "ops/test_linalg.py::test_mm[contiguous-int32]" = "no integer GEMM yet"
    "ops/test_random.py::test_manual_seed_makes_streams_repeat" = "every parametrization"

    [mydevice.ops.gelu]
    "*" = "no gelu kernel"        # every test parametrized with op "gelu", any dtype
    float16 = "..."               # or only those also parametrized with float16

A test key is the test's id relative to the kit's folder without its device parameter; a
bare ``file::test`` covers every parametrization. Every matching test is marked
xfail(strict=True): nothing is skipped silently, and a fixed gap XPASSes, which fails the
run until its entry is deleted.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from ember._dtype import BY_NAME

if sys.version_info >= (3, 11):
    import tomllib
else:  # the `testing` extra installs tomli on Python 3.10
    import tomli as tomllib

#: a test id ("file::test[params]") or an (op, dtype name or "*") pair
LedgerKey = str | tuple[str, str]
#: device type -> key -> reason
Ledger = dict[str, dict[LedgerKey, str]]

KIT_DIR: Final = Path(__file__).resolve().parent
#: Ember's own ledger for its own devices, in the same format as a plugin's
OWN_LEDGER: Final = KIT_DIR / "known_failures.toml"

DTYPE_NAMES: Final = frozenset(BY_NAME)


class LedgerError(ValueError):
    """A known-failures file that does not follow the format; the message names the file."""


def parse_known_failures(text: str, source: str = "<string>") -> Ledger:
    """The ledger that a known-failures file's TOML `text` describes."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise LedgerError(f"{source}: not valid TOML: {error}") from error
    ledger: Ledger = {}
    for device_type, sections in document.items():
        where = f"{source}: [{device_type}]"
        if device_type != device_type.lower() or ":" in device_type:
            raise LedgerError(f"{where}: a device type is lower-case, without an index")
        if not isinstance(sections, dict) or not set(sections) <= {"tests", "ops"}:
            raise LedgerError(f"{where} may hold only the tables `tests` and `ops`")
        entries = ledger.setdefault(device_type, {})
        for test_id, reason in _table(sections.get("tests", {}), f"{where}.tests").items():
            entries[test_id] = _reason(reason, f"{where}.tests {test_id!r}")
        for op, dtypes in _table(sections.get("ops", {}), f"{where}.ops").items():
            for dtype, reason in _table(dtypes, f"{where}.ops.{op}").items():
                if dtype != "*" and dtype not in DTYPE_NAMES:
                    raise LedgerError(f"{where}.ops.{op}: {dtype!r} is no dtype name (or '*')")
                entries[(op, dtype)] = _reason(reason, f"{where}.ops.{op}.{dtype}")
    return ledger


def _table(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise LedgerError(f"{where} must be a table")
    return value


def _reason(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise LedgerError(f"{where}: the value is the reason, a non-empty string")
    return value


def load_known_failures(path: str | Path) -> Ledger:
    """The ledger in the known-failures file at `path`, its test keys checked against the kit."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise LedgerError(f"cannot read the known-failures file {source}: {error}") from error
    ledger = parse_known_failures(text, source)
    problems = unknown_tests(ledger)
    if problems:
        raise LedgerError(f"{source}: " + "; ".join(problems))
    return ledger


def unknown_tests(ledger: Ledger, kit_dir: Path = KIT_DIR) -> list[str]:
    """Why each test key that names no test of the kit is wrong (a typo would never match)."""
    problems = []
    for entries in ledger.values():
        for key in entries:
            if not isinstance(key, str):
                continue
            file, _, test = key.partition("::")
            function = test.split("[", 1)[0]
            path = kit_dir / file
            if not file.endswith(".py") or not path.is_file():
                problems.append(f"{key!r}: the kit has no test file {file!r}")
            elif not function or f"def {function}(" not in path.read_text(encoding="utf-8"):
                problems.append(f"{key!r}: {file} has no test {function!r}")
    return problems


def merge(ledgers: Iterable[Ledger]) -> Ledger:
    """One ledger holding every entry of `ledgers`; a later reason for the same key wins."""
    merged: Ledger = {}
    for ledger in ledgers:
        for device_type, entries in ledger.items():
            merged.setdefault(device_type, {}).update(entries)
    return merged
