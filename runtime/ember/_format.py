"""Tensor repr in PyTorch's style: `tensor([1., 2.], dtype=ember.float64)`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ember import _dtype, _upper
from ember._format_layout import add_suffixes, tensor_body

if TYPE_CHECKING:
    from ember._tensor import Tensor

_DEFAULT_DTYPES = (_dtype.int64, _dtype.bool)


def format_tensor(t: Tensor) -> str:
    """PyTorch-style repr of `t`, with device and dtype suffixes where not the defaults;
    laid out by torch's printer under `ember.set_printoptions` (ember._format_layout)."""
    values = _upper.ops.conversion.to_host_array(t)
    if t._dtype is _dtype.bfloat16:  # ml_dtypes' bfloat16 is no NumPy float kind: widen (exact)
        values = values.astype(np.float32)
    prefix = "tensor("
    body = prefix + tensor_body(values, len(prefix))
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
    return add_suffixes(body, suffixes, len(prefix))
