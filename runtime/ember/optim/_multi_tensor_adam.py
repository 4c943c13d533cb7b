"""Adam/AdamW's update of a whole parameter group through a device's fused `adam_step`
kernel (PyTorch's multi-tensor `foreach` path), when the device has one.

The per-tensor loop in `adam.py` is the composite: about ten ops per parameter, each a
pass over memory and a Python call. A multi-tensor kernel updates every parameter in one
call and one pass each. Taken unless `foreach=False`, and only where the loop would
compute nothing else: no AMSGrad, every parameter and its state dense, of one dtype, on
one device.
"""

from __future__ import annotations

from typing import Any

from ember._ops import names, zeros_like
from ember._tensor import Tensor
from ember.optim.optimizer import _step_tensor

__all__ = ["fused_adam_group"]


def fused_adam_group(optimizer: Any, group: dict[str, Any]) -> bool:
    """Update `group` with the fused kernel and return True, or return False (untouched)."""
    if group["foreach"] is False or group["amsgrad"]:
        return False
    pairs = list(optimizer._gradients(group))
    if not pairs:
        return True
    first = pairs[0][0]
    kernel = names.ADAM_STEP.kernels.get(first._device.type)
    if kernel is None or not first._dtype.is_floating_point:
        return False
    for p, grad in pairs:
        if not (_dense_like(p, first) and _dense_like(grad, first)):
            return False
    state = optimizer.state
    for p, _ in pairs:  # existing state must be dense too (a loaded state dict may not be)
        entry = state[p]
        if entry and not all(_dense_like(entry[k], first) for k in ("exp_avg", "exp_avg_sq")):
            return False
    beta1, beta2 = group["betas"]
    step_sizes, corrections = [], []
    for p, _ in pairs:
        entry = state[p]
        if not entry:
            entry["step"] = _step_tensor(0.0)
            entry["exp_avg"] = zeros_like(p)
            entry["exp_avg_sq"] = zeros_like(p)
        step = optimizer._advance_step(entry)
        step_sizes.append(group["lr"] / (1 - beta1**step))
        corrections.append((1 - beta2**step) ** 0.5)
    kernel(
        [p for p, _ in pairs], [g for _, g in pairs],
        [state[p]["exp_avg"] for p, _ in pairs], [state[p]["exp_avg_sq"] for p, _ in pairs],
        step_sizes, corrections, group["lr"], beta1, beta2, group["eps"],
        group["weight_decay"], group["decoupled_weight_decay"],
    )  # fmt: skip
    for p, _ in pairs:  # written in place: whatever saved them must see it
        for t in (p, state[p]["exp_avg"], state[p]["exp_avg_sq"]):
            t._storage.version += 1
    return True


def _dense_like(t: Any, like: Tensor) -> bool:
    return (
        isinstance(t, Tensor)
        and t._dtype is like._dtype
        and t._device is like._device
        and t._contiguous
        and not t._offset
    )
