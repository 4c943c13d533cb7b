"""pixel_shuffle, pixel_unshuffle and channel_shuffle: pure reshape/permute composites.

They move values between the channel dim and the spatial (or group) dims, so autograd
comes from the view ops they are made of. Shapes and errors follow PyTorch.
"""

from __future__ import annotations

from ember._tensor import Tensor

__all__ = ["channel_shuffle", "native_channel_shuffle", "pixel_shuffle", "pixel_unshuffle"]


def _check_rank(name: str, input: Tensor, least: int) -> None:
    if input.ndim < least:
        raise RuntimeError(
            f"{name} expects input to have at least {least} dimensions, but got input with "
            f"{input.ndim} dimension(s)"
        )


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r)."""
    _check_rank("pixel_shuffle", input, 3)
    r = upscale_factor
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    nb = len(batch)
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    order = [*range(nb), nb, nb + 3, nb + 1, nb + 4, nb + 2]
    return x.permute(*order).reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W), the inverse of pixel_shuffle."""
    _check_rank("pixel_unshuffle", input, 3)
    r = downscale_factor
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *batch, c, h, w = input.shape
    if h % r:
        raise RuntimeError(
            "pixel_unshuffle expects height to be divisible by downscale_factor, but "
            f"input.size(-2)={h} is not divisible by {r}"
        )
    if w % r:
        raise RuntimeError(
            "pixel_unshuffle expects width to be divisible by downscale_factor, but "
            f"input.size(-1)={w} is not divisible by {r}"
        )
    nb = len(batch)
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    order = [*range(nb), nb, nb + 2, nb + 4, nb + 1, nb + 3]
    return x.permute(*order).reshape(*batch, c * r * r, h // r, w // r)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """(N, g * k, *) -> channels reordered as k groups of g (ShuffleNet's shuffle)."""
    if input.ndim <= 2:
        raise RuntimeError(
            f"channel_shuffle expects input with > 2 dims, but got input with sizes "
            f"{list(input.shape)}"
        )
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    x = input.reshape(n, groups, c // groups, *rest).transpose(1, 2)
    return x.reshape(n, c, *rest)


native_channel_shuffle = channel_shuffle
