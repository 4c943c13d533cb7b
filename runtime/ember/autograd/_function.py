"""Custom differentiable functions: `ember.autograd.Function`, as in PyTorch.

`F.apply(*args)` runs `F.forward(ctx, *args)` with grad mode off, then makes the context
the outputs' grad_fn: `ctx` is an instance of the generated node class `FBackward`, so
`y.grad_fn` is the same object the user's forward and backward see.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, ClassVar

from ember import _upper
from ember._tensor import Tensor, make_view
from ember.autograd import _mode
from ember.autograd._graph import edges_of
from ember.autograd._meta import AutogradMeta, nonleaf_meta
from ember.autograd._node import NO_EDGE, Node, conform, init_node
from ember.autograd._saved import alias, metas_of, unpack, versions_of

__all__ = ["BackwardCFunction", "Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """What `forward` uses to pass information to `backward`."""

    to_save: tuple[Any, ...]
    non_differentiable: tuple[Tensor, ...]
    dirty_tensors: tuple[Tensor, ...]
    materialize_grads: bool

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep tensors (inputs, outputs or None) for backward, checked for in-place changes."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    "save_for_backward can only save variables, but argument "
                    f"{tensors.index(t)} is of type {type(t).__name__}"
                )
        self.to_save = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Outputs that don't require grad (their gradient in backward is zeros or None)."""
        self.non_differentiable = tensors

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Inputs that forward modified in place (they must be returned as outputs)."""
        self.dirty_tensors = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether backward gets zeros (default) or None for outputs without a gradient."""
        self.materialize_grads = value


class BackwardCFunction(Node, FunctionCtx):
    """The node of one custom-function call; it is also that call's `ctx`."""

    # No __slots__ here: ctx takes arbitrary attributes (ctx.constant = 2), as in PyTorch.
    _forward_cls: ClassVar[type[Function]]
    needs_input_grad: tuple[bool, ...]
    _saved: tuple[Tensor | None, ...] | None
    _versions: tuple[int, ...]
    _metas: tuple[Any, ...]
    _outputs: tuple[int, ...] | None
    _tensor_inputs: tuple[int, ...]
    _input_meta: tuple[tuple[Any, Any, Any] | None, ...]
    _output_meta: tuple[tuple[Any, Any, Any] | None, ...]

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        """The tensors given to `save_for_backward`, checked for in-place modification."""
        return unpack(self, self._saved, self._versions, self._metas, self._outputs)

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        if self.materialize_grads:
            grads = [
                _zeros(meta) if g is None and meta else g
                for g, meta in zip(grads, self._output_meta, strict=True)
            ]
        result = self._forward_cls.backward(self, *grads)
        results = list(result) if isinstance(result, tuple) else [result]
        return _validate(self, results)

    def release(self) -> None:
        self._saved = None


def _zeros(meta: tuple[Any, Any, Any]) -> Tensor:
    shape, dtype, device = meta
    return _upper.ops.creation.zeros(shape, dtype=dtype, device=device)


def _validate(node: BackwardCFunction, results: list[Any]) -> list[Tensor | None]:
    """One gradient per tensor input: counted, shaped and typed as PyTorch checks them."""
    expected = len(node.needs_input_grad)
    if len(results) > expected and all(r is None for r in results[expected:]):
        results = results[:expected]
    if len(results) != expected:
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients "
            f"(expected {expected}, got {len(results)})"
        )
    grads: list[Tensor | None] = []
    tensor_inputs = set(node._tensor_inputs)
    for i, g in enumerate(results):
        if i not in tensor_inputs:
            if g is not None:
                raise RuntimeError(
                    f"function {node.name()} returned a gradient different than None at "
                    f"position {i + 1}, but the corresponding forward input was not a Variable"
                )
            continue
        meta = node._input_meta[i]
        if g is None or meta is None:
            grads.append(None)
            continue
        if not isinstance(g, Tensor):
            raise TypeError(
                f"function {node.name()} returned a {type(g).__name__} as gradient {i}; "
                "expected a Tensor or None"
            )
        shape, dtype, _ = meta
        if g._shape != shape and not _expandable(shape, g._shape):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {i} - got "
                f"{list(g._shape)} but expected shape compatible with {list(shape)}"
            )
        grads.append(conform(g, shape, dtype))
    return grads


def _expandable(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether `shape` broadcasts to `target` (so a gradient of `target` sums back to it)."""
    if len(shape) > len(target):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(target), strict=False))


class _FunctionMeta(type):
    """Gives each Function subclass its node class, `<Name>Backward`."""

    def __init__(cls, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> None:
        node_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        cls._backward_cls = node_cls
        super().__init__(name, bases, namespace)


class Function(metaclass=_FunctionMeta):
    """Base class of custom functions: define `forward` and `backward` staticmethods and
    call `F.apply(*args)`."""

    _backward_cls: ClassVar[type[BackwardCFunction]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(
            "Function objects are not instantiated: call the class's apply() "
            f"(e.g. {type(self).__name__}.apply(...)) instead"
        )

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        """Compute the outputs (grad mode is off here)."""
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        """Optional: fill `ctx` from the inputs and outputs of a ctx-less `forward`."""
        raise NotImplementedError("setup_context is not overridden")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        """The gradients of the inputs (one per forward argument, None where there is none)."""
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run the function, recording it in the graph when an input requires grad."""
        ctx = _new_ctx(cls, args)
        separate = cls.setup_context is not Function.setup_context
        with _mode.no_grad():
            if separate:
                outputs = cls.forward(*args, **kwargs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        if separate:
            with _mode.no_grad():
                cls.setup_context(ctx, args, outputs)
        return _wrap_outputs(ctx, args, outputs)


def _new_ctx(cls: type[Function], args: tuple[Any, ...]) -> BackwardCFunction:
    tensor_inputs = [i for i, x in enumerate(args) if isinstance(x, Tensor)]
    tensors = [args[i] for i in tensor_inputs]
    # Under no_grad nothing records: every edge is NO_EDGE.
    edges = edges_of(tensors if _mode.STATE.enabled else ())
    edges += (NO_EDGE,) * (len(tensors) - len(edges))
    needs = [False] * len(args)
    input_meta: list[tuple[Any, Any, Any] | None] = [None] * len(args)
    for i, x, (node, _) in zip(tensor_inputs, tensors, edges, strict=True):
        if node is not None:
            needs[i] = True
            input_meta[i] = (x._shape, x._dtype, x._device)
    ctx = cls._backward_cls.__new__(cls._backward_cls)
    init_node(ctx, edges)
    ctx.needs_input_grad = tuple(needs)
    ctx._tensor_inputs = tuple(tensor_inputs)
    ctx._input_meta = tuple(input_meta)
    ctx.to_save = ()
    ctx.non_differentiable = ()
    ctx.dirty_tensors = ()
    ctx.materialize_grads = True
    ctx._saved = ()
    ctx._versions = ctx._metas = ()
    ctx._outputs = None
    ctx._output_meta = ()
    return ctx


def _wrap_outputs(ctx: BackwardCFunction, args: tuple[Any, ...], outputs: Any) -> Any:
    """Make `ctx` the grad_fn of the differentiable outputs; save what ctx asked to save."""
    single = not isinstance(outputs, tuple)
    results = [outputs] if single else list(outputs)
    is_executable = any(ctx.needs_input_grad)
    non_diff = {id(t) for t in ctx.non_differentiable}
    dirty = {id(t) for t in ctx.dirty_tensors}
    inputs = {id(x) for x in args if isinstance(x, Tensor)}
    ctx.num_outputs = len(results)
    output_meta: list[tuple[Any, Any, Any] | None] = []
    for nr, out in enumerate(results):
        if not isinstance(out, Tensor):
            output_meta.append(None)
            continue
        output_meta.append((out._shape, out._dtype, out._device))
        if id(out) in dirty:
            _check_dirty(out)
        elif id(out) in inputs:
            # An input returned as is becomes a new tensor (an alias) with its own history.
            out = results[nr] = make_view(out, out._offset, out._shape, out._strides)
        if not is_executable:
            continue
        if id(out) in non_diff or not out._dtype.is_floating_point:
            out._autograd = AutogradMeta(False) if id(out) in dirty else None
            continue
        out._autograd = nonleaf_meta(ctx, nr)
    ctx._output_meta = tuple(output_meta)
    _save(ctx, results if is_executable else [])
    return results[0] if single else tuple(results)


def _save(ctx: BackwardCFunction, outputs: list[Any]) -> None:
    """Keep what forward passed to save_for_backward; outputs among it as aliases."""
    saved: list[Tensor | None] = list(ctx.to_save)
    numbers = [-1] * len(saved)
    for i, t in enumerate(saved):
        for nr, out in enumerate(outputs):
            if t is not None and out is t:
                saved[i] = alias(t)
                numbers[i] = nr
                break
    ctx._versions = versions_of(saved) if saved else ()
    ctx._metas = metas_of(ctx.to_save) if saved else ()
    ctx._outputs = tuple(numbers) if any(n >= 0 for n in numbers) else None
    ctx._saved = tuple(saved)
    ctx.to_save = ()


def _check_dirty(t: Tensor) -> None:
    meta = t._autograd
    if meta is not None and meta.requires_grad and meta.grad_fn is None and _mode.STATE.enabled:
        raise RuntimeError(
            "a leaf Variable that requires grad has been used in an in-place operation."
        )


def once_differentiable(fn: Any) -> Any:
    """Mark a backward as not itself differentiable: it runs with grad mode off."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *grads: Any) -> Any:
        with _mode.no_grad():
            return fn(ctx, *grads)

    return wrapper
