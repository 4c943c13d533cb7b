"""The geometry structs of the shared window kernels, `em_pool_geometry` (em_pool.h) and
`em_conv_geometry` (em_im2col.h), as tuples of their int64 fields in declaration order,
for a device to pack as it passes them (an int64 array, a struct by value, scalars)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["conv2d", "pool2d"]

Pair = tuple[int, int]


def pool2d(
    image: Sequence[int],
    pooled: Sequence[int],
    kernel: Pair = (1, 1),
    stride: Pair = (1, 1),
    padding: Pair = (0, 0),
    dilation: Pair = (1, 1),
    count_include_pad: bool = False,
    divisor: int | None = None,
) -> tuple[int, ...]:
    """em_pool_geometry's fields: planes of `image`'s last two sizes pooled to `pooled`'s."""
    # Indexed one by one: on the hot path of small ops, twice as fast as star-unpacking.
    return (
        image[-2], image[-1], pooled[-2], pooled[-1], kernel[0], kernel[1], stride[0],
        stride[1], padding[0], padding[1], dilation[0], dilation[1],
        1 if count_include_pad else 0, divisor or 0,
    )  # fmt: skip


def conv2d(
    image: Sequence[int], cols: Sequence[int], cols_strides: Sequence[int],
    stride: Pair, padding: Pair, dilation: Pair,
) -> tuple[int, ...]:  # fmt: skip
    """em_conv_geometry's fields: NCHW `image`, columns of shape (N, C, kh, kw, Ho, Wo)."""
    return (*image, *cols[2:], *stride, *padding, *dilation, *cols_strides[:4])
