"""Index bounds known without a device read (uploaded from the host, or checked by an
earlier op) spare the range checks their read, which on an asynchronous device makes the
host wait; writing to the tensor forgets them, and errors still come from exact reads."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember._ops import _index_tensors, _known_bounds
from ember.nn.functional import _cross_entropy as cross_entropy


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the device reads of index bounds."""
    calls: list[int] = []
    original = _index_tensors.bounds

    def counting(index: ember.Tensor) -> tuple[int, int]:
        calls.append(1)
        return original(index)

    monkeypatch.setattr(_index_tensors, "bounds", counting)
    monkeypatch.setattr(cross_entropy, "bounds", counting)
    return calls


def test_cross_entropy_reads_its_targets_once(reads: list[int], device: str) -> None:
    logits = ember.randn(4, 3, requires_grad=True).to(device)
    targets = ember.tensor([0, 2, 1, 2], device=device) + 0  # computed: bounds unknown
    F.cross_entropy(logits, targets).backward()
    assert len(reads) == 1  # nll_loss's check; gather and scatter reuse it


def test_targets_uploaded_from_the_host_need_no_read(reads: list[int], device: str) -> None:
    logits = ember.randn(4, 3, requires_grad=True).to(device)
    for targets in (ember.tensor([0, 2, 1, 2], device=device), ember.tensor([0, 2]).to(device)):
        F.cross_entropy(logits[: targets.shape[0]], targets).backward()
    # On a host device a read costs no wait, and uploads don't compute bounds.
    assert reads == [] or ember.device(device).backend.host_accessible
    # Out-of-range targets are still an error, from an exact read.
    with pytest.raises(IndexError, match="Target 3 is out of bounds"):
        F.cross_entropy(logits, ember.tensor([0, 3, 1, 2], device=device))


def test_known_bounds_are_forgotten_after_a_write_and_never_cover_a_part() -> None:
    t = ember.tensor(np.array([0, 4, 2]))
    _known_bounds.remember(t, 0, 4)
    assert _known_bounds.known(t) == (0, 4)
    assert _known_bounds.known(t[1:]) == (0, 4)  # a view holds a subset of the values
    t.fill_(9)
    assert _known_bounds.known(t) is None
    part = ember.arange(10)[2:5]
    _known_bounds.remember(part, 2, 4)
    assert _known_bounds.known(part) is None  # says nothing of the rest of its storage


def test_a_remembered_index_is_checked_again_after_an_in_place_write(reads: list[int]) -> None:
    t = ember.arange(5.0)
    index = ember.tensor([0, 4]) + 0
    _known_bounds.remember(index, 0, 4)
    assert ember.gather(t, 0, index).tolist() == [0.0, 4.0]
    assert reads == []
    index.fill_(7)
    with pytest.raises(IndexError, match="out of bounds"):
        ember.gather(t, 0, index)
    assert reads == [1]
    # Bounds beyond the dim's size are checked exactly.
    with pytest.raises(IndexError, match="out of bounds"):
        ember.gather(ember.arange(2.0), 0, ember.tensor([3]))
