"""Tensor-level autograd entry points: backward, grad, requires_grad, hooks, retain_grad."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

from ember import _upper
from ember._tensor import Tensor
from ember.autograd._engine import run_backward
from ember.autograd._meta import AutogradMeta, meta_of
from ember.utils.hooks import HookRegistry, RemovableHandle

__all__ = ["backward", "grad"]


def _as_list(value: Tensor | Sequence[Any]) -> list[Any]:
    return [value] if isinstance(value, Tensor) else list(value)


def _default_grads(outputs: list[Tensor], grads: list[Any] | None) -> list[Tensor]:
    """The gradient of each output: given, or ones for a one-element output."""
    conversion, creation = _upper.ops.conversion, _upper.ops.creation
    if grads is not None and len(grads) != len(outputs):
        raise RuntimeError(
            f"grad requires one gradient per output: got {len(grads)} gradients and "
            f"{len(outputs)} outputs"
        )
    result = []
    for i, t in enumerate(outputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected a Tensor as output {i}, got {type(t).__name__}")
        g = None if grads is None else grads[i]
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not t._dtype.is_floating_point:
                raise RuntimeError(
                    "grad can be implicitly created only for real scalar outputs but got "
                    f"{t._dtype}"
                )
            g = creation.ones_like(t)
        elif not isinstance(g, Tensor):
            g = creation.full_like(t, g)
        else:
            if g._shape != t._shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {list(g._shape)} and "
                    f"output[{i}] has a shape of {list(t._shape)}."
                )
            if g._device is not t._device:
                raise RuntimeError(
                    f"invalid gradient at index {i} - expected device {t._device} but got "
                    f"{g._device}"
                )
            if g._dtype is not t._dtype:
                g = conversion.to(g, t._dtype)
        result.append(g)
    return result


def backward(
    tensors: Tensor | Sequence[Tensor],
    grad_tensors: Tensor | Sequence[Any] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Tensor | Sequence[Tensor] | None = None,
) -> None:
    """Accumulate gradients of `tensors` into the `.grad` of the leaves they depend on
    (or of `inputs` only, when given)."""
    outputs = _as_list(tensors)
    grads = _default_grads(outputs, None if grad_tensors is None else _as_list(grad_tensors))
    retain = create_graph if retain_graph is None else retain_graph
    chosen = None if inputs is None else _as_list(inputs)
    if chosen is not None and not chosen:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    run_backward(outputs, grads, retain, create_graph, chosen, accumulate=True)


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Tensor | Sequence[Any] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]:
    """The gradients of `outputs` with respect to `inputs` (nothing accumulates in `.grad`)."""
    creation = _upper.ops.creation
    if is_grads_batched:
        raise NotImplementedError("autograd.grad(is_grads_batched=True) is not supported")
    if allow_unused is None:
        allow_unused = materialize_grads
    elif materialize_grads and not allow_unused:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    output_list = _as_list(outputs)
    input_list = _as_list(inputs)
    grads = _default_grads(output_list, None if grad_outputs is None else _as_list(grad_outputs))
    retain = create_graph if retain_graph is None else retain_graph
    captured = run_backward(output_list, grads, retain, create_graph, input_list, accumulate=False)
    result: list[Tensor | None] = []
    for t, g in zip(input_list, captured, strict=True):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:
                g = creation.zeros_like(t)
        result.append(g)
    return tuple(result)


def set_requires_grad(t: Tensor, value: bool) -> None:
    """`t.requires_grad = value` (leaves only; float dtypes only)."""
    meta = t._autograd
    if meta is not None and meta.grad_fn is not None:
        if not value:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        return
    if value and not t._dtype.is_floating_point:
        raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
    if meta is None:
        if value:
            t._autograd = AutogradMeta(True)
        return
    meta.requires_grad = value


def set_grad(t: Tensor, value: Tensor | None) -> None:
    """`t.grad = value`, checked as PyTorch checks it."""
    if value is not None:
        if not isinstance(value, Tensor):
            raise TypeError(
                f"assigned grad expected to be a Tensor or None but got {type(value).__name__}"
            )
        if value._dtype is not t._dtype:
            raise RuntimeError("assigned grad has data of a different type")
        if value._shape != t._shape:
            raise RuntimeError("assigned grad has data of a different size")
        if value._device is not t._device:
            raise RuntimeError("assigned grad has data located on a different device")
    meta_of(t).grad = value


def _requiring_meta(t: Tensor, message: str) -> AutogradMeta:
    meta = t._autograd
    if meta is None or not meta.requires_grad:
        raise RuntimeError(message)
    return meta


def register_hook(t: Tensor, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
    """Run `hook(grad)` when the gradient of `t` is computed; it may return a replacement."""
    meta = _requiring_meta(t, "cannot register a hook on a tensor that doesn't require gradient")
    if meta.grad_fn is None:
        if meta.hooks is None:
            meta.hooks = HookRegistry()
        return meta.hooks.add(hook)
    registries = meta.grad_fn.hooks().tensor
    registry = registries.get(meta.output_nr)
    if registry is None:
        registry = registries[meta.output_nr] = HookRegistry()
    return registry.add(hook)


def retain_grad(t: Tensor) -> None:
    """Keep `.grad` of a non-leaf tensor after backward (after its other hooks ran)."""
    meta = _requiring_meta(t, "can't retain_grad on Tensor that has requires_grad=False")
    if meta.grad_fn is None or meta.retains_grad:
        return
    meta.retains_grad = True
    meta.grad_fn.hooks().retained[meta.output_nr] = weakref.ref(meta)


def register_post_accumulate_grad_hook(
    t: Tensor, hook: Callable[[Tensor], None]
) -> RemovableHandle:
    """Run `hook(tensor)` after `.grad` of leaf `t` was updated."""
    meta = _requiring_meta(t, "cannot register a hook on a tensor that doesn't require gradient")
    if meta.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if meta.post_accumulate_hooks is None:
        meta.post_accumulate_hooks = HookRegistry()
    return meta.post_accumulate_hooks.add(hook)
