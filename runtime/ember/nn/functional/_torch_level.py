"""The torch-level forms of functional ops (torch.softmax, torch.kl_div, torch.ctc_loss, ...).

They take PyTorch's ATen signatures: `reduction` is the integer enum (0 none, 1 mean,
2 sum; a string is accepted too), dropout takes `train` positionally, softmax takes
`dtype` third. Most others are the functional forms themselves, re-exported by `ember`.
"""

from __future__ import annotations

from ember import _dtype
from ember._tensor import Tensor
from ember.nn.functional import (
    _activation,
    _dropout,
    _loss,
    _loss_ctc,
    _loss_likelihood,
    _loss_margin,
    _reduction,
)

__all__ = [
    "alpha_dropout", "binary_cross_entropy_with_logits", "cosine_embedding_loss", "ctc_loss",
    "dropout", "hinge_embedding_loss", "kl_div", "log_softmax", "margin_ranking_loss",
    "poisson_nll_loss", "softmax", "triplet_margin_loss",
]  # fmt: skip

_REDUCTIONS = ("none", "mean", "sum")


def _reduction_name(reduction: int | str) -> str:
    if isinstance(reduction, str):
        return reduction
    if reduction not in (0, 1, 2):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def softmax(input: Tensor, dim: int, dtype: _dtype.dtype | None = None) -> Tensor:
    """torch.softmax(input, dim, dtype=None)."""
    return _activation.softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int, dtype: _dtype.dtype | None = None) -> Tensor:
    """torch.log_softmax(input, dim, dtype=None)."""
    return _activation.log_softmax(input, dim, dtype=dtype)


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """torch.dropout(input, p, train)."""
    return _dropout.dropout(input, p, train)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """torch.alpha_dropout(input, p, train)."""
    return _dropout.alpha_dropout(input, p, train)


def kl_div(
    input: Tensor, target: Tensor, reduction: int | str = 1, log_target: bool = False
) -> Tensor:
    """torch.kl_div: 'mean' here is the plain element mean (no 'batchmean', no warning)."""
    how = _reduction_name(reduction)
    losses = _loss_likelihood.kl_div(input, target, reduction="none", log_target=log_target)
    return _reduction.reduce(losses, how)


def cosine_embedding_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, reduction: int | str = 1
) -> Tensor:
    """torch.cosine_embedding_loss."""
    return _loss_margin.cosine_embedding_loss(
        input1, input2, target, margin, reduction=_reduction_name(reduction)
    )


def hinge_embedding_loss(
    input: Tensor, target: Tensor, margin: float = 1.0, reduction: int | str = 1
) -> Tensor:
    """torch.hinge_embedding_loss."""
    return _loss_margin.hinge_embedding_loss(
        input, target, margin, reduction=_reduction_name(reduction)
    )


def margin_ranking_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, reduction: int | str = 1
) -> Tensor:
    """torch.margin_ranking_loss."""
    return _loss_margin.margin_ranking_loss(
        input1, input2, target, margin, reduction=_reduction_name(reduction)
    )


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    reduction: int | str = 1,
) -> Tensor:
    """torch.triplet_margin_loss."""
    return _loss_margin.triplet_margin_loss(
        anchor, positive, negative, margin, p, eps, swap, reduction=_reduction_name(reduction)
    )


def poisson_nll_loss(
    input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float, reduction: int | str
) -> Tensor:
    """torch.poisson_nll_loss (every argument required, as in ATen)."""
    return _loss_likelihood.poisson_nll_loss(
        input, target, log_input, full, eps=eps, reduction=_reduction_name(reduction)
    )


def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: _loss_ctc.Lengths,
    target_lengths: _loss_ctc.Lengths,
    blank: int = 0,
    reduction: int | str = 1,
    zero_infinity: bool = False,
) -> Tensor:
    """torch.ctc_loss."""
    return _loss_ctc.ctc_loss(
        log_probs, targets, input_lengths, target_lengths, blank, _reduction_name(reduction),
        zero_infinity,
    )  # fmt: skip


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    pos_weight: Tensor | None = None,
    reduction: int | str = 1,
) -> Tensor:
    """torch.binary_cross_entropy_with_logits (pos_weight before reduction, as in ATen)."""
    return _loss.binary_cross_entropy_with_logits(
        input, target, weight, reduction=_reduction_name(reduction), pos_weight=pos_weight
    )
