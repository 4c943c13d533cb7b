"""Tensor repr in PyTorch's style: `tensor([1., 2.], dtype=ember.float64)`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ember import _dtype

if TYPE_CHECKING:
    from ember._tensor import Tensor

_DEFAULT_DTYPES = (_dtype.int64, _dtype.bool)
_PRECISION = 4


def _float_formatter(values: np.ndarray) -> tuple[str, int]:
    """A NumPy format kind and precision choice mirroring PyTorch's printer."""
    finite = values[np.isfinite(values)].astype(np.float64)
    if finite.size == 0:
        return "fixed", 0
    magnitude = np.abs(finite)
    integral = bool(np.all(finite == np.round(finite)))
    largest, smallest = float(magnitude.max()), float(magnitude[magnitude > 0].min(initial=np.inf))
    if largest >= 1e8 or (smallest < 1e-4) or (smallest != np.inf and largest / smallest > 1000):
        if not (integral and largest < 1e8):
            return "sci", _PRECISION
    return ("int", 0) if integral else ("fixed", _PRECISION)


def _format_values(values: np.ndarray) -> str:
    if values.dtype.kind == "f":
        kind, precision = _float_formatter(values)
        if kind == "int":
            formatter = {"float_kind": lambda x: f"{x:.0f}." if np.isfinite(x) else str(x)}
        elif kind == "sci":
            formatter = {"float_kind": lambda x: f"{x:.{precision}e}"}
        else:
            formatter = {"float_kind": lambda x: f"{x:.{precision}f}"}
        return np.array2string(
            values,
            separator=", ",
            formatter=formatter,
            prefix="tensor(",
            threshold=1000,
            edgeitems=3,
        )
    if values.dtype.kind == "b":
        return np.array2string(
            values, separator=", ", prefix="tensor(", threshold=1000, edgeitems=3,
            formatter={"bool": lambda x: "True" if x else "False"},
        )  # fmt: skip
    return np.array2string(values, separator=", ", prefix="tensor(", threshold=1000, edgeitems=3)


def format_tensor(t: Tensor) -> str:
    """PyTorch-style repr of `t`, with device and dtype suffixes where not the defaults."""
    from ember._ops.conversion import to_host_array

    values = to_host_array(t)
    body = _format_values(values)
    suffixes = []
    if t._device.type != "cpu":
        suffixes.append(f"device='{t._device}'")
    if t.numel() == 0 and t.ndim != 1:
        suffixes.append(f"size={tuple(t._shape)}")
    if t._dtype not in _DEFAULT_DTYPES and t._dtype is not _dtype.get_default_dtype():
        suffixes.append(f"dtype=ember.{t._dtype.name}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return "tensor(" + ", ".join([body, *suffixes]) + ")"
