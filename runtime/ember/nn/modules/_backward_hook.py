"""Full backward hooks of a module call, wired into the autograd graph (PyTorch's BackwardHook).

The module's tensor inputs and outputs each pass through an identity node. When the
gradient reaches the outputs' node, the backward pre-hooks see (and may replace)
`grad_output`; when it reaches the inputs' node, the backward hooks see `grad_input` (the
gradients with respect to the module's inputs) and may replace it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from ember._ops import creation
from ember._tensor import Tensor, make_view
from ember.autograd import _mode
from ember.autograd._graph import edges_of
from ember.autograd._meta import AutogradMeta
from ember.autograd._node import Edge, Node
from ember.utils.hooks import HookRegistry

__all__ = ["BackwardHook"]

Grads = tuple[Tensor | None, ...]


class BackwardHookFunctionBackward(Node):
    """Identity over several tensors: a place in the graph to hang a module's hooks."""

    __slots__ = ("outputs",)

    def __init__(self, edges: tuple[Edge, ...], tensors: Sequence[Tensor]) -> None:
        super().__init__(edges, num_outputs=len(tensors))
        self.outputs = tuple((t._shape, t._dtype, t._device) for t in tensors)

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        # Missing gradients become zeros, as PyTorch materialises them for a custom
        # Function's backward: an unused input of a hooked module gets a zero gradient.
        return [
            grad if grad is not None else creation.zeros(shape, dtype=dtype, device=device)
            for grad, (shape, dtype, device) in zip(grads, self.outputs, strict=True)
        ]


def _pack(indices: Sequence[int], values: Sequence[Any], size: int) -> Grads:
    packed: list[Any] = [None] * size
    for index, value in zip(indices, values, strict=True):
        packed[index] = value
    return tuple(packed)


class BackwardHook:
    """The backward hooks of one module call (snapshots taken when the module was called)."""

    __slots__ = (
        "grad_outputs", "input_index", "module", "n_inputs", "n_outputs", "output_index",
        "user_hooks", "user_pre_hooks",
    )  # fmt: skip

    def __init__(self, module: Any, user_hooks: HookRegistry, user_pre_hooks: HookRegistry) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs: Grads | None = None
        self.n_inputs = -1
        self.n_outputs = -1
        self.input_index: list[int] | None = None
        self.output_index: list[int] | None = None

    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """Route the tensor arguments through a node whose post-hook runs the user hooks."""
        result, self.input_index = _wrap(args, self._input_hook)
        self.n_inputs = len(args)
        return result

    def setup_output_hook(self, output: Any) -> Any:
        """Route the output tensor(s) through a node whose post-hook runs the pre-hooks."""
        is_tuple = isinstance(output, tuple)
        outputs = output if is_tuple else (output,)
        result, self.output_index = _wrap(outputs, self._output_hook)
        self.n_outputs = len(outputs)
        return result if is_tuple else result[0]

    def _input_hook(self, grad_inputs: Grads, _grad_outputs: Grads) -> Grads | None:
        if self.grad_outputs is None:
            # The gradient reached the inputs without passing through the outputs.
            return None
        assert self.input_index is not None
        grads = self.user_hooks.run(
            _pack(self.input_index, grad_inputs, self.n_inputs), self._call_hook
        )
        self.grad_outputs = None
        return tuple(grads[i] for i in self.input_index)

    def _output_hook(self, _grad_inputs: Grads, grad_outputs: Grads) -> Grads | None:
        assert self.output_index is not None
        self.grad_outputs = _pack(self.output_index, grad_outputs, self.n_outputs)
        self.grad_outputs = self.user_pre_hooks.run(self.grad_outputs, self._call_pre_hook)
        local = self.grad_outputs
        if self.input_index is None:
            self._run_without_input_grads()
        return tuple(local[i] for i in self.output_index)

    def _call_hook(self, hook: Any, flags: dict[str, bool], grads: Grads) -> Grads | None:
        out = hook(self.module, grads, self.grad_outputs)
        if out is None:
            return None
        if len(out) != len(grads):
            raise RuntimeError(
                "Backward hook returned an invalid number of grad_input, "
                f"got {len(out)}, but expected {len(grads)}"
            )
        return tuple(out)

    def _call_pre_hook(self, hook: Any, flags: dict[str, bool], grads: Grads) -> Grads | None:
        out = hook(self.module, grads)
        if out is None:
            return None
        if len(out) != len(grads):
            raise RuntimeError(
                "Backward pre hook returned an invalid number of grad_output, "
                f"got {len(out)}, but expected {len(grads)}"
            )
        return tuple(out)

    def _run_without_input_grads(self) -> None:
        """No input requires grad: the hooks run here, with an all-None grad_input."""
        warnings.warn(
            "Full backward hook is firing when gradients are computed with respect to module "
            "outputs since no inputs require gradients.",
            stacklevel=5,
        )
        grad_inputs = (None,) * self.n_inputs
        for hook, _ in self.user_hooks.items():
            out = hook(self.module, grad_inputs, self.grad_outputs)
            if out is not None and not (isinstance(out, tuple) and all(g is None for g in out)):
                raise RuntimeError(
                    "Backward hook for Modules where no input requires gradient should always "
                    "return None or None for all gradients."
                )
        self.grad_outputs = None


def _wrap(
    args: tuple[Any, ...], hook: Callable[[Grads, Grads], Grads | None]
) -> tuple[tuple[Any, ...], list[int] | None]:
    """Pass the tensors among `args` through one identity node carrying `hook`."""
    index = [i for i, arg in enumerate(args) if isinstance(arg, Tensor)]
    tensors: list[Tensor] = [args[i] for i in index]
    if not (_mode.STATE.enabled and any(t.requires_grad for t in tensors)):
        return args, None
    node = BackwardHookFunctionBackward(edges_of(tensors), tensors)
    node.register_hook(hook)
    result = list(args)
    for output_nr, (i, t) in enumerate(zip(index, tensors, strict=True)):
        alias = make_view(t, t._offset, t._shape, t._strides)
        if t.requires_grad:
            alias._autograd = AutogradMeta(True, node, output_nr)
        result[i] = alias
    # A named tuple of outputs keeps its type.
    return (tuple(result) if type(args) is tuple else type(args)(*result)), index
