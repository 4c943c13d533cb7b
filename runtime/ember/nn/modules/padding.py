"""Padding layers: Constant/Zero/Reflection/Replication/CircularPad{1,2,3}d over F.pad.

An int padding pads every side of the last 1, 2 or 3 dims by that amount; a tuple is F.pad's
(left, right, top, bottom, front, back) order, as in PyTorch.
"""

from __future__ import annotations

from collections.abc import Sequence

from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.module import Module

__all__ = [
    "CircularPad1d", "CircularPad2d", "CircularPad3d",
    "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
    "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
]  # fmt: skip

IntArg = int | Sequence[int]


def _amounts(padding: IntArg, dims: int) -> tuple[int, ...]:
    if isinstance(padding, int):
        return (padding,) * (2 * dims)
    amounts = tuple(int(p) for p in padding)
    if len(amounts) != 2 * dims:
        raise ValueError(
            f"padding must be an int or a tuple of {2 * dims} ints, got {len(amounts)} values"
        )
    return amounts


class _PadNd(Module):
    _dims = 1
    _mode = "constant"

    def __init__(self, padding: IntArg) -> None:
        super().__init__()
        self.padding = _amounts(padding, self._dims)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in (self._dims + 1, self._dims + 2):
            raise ValueError(
                f"expected {self._dims + 1}D or {self._dims + 2}D input (got {input.ndim}D input)"
            )

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: IntArg, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with a constant."""


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with a constant."""

    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims with a constant."""

    _dims = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding: IntArg) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Pad the last dim with zeros."""


class ZeroPad2d(_ZeroPadNd):
    """Pad the last two dims with zeros."""

    _dims = 2


class ZeroPad3d(_ZeroPadNd):
    """Pad the last three dims with zeros."""

    _dims = 3


class ReflectionPad1d(_PadNd):
    """Pad the last dim with its reflection (the edge value not repeated)."""

    _mode = "reflect"

    def _check_input_dim(self, input: Tensor) -> None:
        pass  # F.pad checks reflect's ranks and sizes


class ReflectionPad2d(ReflectionPad1d):
    """Pad the last two dims with their reflection."""

    _dims = 2


class ReflectionPad3d(ReflectionPad1d):
    """Pad the last three dims with their reflection."""

    _dims = 3


class ReplicationPad1d(ReflectionPad1d):
    """Pad the last dim by repeating its edge value."""

    _mode = "replicate"


class ReplicationPad2d(ReplicationPad1d):
    """Pad the last two dims by repeating their edge values."""

    _dims = 2


class ReplicationPad3d(ReplicationPad1d):
    """Pad the last three dims by repeating their edge values."""

    _dims = 3


class CircularPad1d(_PadNd):
    """Pad the last dim by wrapping around."""

    _mode = "circular"


class CircularPad2d(CircularPad1d):
    """Pad the last two dims by wrapping around."""

    _dims = 2


class CircularPad3d(CircularPad1d):
    """Pad the last three dims by wrapping around."""

    _dims = 3
