"""Connectionist temporal classification loss (Graves et al., 2006), as a composite.

The forward (alpha) recursion runs in log space over the time steps, on all sequences of
the batch at once: each step is a few elementwise ops on an (N, 2S + 1) tensor of the
extended label sequence (blanks between and around the targets), so autograd
differentiates it through its parts.

Its gradient is the true derivative of the loss with respect to `log_probs` (minus the
alignment posteriors). PyTorch's kernel returns exp(log_probs) minus the posteriors
instead, which differs by a term that vanishes once it passes back through the
log_softmax that produces normalised log_probs; the two agree for the logits.
"""

from __future__ import annotations

from collections.abc import Sequence

from ember._autocast import autocast_op
from ember._ops import creation, unary
from ember._ops import elementwise as ew
from ember._ops import reduction as red
from ember._ops import shape as shape_ops
from ember._ops.indexing import gather
from ember._tensor import Tensor
from ember.nn.functional import _reduction

__all__ = ["ctc_loss"]

_NEG_INF = float("-inf")

Lengths = Tensor | Sequence[int] | int


def _host_lengths(lengths: Lengths, count: int, what: str) -> list[int]:
    if isinstance(lengths, Tensor):
        values = [int(v) for v in lengths.reshape(-1).tolist()]
    elif isinstance(lengths, int):
        values = [lengths]
    else:
        values = [int(v) for v in lengths]
    if len(values) != count:
        raise RuntimeError(
            f"{what} must be of size batch_size: expected {count} values, got {len(values)}"
        )
    return values


def _log_add(terms: Sequence[Tensor]) -> Tensor:
    """log(sum(exp(terms))) elementwise, -inf where every term is -inf, with no NaN in its
    gradient there (the shift is a constant; the all -inf entries take log(1) masked)."""
    top = terms[0].detach()
    for term in terms[1:]:
        top = ew.maximum(top, term.detach())
    empty = ew.eq(top, _NEG_INF)
    shift = unary.where(empty, 0.0, top)
    total = unary.exp(ew.sub(terms[0], shift))
    for term in terms[1:]:
        total = ew.add(total, unary.exp(ew.sub(term, shift)))
    logged = ew.add(unary.log(unary.where(empty, 1.0, total)), shift)
    return unary.where(empty, _NEG_INF, logged)


def _padded_targets(targets: Tensor, target_lengths: list[int]) -> Tensor:
    """(N, S_max) targets from the padded 2-D form or the concatenated 1-D form."""
    batch = len(target_lengths)
    longest = max(target_lengths, default=0)
    if targets.ndim == 2:
        if longest > targets._shape[1]:
            raise RuntimeError(
                f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                f"{targets._shape[1]} for argument #2 'targets' (while checking arguments for "
                "ctc_loss_allocate_outputs)"
            )
        return shape_ops.narrow(targets, 1, 0, longest)
    total = sum(target_lengths)
    if targets.numel() < total:
        raise RuntimeError(
            f"Expected tensor to have size at least {total} at dimension 0, but got size "
            f"{targets.numel()} for argument #2 'targets' (while checking arguments for "
            "ctc_loss_allocate_outputs)"
        )
    # Row n reads the targets at its offset; positions past its length repeat its last one
    # (they are masked out of the recursion by the sequence's length).
    offsets, start = [], 0
    for length in target_lengths:
        offsets.append([start + min(s, max(length - 1, 0)) for s in range(longest)])
        start += length
    if total == 0 or longest == 0:
        return creation.zeros((batch, longest), dtype=targets._dtype, device=targets._device)
    index = creation.tensor(offsets, dtype=targets._dtype, device=targets._device)
    return gather(targets.reshape(-1), 0, index.reshape(-1)).reshape(batch, longest)


@autocast_op("ctc_loss")
def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Lengths,
    target_lengths: Lengths,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """-log p(target | input) summed over all alignments; log_probs is (T, N, C) or (T, C).

    'mean' divides each sequence's loss by its target length (at least 1), then averages."""
    how = _reduction.resolve(None, None, reduction)
    if not log_probs._dtype.is_floating_point:
        raise RuntimeError(
            f"ctc_loss: expected log_probs of a floating-point dtype, got {log_probs._dtype.name}"
        )
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        if targets.ndim == 1:
            targets = targets.unsqueeze(0)
    if log_probs.ndim != 3:
        raise RuntimeError(f"ctc_loss: expected 2-D or 3-D log_probs, got {log_probs.ndim}-D")
    steps, batch, classes = log_probs._shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    in_lengths = _host_lengths(input_lengths, batch, "input_lengths")
    out_lengths = _host_lengths(target_lengths, batch, "target_lengths")
    for value in in_lengths:
        if value > steps:
            raise RuntimeError(
                f"Expected input_lengths to have value at most {steps}, but got value {value} "
                "(while checking arguments for ctc_loss_allocate_outputs)"
            )
    padded = _padded_targets(targets, out_lengths)
    longest = padded._shape[1]
    width = 2 * longest + 1
    device = log_probs._device

    # The extended labels: blank, y1, blank, y2, ..., yS, blank.
    extended = creation.full((batch, width), blank, dtype=padded._dtype, device=device)
    if longest:
        extended[:, 1::2] = padded
    emissions = gather(log_probs, 2, shape_ops.expand(extended.unsqueeze(0), (steps, batch, width)))
    # A skip from s - 2 is allowed into a label that differs from the label two back.
    skip = creation.zeros((batch, width), dtype=log_probs._dtype, device=device).bool()
    if width > 2:
        differs = ew.ne(
            shape_ops.narrow(extended, 1, 2, width - 2), shape_ops.narrow(extended, 1, 0, width - 2)
        )
        label = ew.ne(shape_ops.narrow(extended, 1, 2, width - 2), blank)
        skip[:, 2:] = ew.logical_and(differs, label)

    position = creation.arange(width, device=device).unsqueeze(0)
    if steps:
        alpha = unary.where(ew.lt(position, 2), emissions[0], _NEG_INF)
    else:
        alpha = creation.full((batch, width), _NEG_INF, dtype=log_probs._dtype, device=device)
    pad1 = creation.full((batch, 1), _NEG_INF, dtype=log_probs._dtype, device=device)
    pad2 = creation.full((batch, 2), _NEG_INF, dtype=log_probs._dtype, device=device)
    lengths_tensor = creation.tensor(in_lengths, device=device).unsqueeze(1)
    for t in range(1, max(in_lengths, default=0)):
        stay = alpha
        advance = shape_ops.cat([pad1, shape_ops.narrow(alpha, 1, 0, width - 1)], 1)
        terms = [stay, advance]
        if width > 2:
            jump = shape_ops.cat([pad2, shape_ops.narrow(alpha, 1, 0, width - 2)], 1)
            terms.append(unary.where(skip, jump, _NEG_INF))
        stepped = ew.add(_log_add(terms), emissions[t])
        # Sequences shorter than t keep their final alpha.
        alpha = unary.where(ew.gt(lengths_tensor, t), stepped, alpha)

    # The alignment ends on the last label or the blank after it.
    ends = creation.tensor([[2 * n, max(2 * n - 1, 0)] for n in out_lengths], device=device)
    final = gather(alpha, 1, ends)
    has_label = creation.tensor([[True, n > 0] for n in out_lengths], device=device)
    final = unary.where(has_label, final, _NEG_INF)
    first, second = shape_ops.select(final, 1, 0), shape_ops.select(final, 1, 1)
    losses = unary.neg(_log_add([first, second]))
    # No input: probability 1 of the empty target and 0 of any other.
    no_input = [(n == 0, m > 0) for n, m in zip(in_lengths, out_lengths, strict=True)]
    if any(empty for empty, _ in no_input):
        empty_loss = [float("inf") if wanted else 0.0 for _, wanted in no_input]
        losses = unary.where(
            creation.tensor([empty for empty, _ in no_input], device=device),
            creation.tensor(empty_loss, dtype=losses._dtype, device=device),
            losses,
        )
    if zero_infinity:
        losses = unary.where(ew.eq(losses, float("inf")), 0.0, losses)
    if how == "mean":
        divisor = unary.clamp(creation.tensor(out_lengths, device=device), min=1)
        return red.mean(ew.div(losses, divisor.to(losses._dtype)))
    if how == "sum":
        return red.sum(losses)
    return shape_ops.reshape(losses, ()) if unbatched else losses
