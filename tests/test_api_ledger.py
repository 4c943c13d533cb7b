"""The API-coverage ledger (docs/api-ledger.toml): it parses, and every name it marks
implemented exists in Ember. Needs no PyTorch; regenerating it does (tools/api_ledger)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# tools/ is the repository's, not an installed package: the tests import it from the checkout.
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.api_ledger.generate import NOW_MISSING, regenerate  # noqa: E402
from tools.api_ledger.ledger import (  # noqa: E402
    IMPLEMENTED,
    OUT_OF_SCOPE,
    PLANNED,
    Entry,
    missing_implemented,
    parse,
    read,
    render,
)
from tools.api_ledger.namespaces import SECTIONS  # noqa: E402
from tools.api_ledger.rules import NOT_YET_IMPLEMENTED, classify  # noqa: E402
from tools.api_ledger.summary import coverage  # noqa: E402


def test_the_ledger_covers_every_namespace_and_round_trips() -> None:
    ledger = read()
    assert list(ledger) == list(SECTIONS)
    assert all(ledger[section] for section in SECTIONS)
    assert parse(render(ledger)) == ledger


def test_every_name_marked_implemented_exists_in_ember() -> None:
    assert missing_implemented(read()) == []


def test_the_check_catches_a_name_wrongly_marked_implemented() -> None:
    ledger = parse(
        '["torch"]\n'
        'tensor = { status = "implemented" }\n'
        'no_such_function = { status = "implemented" }\n'
        '["Tensor"]\n'
        'shape = { status = "implemented" }\n'
        'no_such_method = { status = "implemented" }\n'
        'also_missing = { status = "planned", reason = "not yet implemented" }\n'
        '["torch.distributions"]\n'
        'NoSuchDistribution = { status = "implemented" }\n'
    )
    assert missing_implemented(ledger) == [
        "torch.no_such_function",
        "Tensor.no_such_method",
        "torch.distributions.NoSuchDistribution",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('["torch"]\nabs = { status = "done" }\n', "is not one of"),
        ('["torch"]\nabs = { status = "planned" }\n', "needs a one-line reason"),
        ('["torch"]\nabs = { status = "out-of-scope", reason = " " }\n', "needs a one-line reason"),
        ('["torch"]\nabs = { status = "planned", reason = "a\\nb" }\n', "one line"),
        ('["torch"]\nabs = { status = "planned", reason = "x", why = "y" }\n', "expected"),
        ('["torch.fft"]\nfft = { status = "planned", reason = "x" }\n', "unknown section"),
    ],
)
def test_parse_refuses_a_malformed_entry(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse(text)


def test_regenerating_keeps_hand_written_entries_and_rederives_the_rest() -> None:
    previous = {
        "torch": {
            "hand_written": Entry(OUT_OF_SCOPE, "needs a GPU driver we do not ship"),
            "was_rule_written": Entry(PLANNED, NOT_YET_IMPLEMENTED),
            "no_longer_in_ember": Entry(IMPLEMENTED),
            "gone_from_pytorch": Entry(PLANNED, "kept for the record"),
        }
    }
    names = {"torch": ["tensor", "hand_written", "was_rule_written", "no_longer_in_ember"]}
    ledger, notes = regenerate(previous, lambda section: names.get(section, []))
    torch_entries = ledger["torch"]
    assert torch_entries["tensor"] == Entry(IMPLEMENTED)
    assert torch_entries["hand_written"] == previous["torch"]["hand_written"]
    assert torch_entries["was_rule_written"] == Entry(PLANNED, NOT_YET_IMPLEMENTED)
    assert torch_entries["no_longer_in_ember"] == Entry(PLANNED, NOW_MISSING)
    assert torch_entries["gone_from_pytorch"].stale
    assert notes == [
        f"torch.no_longer_in_ember: {NOW_MISSING}",
        "torch.gone_from_pytorch: stale (not in PyTorch)",
    ]
    # a stale name is left out of the counts
    assert coverage(ledger)[0].total == 4


@pytest.mark.parametrize(
    ("section", "name", "status"),
    [
        ("torch", "view_as_complex", OUT_OF_SCOPE),
        ("Tensor", "to_sparse", OUT_OF_SCOPE),
        ("Tensor", "is_sparse", PLANNED),  # answered honestly, not out of scope
        ("torch", "quantize_per_tensor", OUT_OF_SCOPE),
        ("Tensor", "refine_names", OUT_OF_SCOPE),
        ("torch", "compile", OUT_OF_SCOPE),
        ("Tensor", "is_mps", OUT_OF_SCOPE),
        ("torch", "sort", PLANNED),  # not taken for a backend ("ort")
        ("torch", "index_copy", PLANNED),  # not taken for a functionalization *_copy op
        ("torch.linalg", "cond", PLANNED),  # the condition number, not torch.cond
        ("torch.nn.init", "sparse_", PLANNED),
        ("torch.nn.init", "sparse", OUT_OF_SCOPE),  # the deprecated alias
    ],
)
def test_the_rules_classify_missing_names(section: str, name: str, status: str) -> None:
    entry = classify(section, name)
    assert entry.status == status
    assert entry.reason


def test_coverage_is_implemented_over_the_names_in_scope() -> None:
    ledger = parse(
        '["torch"]\n'
        'tensor = { status = "implemented" }\n'
        'sort = { status = "planned", reason = "not yet implemented" }\n'
        'compile = { status = "out-of-scope", reason = "JIT" }\n'
    )
    row, total = coverage(ledger)
    assert (row.total, row.implemented, row.planned, row.out_of_scope) == (3, 1, 1, 1)
    assert row.percent == pytest.approx(50.0)
    assert total.percent == pytest.approx(50.0)
