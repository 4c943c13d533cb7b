"""The `reduction=` argument of every loss, and PyTorch's legacy size_average/reduce flags."""

from __future__ import annotations

import warnings

from ember._ops import reduction
from ember._tensor import Tensor

__all__ = ["reduce", "resolve"]

_VALID = ("none", "mean", "sum")


def resolve(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    """The reduction string, from the legacy flags when either is given (with a warning)."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = ("mean" if size_average else "sum") if reduce else "none"
        warnings.warn(
            "size_average and reduce args will be deprecated, please use "
            f"reduction='{reduction}' instead.",
            UserWarning,
            stacklevel=3,
        )
    if reduction not in _VALID:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def reduce(losses: Tensor, how: str) -> Tensor:
    """Apply a resolved reduction to elementwise losses."""
    if how == "mean":
        return reduction.mean(losses)
    if how == "sum":
        return reduction.sum(losses)
    return losses
