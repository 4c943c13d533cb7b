"""Dropout: elements (dropout) or whole channels (dropout1d/2d/3d) zeroed at random.

The mask comes from the device's default Philox generator (`ember.manual_seed` makes it
reproducible, and the same seed gives the same mask on every device).
"""

from __future__ import annotations

import warnings

from ember._ops import elementwise as ew
from ember._ops import random as random_ops
from ember._ops import unary
from ember._tensor import Tensor, empty_tensor

__all__ = [
    "alpha_dropout", "dropout", "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout",
]  # fmt: skip

# -min(selu) = SELU_SCALE * SELU_ALPHA: the value a dropped unit takes in alpha dropout.
_ALPHA_PRIME = 1.7580993408473766


def _check_probability(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _scaled_mask(like: Tensor, shape: tuple[int, ...], p: float) -> Tensor:
    """1 / (1 - p) where kept (with probability 1 - p), 0 where dropped, in like's dtype."""
    keep = 1.0 - p
    noise = random_ops.uniform_(empty_tensor(shape, like._dtype, like._device))
    if keep == 0.0:
        return ew.mul(noise, 0.0)
    return unary.where(ew.lt(noise, keep), 1.0 / keep, 0.0)


def _apply(input: Tensor, mask: Tensor, inplace: bool) -> Tensor:
    return ew.mul_(input, mask) if inplace else ew.mul(input, mask)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1 / (1 - p) in training."""
    _check_probability(p)
    if not training or p == 0.0:
        return input
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"dropout(): expected a floating-point input, got {input._dtype.name}")
    return _apply(input, _scaled_mask(input, input._shape, p), inplace)


def _feature_dropout(
    name: str, input: Tensor, p: float, training: bool, inplace: bool, spatial: int
) -> Tensor:
    _check_probability(p)
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(
            f"{name}: Expected {spatial + 1}D or {spatial + 2}D input, but received a "
            f"{input.ndim}D input"
        )
    if not training or p == 0.0:
        return input
    # One draw per (sample, channel), broadcast over the spatial dims.
    channels = input._shape[: input.ndim - spatial]
    mask = _scaled_mask(input, (*channels, *([1] * spatial)), p)
    return _apply(input, mask, inplace)


def dropout1d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) input with probability p."""
    return _feature_dropout("dropout1d", input, p, training, inplace, 1)


def _rank_warning(name: str, rank: int, spatial: int) -> None:
    warnings.warn(
        f"{name}: Received a {rank}-D input to {name}, which is deprecated and will result "
        "in an error in a future release. To retain the behavior and silence this warning, "
        f"please use dropout instead. Note that {name} exists to provide channel-wise "
        f"dropout on inputs with {spatial} spatial dimensions, a channel dimension, and an "
        f"optional batch dimension (i.e. {spatial + 1}D or {spatial + 2}D inputs).",
        UserWarning,
        stacklevel=3,
    )


def _legacy_feature_dropout(input: Tensor, p: float, training: bool, inplace: bool) -> Tensor:
    """PyTorch's feature_dropout: one draw per (dim 0, dim 1) pair, broadcast over the rest;
    used as-is for input of any rank (a 2-D input is thus element-wise dropout)."""
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    mask = _scaled_mask(input, (*input._shape[:2], *([1] * (input.ndim - 2))), p)
    return _apply(input, mask, inplace)


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of (N, C, H, W) input with probability p.

    As in PyTorch, other ranks warn and are dropped along dims (0, 1); 3-D input is treated
    as batched 1-D (N, C, L), not as unbatched (C, H, W)."""
    _check_probability(p)
    if input.ndim not in (3, 4):
        _rank_warning("dropout2d", input.ndim, 2)
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            UserWarning,
            stacklevel=2,
        )
    return _legacy_feature_dropout(input, p, training, inplace)


def dropout3d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability p.

    As in PyTorch, other ranks warn; anything but 5-D is treated as unbatched (a batch dim
    of 1 is added for the draw)."""
    _check_probability(p)
    if input.ndim not in (4, 5):
        _rank_warning("dropout3d", input.ndim, 3)
    if input.ndim == 5:
        return _legacy_feature_dropout(input, p, training, inplace)
    batched = input.unsqueeze(0)
    result = _legacy_feature_dropout(batched, p, training, inplace)
    if result is batched or inplace:  # in place, the view wrote through to input
        return input
    return result.squeeze(0)


def _alpha_dropout(
    name: str, input: Tensor, p: float, training: bool, inplace: bool, feature: bool
) -> Tensor:
    """PyTorch's alpha dropout: dropped units set to -alpha', then an affine map a x + b that
    keeps a SELU network's zero mean and unit variance."""
    _check_probability(p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if feature and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if p == 1.0:
        return ew.mul_(input, 0.0) if inplace else ew.mul(input, 0.0)
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"{name}(): expected a floating-point input, got {input._dtype.name}")
    shape = (*input._shape[:2], *([1] * (input.ndim - 2))) if feature else input._shape
    noise = random_ops.uniform_(empty_tensor(shape, input._dtype, input._device))
    keep = ew.lt(noise, 1.0 - p).to(input._dtype)
    a = 1.0 / ((_ALPHA_PRIME * _ALPHA_PRIME * p + 1.0) * (1.0 - p)) ** 0.5
    # b = (keep - 1) * alpha' a + alpha' a p: -alpha' a (1 - p) where dropped, alpha' a p kept.
    b = ew.add(ew.mul(ew.sub(keep, 1.0), _ALPHA_PRIME * a), _ALPHA_PRIME * a * p)
    scale = ew.mul(keep, a)
    if inplace:
        return ew.add_(ew.mul_(input, scale), b)
    return ew.add(ew.mul(input, scale), b)


def alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Dropout for SELU networks: keeps the input's mean and variance (identity in eval)."""
    return _alpha_dropout("alpha_dropout", input, p, training, inplace, feature=False)


def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Alpha dropout of whole channels (one draw per (dim 0, dim 1) pair)."""
    return _alpha_dropout("feature_alpha_dropout", input, p, training, inplace, feature=True)
