"""The ledger of known gaps, per device type. Every entry is marked xfail(strict=True).

A key is either

* a test id relative to this folder, without its device parameter:
  ``"test_linalg.py::test_matmul_dtypes[int32]"``; a bare ``"file::test"`` covers every
  parametrization of that test; or
* an ``(op, dtype name)`` pair, covering every test parametrized with that ``op`` and
  that dtype (``"*"`` for every dtype).

The value says why the gap exists. Nothing is ever skipped silently: a gap that gets
fixed makes its tests XPASS, which fails the run, and the entry must then be deleted.

A third-party device keeps its own ledger in its own package and points the suite at it
with ``EMBER_KNOWN_FAILURES=package.module`` (a module with a ``KNOWN_FAILURES`` dict of
the same form); its entries are merged with these.
"""

from __future__ import annotations

LedgerKey = str | tuple[str, str]

KNOWN_FAILURES: dict[str, dict[LedgerKey, str]] = {
    "cpu": {},
    # The reference device (plugins/ember-numpy) runs the whole kit: keep it that way.
    "numpy": {},
}
