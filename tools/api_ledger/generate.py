"""Regenerating the ledger: PyTorch's names against Ember's, keeping hand-written entries."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .ledger import IMPLEMENTED, PLANNED, Entry, Ledger
from .namespaces import SECTIONS, ember_object
from .rules import NOT_YET_IMPLEMENTED, RULES, classify

#: reasons the generator writes itself; an entry with any other reason was written by hand
GENERATED_REASONS = frozenset({NOT_YET_IMPLEMENTED, *(rule.reason for rule in RULES)})

NOW_MISSING = "marked implemented, but Ember lacks it"


def regenerate(
    previous: Ledger, pytorch_names: Callable[[str], Iterable[str]]
) -> tuple[Ledger, list[str]]:
    """The new ledger and a line per change worth a look (a name gone from Ember, or from
    PyTorch)."""
    ledger: Ledger = {}
    notes: list[str] = []
    for section in SECTIONS:
        owner = ember_object(section)
        old = previous.get(section, {})
        entries: dict[str, Entry] = {}
        for name in pytorch_names(section):
            has_it = owner is not None and hasattr(owner, name)
            entries[name] = _entry(section, name, has_it, old.get(name))
            if entries[name].reason == NOW_MISSING:
                notes.append(f"{section}.{name}: {NOW_MISSING}")
        for name, entry in old.items():
            if name not in entries:
                entries[name] = Entry(entry.status, entry.reason, stale=True)
                notes.append(f"{section}.{name}: stale (not in PyTorch)")
        ledger[section] = entries
    return ledger, notes


def _entry(section: str, name: str, has_it: bool, old: Entry | None) -> Entry:
    if has_it:
        return Entry(IMPLEMENTED, old.reason if old and old.status == IMPLEMENTED else "")
    if old is None:
        return classify(section, name)
    if old.status == IMPLEMENTED:
        return Entry(PLANNED, NOW_MISSING)
    if old.reason in GENERATED_REASONS or old.reason == NOW_MISSING:
        return classify(section, name)
    return Entry(old.status, old.reason)
