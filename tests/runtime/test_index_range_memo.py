"""An index tensor validated once is not read back again (each read makes the host wait
for an asynchronous device), until it is written to."""

from __future__ import annotations

import pytest

import ember
import ember.nn.functional as F
from ember._ops import _index_tensors


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the host reads of index bounds."""
    calls: list[int] = []
    original = _index_tensors.bounds

    def counting(index: ember.Tensor) -> tuple[int, int]:
        calls.append(1)
        return original(index)

    monkeypatch.setattr(_index_tensors, "bounds", counting)
    import ember.nn.functional._cross_entropy as cross_entropy

    monkeypatch.setattr(cross_entropy, "bounds", counting)
    return calls


def test_cross_entropy_reads_its_targets_once(reads: list[int]) -> None:
    logits = ember.randn(4, 3, requires_grad=True)
    F.cross_entropy(logits, ember.tensor([0, 2, 1, 2])).backward()
    assert len(reads) == 1  # nll_loss's check; gather and scatter reuse it


def test_a_remembered_index_is_checked_again_after_an_in_place_write(reads: list[int]) -> None:
    t = ember.arange(5.0)
    index = ember.tensor([0, 4])
    _index_tensors.remember_in_range(index, 5)
    assert ember.gather(t, 0, index).tolist() == [0.0, 4.0]
    assert reads == []
    index.fill_(7)
    with pytest.raises(IndexError, match="out of bounds"):
        ember.gather(t, 0, index)
    assert reads == [1]
    # A smaller dim than remembered is checked too.
    small = ember.tensor([3])
    _index_tensors.remember_in_range(small, 5)
    with pytest.raises(IndexError, match="out of bounds"):
        ember.gather(ember.arange(2.0), 0, small)
