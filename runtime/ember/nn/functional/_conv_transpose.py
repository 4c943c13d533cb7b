"""conv_transpose1d: conv_transpose2d over a height-1 view of the input and weight.

The 2-d op does the parsing, the computation and the autograd; this module checks the 1-d
ranks and lifts the 1-d arguments to (1, x) pairs.
"""

from __future__ import annotations

from collections.abc import Sequence

from ember._tensor import Tensor
from ember.nn.functional._conv import conv_transpose2d

__all__ = ["conv_transpose1d"]

IntArg = int | Sequence[int]


def _single(name: str, value: IntArg, what: str) -> int:
    if isinstance(value, int):
        return value
    items = list(value)
    if len(items) != 1:
        raise RuntimeError(f"{name}(): expected {what} to be a single integer value or a list "
                           f"of 1 values to match the convolution dimensions, but got "
                           f"{what}={items}")  # fmt: skip
    return int(items[0])


def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntArg = 1,
    padding: IntArg = 0,
    output_padding: IntArg = 0,
    groups: int = 1,
    dilation: IntArg = 1,
) -> Tensor:
    """1-d transposed convolution over (N, C_in, L) or (C_in, L); weight is
    (C_in, C_out/groups, k)."""
    name = "conv_transpose1d"
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 2D (unbatched) or 3D (batched) input to {name}, but got input of size: "
            f"{list(input.shape)}"
        )
    if weight.ndim != 3:
        raise RuntimeError(
            f"{name}(): expected a 3-D weight (C_in, C_out/groups, k), got {list(weight.shape)}"
        )
    s, p = _single(name, stride, "stride"), _single(name, padding, "padding")
    op, d = _single(name, output_padding, "output_padding"), _single(name, dilation, "dilation")
    out = conv_transpose2d(
        input.unsqueeze(-2), weight.unsqueeze(-2), bias, (1, s), (0, p), (0, op), groups, (1, d)
    )
    return out.squeeze(-2)
