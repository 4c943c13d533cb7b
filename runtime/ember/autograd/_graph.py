"""The recorded graph: per-tensor autograd metadata, nodes, saved tensors, recording.

Ops record a `FormulaNode` when grad mode is on and an input requires grad. The node keeps
its inputs' edges (`next_functions`), what the derivative formula needs (saved tensors,
checked against the storage version counters), and the inputs' shapes and dtypes, so that
gradients of broadcast or promoted inputs are reduced and cast back here, once, rather than
in every formula.
"""

from __future__ import annotations

import itertools
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from ember._tensor import Tensor, make_view
from ember.autograd import _mode

__all__ = ["AccumulateGrad", "AutogradMeta", "FormulaNode", "Node", "needs_grad", "record"]

Edge = tuple["Node | None", int]
_sequence = itertools.count()


class AutogradMeta:
    """What a tensor taking part in autograd carries (None on every other tensor)."""

    __slots__ = (
        "accumulator", "grad", "grad_fn", "output_nr", "post_accumulate_hooks", "requires_grad",
        "retains_grad", "tensor_hooks",
    )  # fmt: skip

    def __init__(
        self, requires_grad: bool, grad_fn: Node | None = None, output_nr: int = 0
    ) -> None:
        self.requires_grad = requires_grad
        self.grad: Tensor | None = None
        self.grad_fn = grad_fn
        self.output_nr = output_nr
        self.retains_grad = False
        self.accumulator: AccumulateGrad | None = None
        # Hooks on the gradient of this tensor (leaves: run before accumulation).
        self.tensor_hooks: dict[int, Callable[[Tensor], Tensor | None]] | None = None
        self.post_accumulate_hooks: dict[int, Callable[[Tensor], None]] | None = None


def meta_of(t: Tensor) -> AutogradMeta:
    """`t`'s autograd metadata, created on first use."""
    meta: AutogradMeta | None = t._autograd
    if meta is None:
        meta = t._autograd = AutogradMeta(False)
    return meta


class Node:
    """A backward function in the graph (PyTorch's `grad_fn`)."""

    __slots__ = (
        "__weakref__", "_post_hooks", "_pre_hooks", "_tensor_hooks", "next_functions",
        "num_outputs", "sequence_nr", "trace",
    )  # fmt: skip

    def __init__(self, next_functions: tuple[Edge, ...], num_outputs: int = 1) -> None:
        self.next_functions = next_functions
        self.num_outputs = num_outputs
        # Hooks of non-leaf tensors produced by this node: id -> (output_nr, hook).
        self._tensor_hooks: dict[int, tuple[int, Callable[[Tensor], Tensor | None]]] | None = None
        self.sequence_nr = next(_sequence)
        self._pre_hooks: dict[int, Callable[..., Any]] | None = None
        self._post_hooks: dict[int, Callable[..., Any]] | None = None
        self.trace: list[str] | None = traceback.format_stack()[:-3] if ANOMALY.enabled else None

    def name(self) -> str:
        return type(self).__name__

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        raise NotImplementedError

    def release(self) -> None:
        """Free what backward needed (after a backward without retain_graph)."""

    def register_hook(self, hook: Callable[..., Any]) -> Any:
        """hook(grad_inputs, grad_outputs) after this node ran; may replace grad_inputs."""
        from ember.utils.hooks import RemovableHandle

        if self._post_hooks is None:
            self._post_hooks = {}
        handle = RemovableHandle(self._post_hooks)
        self._post_hooks[handle.id] = hook
        return handle

    def register_prehook(self, hook: Callable[..., Any]) -> Any:
        """hook(grad_outputs) before this node runs; may replace grad_outputs."""
        from ember.utils.hooks import RemovableHandle

        if self._pre_hooks is None:
            self._pre_hooks = {}
        handle = RemovableHandle(self._pre_hooks)
        self._pre_hooks[handle.id] = hook
        return handle

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"


class AccumulateGrad(Node):
    """The sink of a leaf tensor: adds incoming gradients into `.grad`."""

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor) -> None:
        super().__init__(())
        self.variable = variable

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        return ()


class _Anomaly:
    enabled = False


ANOMALY = _Anomaly()


class SavedTensor:
    """A tensor kept for backward, with the version it had when saved."""

    __slots__ = ("data", "grad_fn", "is_output", "output_nr", "tensor", "version")

    def __init__(self, t: Tensor, is_output: bool) -> None:
        self.version = t._storage.version
        self.is_output = is_output
        if is_output:
            # Keeping the output itself would make a cycle output -> node -> output.
            self.data: Tensor | None = make_view(t, t._offset, t._shape, t._strides)
            self.tensor: Tensor | None = None
            self.output_nr = t._autograd.output_nr if t._autograd is not None else 0
        else:
            self.data = None
            self.tensor = t
            self.output_nr = 0

    def unpack(self, node: Node) -> Tensor:
        t = self.data if self.is_output else self.tensor
        if t is None:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph a second time."
            )
        if t._storage.version != self.version:
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{t._dtype.name}{list(t._shape)}], which is "
                f"{'output' if self.is_output else 'an input'} of {node.name()}, is at version "
                f"{t._storage.version}; expected version {self.version} instead."
            )
        if self.is_output and _mode.STATE.enabled:
            # create_graph: the output is differentiable again, through this node.
            view = make_view(t, t._offset, t._shape, t._strides)
            view._autograd = AutogradMeta(True, node, self.output_nr)
            return view
        return t

    def release(self) -> None:
        self.data = None
        self.tensor = None


Formula = Callable[["FormulaNode", Tensor], Sequence[Any]]


class FormulaNode(Node):
    """A node whose backward is a derivative formula written in ember ops."""

    __slots__ = ("_formula", "_name", "_saved", "ctx", "input_meta")

    def __init__(
        self, name: str, formula: Formula, edges: tuple[Edge, ...],
        input_meta: tuple[tuple[Any, Any] | None, ...], saved: tuple[SavedTensor, ...], ctx: Any,
    ) -> None:  # fmt: skip
        super().__init__(edges)
        self._name = name
        self._formula = formula
        self._saved: tuple[SavedTensor, ...] | None = saved
        self.input_meta = input_meta
        self.ctx = ctx

    def name(self) -> str:
        return self._name

    @property
    def saved(self) -> tuple[Tensor, ...]:
        """The saved tensors, checked for in-place modification."""
        if self._saved is None:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Specify retain_graph=True if you "
                "need to backward through the graph a second time."
            )
        return tuple(s.unpack(self) for s in self._saved)

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        grad = grads[0]
        if grad is None:
            return (None,) * len(self.next_functions)
        results = self._formula(self, grad)
        return [
            _conform(g, meta) if g is not None and meta is not None else None
            for g, meta in zip(results, self.input_meta, strict=True)
        ]

    def release(self) -> None:
        if self._saved is not None:
            for s in self._saved:
                s.release()
        self._saved = None


def _conform(grad: Tensor, meta: tuple[Any, Any]) -> Tensor:
    """Reduce a gradient to its input's shape (undo broadcasting) and dtype."""
    from ember._ops import conversion, reduction

    shape, dtype = meta
    if grad._shape != shape:
        grad = sum_to_shape(grad, shape, reduction)
    if grad._dtype is not dtype:
        grad = conversion.to(grad, dtype)
    return grad


def sum_to_shape(grad: Tensor, shape: tuple[int, ...], reduction: Any) -> Tensor:
    lead = len(grad._shape) - len(shape)
    dims = list(range(lead))
    dims += [lead + i for i, size in enumerate(shape) if size == 1 and grad._shape[lead + i] != 1]
    result = reduction.sum(grad, dims, keepdim=True) if dims else grad
    from ember._ops import shape as shape_ops

    return shape_ops.reshape(result, shape)


def needs_grad(*tensors: Any) -> bool:
    """Whether an op on these operands must record the graph."""
    if not _mode.STATE.enabled:
        return False
    for t in tensors:
        if isinstance(t, Tensor) and t._autograd is not None and t._autograd.requires_grad:
            return True
    return False


def edge_of(t: Tensor) -> Edge:
    """Where the gradient of `t` goes: its grad_fn, or its leaf accumulator."""
    meta = t._autograd
    if meta is None or not meta.requires_grad:
        return (None, 0)
    if meta.grad_fn is not None:
        return (meta.grad_fn, meta.output_nr)
    if meta.accumulator is None:
        meta.accumulator = AccumulateGrad(t)
    return (meta.accumulator, 0)


def record(
    name: str,
    formula: Formula,
    inputs: Sequence[Any],
    output: Tensor,
    save: Sequence[Tensor] = (),
    save_output: bool = False,
    ctx: Any = None,
) -> Tensor:
    """Attach a FormulaNode to `output`.

    `formula(node, grad)` returns one gradient (or None) per entry of `inputs`; non-tensor
    inputs get None. Tensors in `save` are available as `node.saved` (then the output last,
    when `save_output`), and `ctx` carries any plain data the formula needs.
    """
    edges = []
    input_meta: list[tuple[Any, Any] | None] = []
    for x in inputs:
        if isinstance(x, Tensor) and x._autograd is not None and x._autograd.requires_grad:
            edges.append(edge_of(x))
            input_meta.append((x._shape, x._dtype))
        else:
            edges.append((None, 0))
            input_meta.append(None)
    saved = [SavedTensor(t, False) for t in save]
    meta = AutogradMeta(True, None, 0)
    output._autograd = meta
    node = FormulaNode(name, formula, tuple(edges), tuple(input_meta), (), ctx)
    meta.grad_fn = node
    if save_output:
        saved.append(SavedTensor(output, True))
    node._saved = tuple(saved)
    return output
