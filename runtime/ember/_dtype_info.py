"""`ember.finfo` / `ember.iinfo`: the numeric limits of a dtype, with PyTorch's fields."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ember import _dtype as dtypes

__all__ = ["can_cast", "finfo", "iinfo"]


class finfo:
    """Limits of a floating dtype (the default dtype when none is given)."""

    __slots__ = ("bits", "dtype", "eps", "max", "min", "resolution", "smallest_normal", "tiny")

    def __init__(self, type: dtypes.dtype | None = None) -> None:
        dt = dtypes.get_default_dtype() if type is None else type
        if not isinstance(dt, dtypes.dtype) or not dt.is_floating_point:
            raise TypeError(
                "ember.finfo() requires a floating point input type. "
                "Use ember.iinfo to handle 'ember.finfo'"
            )
        # ml_dtypes.finfo is NumPy's for NumPy's types, and knows bfloat16 too.
        info = ml_dtypes.finfo(dt.numpy)
        self.bits: int = info.bits
        self.eps: float = float(info.eps)
        self.max: float = float(info.max)
        self.min: float = float(info.min)
        self.tiny: float = float(info.smallest_normal)
        self.smallest_normal: float = self.tiny
        self.resolution: float = 10.0**-info.precision
        self.dtype: str = dt.name

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
            f"tiny={self.tiny:g}, dtype={self.dtype})"
        )


class iinfo:
    """Limits of an integer (or bool) dtype."""

    __slots__ = ("bits", "dtype", "max", "min")

    def __init__(self, type: dtypes.dtype) -> None:
        if not isinstance(type, dtypes.dtype) or type.is_floating_point:
            raise TypeError(
                "ember.iinfo() requires an integer input type. "
                "Use ember.finfo to handle 'ember.iinfo'"
            )
        info = np.iinfo(np.uint8 if type is dtypes.bool else type.numpy)
        self.bits: int = 8 if type is dtypes.bool else info.bits
        self.max: int = 1 if type is dtypes.bool else int(info.max)
        self.min: int = 0 if type is dtypes.bool else int(info.min)
        self.dtype: str = type.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


def can_cast(from_: dtypes.dtype, to: dtypes.dtype) -> bool:
    """Whether promotion may cast `from_` to `to`: never to a lower kind (float -> int,
    int -> bool), any size within a kind, as torch.can_cast."""
    return from_.category <= to.category
