"""CTC loss: values against PyTorch for padded and concatenated targets, every reduction,
zero_infinity, blanks, repeated labels, empty targets and inputs; gradients through
log_softmax against PyTorch and by finite differences in float64."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

STEPS, BATCH, CLASSES = 6, 3, 5
# Row 0 repeats a label (needs a blank between the two 2s), row 1 has one label.
PADDED = np.array([[1, 2, 2], [3, 0, 0], [4, 1, 0]])
CONCATENATED = np.array([1, 2, 2, 3, 4, 1])
INPUT_LENGTHS = [6, 5, 4]
TARGET_LENGTHS = [3, 1, 2]


def _logits(rng: Any) -> np.ndarray:
    return rng.standard_normal((STEPS, BATCH, CLASSES))


@pytest.mark.parametrize("targets", [PADDED, CONCATENATED], ids=["padded", "concatenated"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("lengths_as", ["list", "tensor"])
def test_values_and_gradients_match_torch(
    device: str, rng: Any, targets: np.ndarray, reduction: str, lengths_as: str
) -> None:
    import torch

    logits = _logits(rng)
    ours_logits = ember.tensor(logits, device=device, requires_grad=True)
    theirs_logits = torch.tensor(logits, requires_grad=True)
    if lengths_as == "tensor":
        lengths: tuple[Any, Any] = (ember.tensor(INPUT_LENGTHS), ember.tensor(TARGET_LENGTHS))
    else:
        lengths = (INPUT_LENGTHS, TARGET_LENGTHS)
    out = F.ctc_loss(
        F.log_softmax(ours_logits, 2), ember.tensor(targets, device=device), *lengths,
        reduction=reduction,
    )  # fmt: skip
    expected = torch.nn.functional.ctc_loss(
        theirs_logits.log_softmax(2), torch.tensor(targets), INPUT_LENGTHS, TARGET_LENGTHS,
        reduction=reduction,
    )  # fmt: skip
    np.testing.assert_allclose(out.numpy(force=True), expected.detach().numpy(), rtol=1e-10)
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(
        ours_logits.grad.numpy(force=True), theirs_logits.grad.numpy(), atol=1e-10
    )


def test_gradcheck_in_float64(device: str, rng: Any) -> None:
    # Small, so that the finite differences stay cheap: a repeated label, a single label,
    # and sequences of different lengths.
    log_probs = np.log(rng.dirichlet(np.ones(4), (4, 2)))
    targets = ember.tensor([[1, 1], [3, 0]], device=device)

    def loss(x: Any) -> Any:
        return F.ctc_loss(x, targets, [4, 3], [2, 1], reduction="none")

    x = ember.tensor(log_probs, device=device, requires_grad=True)
    assert ember.autograd.gradcheck(loss, (x,))


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_impossible_and_empty_sequences(rng: Any, zero_infinity: bool) -> None:
    import torch

    log_probs = torch.tensor(_logits(rng)).log_softmax(2)
    # Row 0 needs 5 steps (1 _ 1 _ 1) but has 3; row 1 is empty (loss 0); row 2 is normal.
    targets = np.array([[1, 1, 1], [3, 0, 0], [1, 2, 0]])
    lengths = ([3, 0, 4], [3, 0, 2])
    ours_input = ember.tensor(log_probs.numpy(), requires_grad=True)
    out = F.ctc_loss(ours_input, ember.tensor(targets), *lengths, reduction="none",
                     zero_infinity=zero_infinity)  # fmt: skip
    expected = torch.nn.functional.ctc_loss(
        log_probs, torch.tensor(targets), *lengths, reduction="none", zero_infinity=zero_infinity
    )
    np.testing.assert_allclose(out.detach().numpy(), expected.numpy(), rtol=1e-10)
    assert (out.detach().numpy()[0] == np.inf) is not zero_infinity
    if zero_infinity:
        out.sum().backward()
        grad = ours_input.grad.numpy()
        assert np.isfinite(grad).all() and not grad[:, 0].any()


def test_unbatched_blank_and_module(rng: Any) -> None:
    import torch

    log_probs = torch.tensor(_logits(rng)).log_softmax(2)
    out = F.ctc_loss(ember.tensor(log_probs.numpy()[:, 0]), ember.tensor(PADDED[0]), 6, 3,
                     reduction="none")  # fmt: skip
    expected = torch.nn.functional.ctc_loss(
        log_probs[:, 0], torch.tensor(PADDED[0]), torch.tensor(6), torch.tensor(3),
        reduction="none",
    )  # fmt: skip
    assert out.shape == ()
    np.testing.assert_allclose(out.item(), expected.item(), rtol=1e-10)
    module = nn.CTCLoss(blank=4, reduction="sum", zero_infinity=True)
    theirs = torch.nn.CTCLoss(blank=4, reduction="sum", zero_infinity=True)
    targets = np.array([[1, 2, 2], [3, 0, 0], [0, 1, 0]])
    np.testing.assert_allclose(
        module(ember.tensor(log_probs.numpy()), ember.tensor(targets), INPUT_LENGTHS,
               TARGET_LENGTHS).item(),
        theirs(log_probs, torch.tensor(targets), INPUT_LENGTHS, TARGET_LENGTHS).item(),
        rtol=1e-10,
    )  # fmt: skip
    assert repr(module) == "CTCLoss()"


def test_errors_as_torch() -> None:
    log_probs = F.log_softmax(ember.randn(5, 2, 4), 2)
    targets = ember.tensor([[1, 2], [1, 1]])
    with pytest.raises(RuntimeError, match="Expected input_lengths to have value at most 5"):
        F.ctc_loss(log_probs, targets, [6, 5], [2, 2])
    with pytest.raises(
        RuntimeError, match="Expected tensor to have size at least 3 at dimension 1"
    ):
        F.ctc_loss(log_probs, targets, [5, 5], [3, 2])
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        F.ctc_loss(log_probs, targets, [5, 5], [2, 2], blank=4)
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        F.ctc_loss(log_probs, targets, [5, 5], [2, 2], reduction="bad")
