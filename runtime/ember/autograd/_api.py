"""Tensor-level autograd entry points: backward, grad, requires_grad, hooks, retain_grad."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ember._tensor import Tensor
from ember.autograd._engine import run_backward
from ember.autograd._graph import AutogradMeta, edge_of, meta_of

__all__ = ["backward", "grad"]


def _as_sequence(value: Tensor | Sequence[Tensor]) -> list[Tensor]:
    return [value] if isinstance(value, Tensor) else list(value)


def _default_grads(outputs: list[Tensor], grads: Sequence[Any] | None) -> list[Tensor]:
    from ember._ops import creation

    result = []
    for i, t in enumerate(outputs):
        g = None if grads is None else grads[i]
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = creation.ones_like(t)
        elif not isinstance(g, Tensor):
            g = creation.full_like(t, g)
        elif g._shape != t._shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {list(g._shape)} and "
                f"output[{i}] has a shape of {list(t._shape)}."
            )
        result.append(g)
    return result


def backward(
    tensors: Tensor | Sequence[Tensor],
    grad_tensors: Tensor | Sequence[Any] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Sequence[Tensor] | None = None,
) -> None:
    """Accumulate gradients of `tensors` into the `.grad` of the leaves they depend on."""
    outputs = _as_sequence(tensors)
    grads = _default_grads(
        outputs, _as_sequence(grad_tensors) if grad_tensors is not None else None
    )
    for t in outputs:
        if edge_of(t)[0] is None:
            raise RuntimeError(
                "element 0 of tensors does not require grad and does not have a grad_fn"
            )
    retain = create_graph if retain_graph is None else retain_graph
    if inputs is not None:
        captured = run_backward(outputs, grads, retain, create_graph, list(inputs))
        for t, g in zip(inputs, captured, strict=True):
            if g is not None:
                meta = meta_of(t)
                meta.grad = g if meta.grad is None else meta.grad + g
        return
    run_backward(outputs, grads, retain, create_graph)


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Tensor | Sequence[Any] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]:
    """The gradients of `outputs` with respect to `inputs` (nothing accumulates in `.grad`)."""
    from ember._ops import creation

    output_list = _as_sequence(outputs)
    input_list = _as_sequence(inputs)
    grads = _default_grads(
        output_list, _as_sequence(grad_outputs) if grad_outputs is not None else None
    )
    retain = create_graph if retain_graph is None else retain_graph
    captured = run_backward(output_list, grads, retain, create_graph, input_list)
    result: list[Tensor | None] = []
    for t, g in zip(input_list, captured, strict=True):
        if g is None:
            if materialize_grads:
                g = creation.zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
        result.append(g)
    return tuple(result)


def set_requires_grad(t: Tensor, value: bool) -> None:
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
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    if meta is None:
        if value:
            t._autograd = AutogradMeta(True)
        return
    meta.requires_grad = value


def set_grad(t: Tensor, value: Tensor | None) -> None:
    if value is not None:
        if not isinstance(value, Tensor):
            raise TypeError(
                f"assigned grad expected to be a Tensor or None but got {type(value).__name__}"
            )
        if value._shape != t._shape:
            raise RuntimeError(
                f"assigned grad has data of a different size: {list(value._shape)} vs "
                f"{list(t._shape)}"
            )
        if value._device is not t._device:
            raise RuntimeError(
                f"assigned grad is on {value._device} but the tensor is on {t._device}"
            )
    meta_of(t).grad = value


def register_hook(t: Tensor, hook: Callable[[Tensor], Tensor | None]) -> Any:
    """Run `hook(grad)` when the gradient of `t` is computed; it may return a replacement."""
    from ember.utils.hooks import RemovableHandle

    meta = t._autograd
    if meta is None or not meta.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if meta.grad_fn is None:
        if meta.tensor_hooks is None:
            meta.tensor_hooks = {}
        handle = RemovableHandle(meta.tensor_hooks)
        meta.tensor_hooks[handle.id] = hook
        return handle
    node = meta.grad_fn
    if node._tensor_hooks is None:
        node._tensor_hooks = {}
    handle = RemovableHandle(node._tensor_hooks)
    node._tensor_hooks[handle.id] = (meta.output_nr, hook)
    return handle


def retain_grad(t: Tensor) -> None:
    """Keep `.grad` of a non-leaf tensor after backward."""
    meta = t._autograd
    if meta is None or not meta.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if meta.grad_fn is None or meta.retains_grad:
        return
    meta.retains_grad = True

    def keep(grad: Tensor) -> None:
        stored = meta.grad
        meta.grad = grad.detach() if stored is None else stored + grad.detach()

    register_hook(t, keep)


def register_post_accumulate_grad_hook(t: Tensor, hook: Callable[[Tensor], None]) -> Any:
    """Run `hook(tensor)` after `.grad` of leaf `t` was updated."""
    from ember.utils.hooks import RemovableHandle

    meta = t._autograd
    if meta is None or not meta.requires_grad or meta.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if meta.post_accumulate_hooks is None:
        meta.post_accumulate_hooks = {}
    handle = RemovableHandle(meta.post_accumulate_hooks)
    meta.post_accumulate_hooks[handle.id] = hook
    return handle
