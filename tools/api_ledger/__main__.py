"""`python -m tools.api_ledger generate | summary | check` (see the package docstring)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .ledger import LEDGER_PATH, Ledger, missing_implemented, read, render
from .summary import coverage, table


def main(argv: list[str] | None = None) -> int:
    """Run one command; the exit status is 1 when `check` finds a problem."""
    parser = argparse.ArgumentParser(prog="python -m tools.api_ledger", description=__doc__)
    parser.add_argument("command", choices=("generate", "summary", "check"))
    parser.add_argument("--ledger", type=Path, default=LEDGER_PATH, help="the ledger file")
    arguments = parser.parse_args(argv)
    if arguments.command == "generate":
        return _generate(arguments.ledger)
    ledger = read(arguments.ledger)
    if arguments.command == "summary":
        print(table(coverage(ledger)))
        return 0
    missing = missing_implemented(ledger)
    for name in missing:
        print(f"marked implemented, missing from Ember: {name}", file=sys.stderr)
    return 1 if missing else 0


def _generate(path: Path) -> int:
    from .generate import regenerate
    from .pytorch import public_names

    previous: Ledger = read(path) if path.exists() else {}
    ledger, notes = regenerate(previous, public_names)
    path.write_text(render(ledger), encoding="utf-8")
    for note in notes:
        print(note, file=sys.stderr)
    print(table(coverage(ledger)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
