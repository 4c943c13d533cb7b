"""Gradient clipping: by total norm (clip_grad_norm_) or by value (clip_grad_value_)."""

from __future__ import annotations

import math
from collections.abc import Iterable

from ember._ops import creation, unary
from ember._ops import elementwise as ew
from ember._ops import foreach as multi_tensor
from ember._tensor import Tensor
from ember.autograd._mode import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm"]

TensorOrTensors = Tensor | Iterable[Tensor]


def _as_list(tensors: TensorOrTensors) -> list[Tensor]:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def get_total_norm(
    tensors: TensorOrTensors,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """The norm of the norms of `tensors`, as if they were concatenated into one vector.

    `foreach` (None: where it applies) takes every norm in one multi-tensor call
    (`foreach_norm`) rather than one norm per tensor; both give the same values.
    """
    norm_type = float(norm_type)
    items = _as_list(tensors)
    if not items:
        return creation.tensor(0.0)
    with no_grad():
        norms = multi_tensor.norms(items, norm_type, foreach=foreach is not False)
        total = multi_tensor.vector_norm(norms, norm_type)
    if error_if_nonfinite:
        value = total.item()
        if math.isnan(value) or math.isinf(value):
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients from `parameters` is "
                "non-finite, so it cannot be clipped. To disable this error and scale the "
                "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
            )
    return total


def clip_grad_norm_(
    parameters: TensorOrTensors,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Scale the gradients in place so that their total norm is at most max_norm.

    Returns the total norm before clipping. `foreach` (None: where it applies) takes the
    norms and the scaling in one multi-tensor call each, as PyTorch's `_foreach_norm` and
    `_foreach_mul_`; `False` runs one op per gradient.
    """
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return creation.tensor(0.0)
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    with no_grad():
        # clamp (not a branch) keeps this free of a device-to-host read.
        coefficient = unary.clamp(ew.div(float(max_norm), ew.add(total, 1e-6)), max=1.0)
        multi_tensor.mul_(grads, coefficient, foreach=foreach is not False)
    return total


def clip_grad_value_(
    parameters: TensorOrTensors, clip_value: float, foreach: bool | None = None
) -> None:
    """Clamp every gradient elementwise to [-clip_value, clip_value], in place."""
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                unary.clamp_(p.grad, -clip_value, clip_value)
