"""Converting a module's tensors in place (`to`, `float`, ...) and resetting gradients."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ember._ops.conversion import _parse_to_args
from ember._tensor import Tensor
from ember.autograd import _mode
from ember.nn.parameter import Parameter, UninitializedBuffer, adopt

if TYPE_CHECKING:
    from ember.nn.modules.module import Module

__all__ = ["apply_to_tensors", "to_converter", "zero_grad"]


def apply_to_tensors(module: Module, fn: Callable[[Tensor], Tensor]) -> None:
    """Apply `fn` to this module's own parameters (and their grads) and buffers.

    A parameter keeps its identity: its contents are replaced (PyTorch's `param.data = ...`),
    so optimizers and other references see the converted values.
    """
    for param in module._parameters.values():
        if param is None:
            continue
        with _mode.no_grad():
            adopt(param, fn(param))
            grad = param.grad
            if grad is not None:
                adopt(grad, fn(grad))
    for key, buf in module._buffers.items():
        if isinstance(buf, UninitializedBuffer):
            adopt(buf, fn(buf))  # stays uninitialized (lazy modules), on the new device/dtype
        elif buf is not None:
            module._buffers[key] = fn(buf)


def to_converter(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Callable[[Tensor], Tensor]:
    """The per-tensor conversion of `Module.to(*args, **kwargs)`."""
    kwargs = dict(kwargs)
    non_blocking = bool(kwargs.get("non_blocking", False))
    device, dtype, _ = _parse_to_args(args, kwargs)
    if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
        raise TypeError(
            "nn.Module.to only accepts floating point or complex dtypes, but got desired "
            f"dtype={dtype}"
        )

    def convert(t: Tensor) -> Tensor:
        target: dict[str, Any] = {"non_blocking": non_blocking}
        if device is not None:
            target["device"] = device
        if dtype is not None and t.is_floating_point():
            target["dtype"] = dtype
        return t.to(**target)

    return convert


def zero_grad(parameters: Iterable[Parameter], set_to_none: bool) -> None:
    """Set each parameter's `.grad` to None, or zero it in place."""
    for p in parameters:
        grad = p.grad
        if grad is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            if grad.grad_fn is not None:
                grad.detach_()
            else:
                grad.requires_grad_(False)
            grad.zero_()
