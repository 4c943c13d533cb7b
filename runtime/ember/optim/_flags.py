"""The flags every PyTorch optimizer takes beside its formula's options.

`foreach`, `capturable`, `differentiable` and `fused` are accepted and kept in each group (so
state dicts have PyTorch's layout): ember's steps always run under no_grad with the step
counters on the host, which is PyTorch's default, non-capturable path. `foreach` is
honoured where a multi-tensor kernel exists: Adam and AdamW hand a whole group to a
device's fused `adam_step` unless `foreach=False` (optim/_multi_tensor_adam.py); elsewhere
the per-tensor loop is the only implementation.
"""

from __future__ import annotations

from typing import Any

__all__ = ["check_non_negative", "flags"]


def flags(
    *,
    foreach: bool | None = None,
    maximize: bool = False,
    capturable: bool | None = None,
    differentiable: bool = False,
    fused: bool | None = None,
) -> dict[str, Any]:
    """The flag entries of a defaults dict, in the form PyTorch stores them."""
    if fused:
        raise RuntimeError("`fused` is not supported by ember's optimizers")
    result: dict[str, Any] = {
        "foreach": foreach,
        "maximize": maximize,
        "differentiable": differentiable,
    }
    if capturable is not None:
        result["capturable"] = capturable
    return result


def check_non_negative(**values: float) -> None:
    """PyTorch's `Invalid <name> value` checks."""
    names = {"lr": "learning rate", "eps": "epsilon value"}
    for name, value in values.items():
        if not value >= 0.0:
            raise ValueError(f"Invalid {names.get(name, name + ' value')}: {value}")
