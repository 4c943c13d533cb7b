"""Tensor repr in PyTorch's style: `tensor([1., 2.], dtype=ember.float64)`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ember import _dtype, _upper

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
    wide = largest >= 1e8 or smallest < 1e-4 or (smallest != np.inf and largest / smallest > 1000)
    if wide:
        return "sci", _PRECISION
    return ("int", 0) if integral else ("fixed", _PRECISION)


def _float_to_text(kind: str, precision: int) -> Any:
    if kind == "int":
        return lambda x: f"{x:.0f}." if np.isfinite(x) else str(x)
    if kind == "sci":
        return lambda x: f"{x:.{precision}e}" if np.isfinite(x) else str(x)
    return lambda x: f"{x:.{precision}f}" if np.isfinite(x) else str(x)


def _padded(to_text: Any, values: np.ndarray) -> Any:
    """PyTorch right-aligns every element to the widest one."""
    sample = values.reshape(-1)
    if sample.size > 1000:  # only the edges are printed
        sample = np.concatenate([sample[:3], sample[-3:]])
    if sample.dtype.kind == "f":  # PyTorch sizes columns by the finite values only
        sample = sample[np.isfinite(sample)]
    width = max((len(to_text(x)) for x in sample), default=0)
    return lambda x: to_text(x).rjust(width)


def _format_values(values: np.ndarray) -> str:
    formatter: Any
    if values.dtype.kind == "f":
        to_text = _float_to_text(*_float_formatter(values))
        formatter = {"float_kind": _padded(to_text, values)}
    elif values.dtype.kind == "b":
        formatter = {"bool": _padded(lambda x: "True" if x else "False", values)}
    else:
        formatter = {"int": _padded(str, values)}
    return np.array2string(
        values,
        separator=", ",
        formatter=formatter,
        prefix="tensor(",
        threshold=1000,
        edgeitems=3,
        max_line_width=80,
    )


def format_tensor(t: Tensor) -> str:
    """PyTorch-style repr of `t`, with device and dtype suffixes where not the defaults."""
    values = _upper.ops.conversion.to_host_array(t)
    if t._dtype is _dtype.bfloat16:  # ml_dtypes' bfloat16 is no NumPy float kind: widen (exact)
        values = values.astype(np.float32)
    body = _format_values(values)
    suffixes = []
    if t._device.type != "cpu":
        suffixes.append(f"device='{t._device}'")
    if t.numel() == 0 and t.ndim != 1:
        suffixes.append(f"size={tuple(t._shape)}")
    if t._dtype not in _DEFAULT_DTYPES and t._dtype is not _dtype.get_default_dtype():
        suffixes.append(f"dtype=ember.{t._dtype.name}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return "tensor(" + ", ".join([body, *suffixes]) + ")"
