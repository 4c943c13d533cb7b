"""The recorded graph: per-tensor autograd metadata, nodes, and recording.

Ops record a `FormulaNode` when grad mode is on and an input requires grad. The node keeps
its inputs' edges (`next_functions`), what the derivative formula needs (saved tensors,
checked against the storage version counters, see _saved.py), and the shape and dtype of
each input that differs from the output's, so that gradients of broadcast or promoted
inputs are reduced and cast back here, once, rather than in every formula.

Recording is on the hot path of every op that touches a tensor requiring grad, so objects
are built with `object.__new__` and direct slot stores, without `__init__` chains.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from ember import _ops
from ember._ops import _launch
from ember._tensor import Tensor
from ember.autograd import _mode, _views
from ember.autograd._anomaly import ANOMALY, forward_trace
from ember.autograd._saved import alias, metas_of, unpack, versions_of
from ember.utils.hooks import HookRegistry, RemovableHandle

__all__ = [
    "AccumulateGrad", "AutogradMeta", "FormulaNode", "Node", "before_write", "check_inplace",
    "edge_of", "meta_of", "needs_grad", "nonleaf_meta", "record", "record_elementwise",
    "write_back",
]  # fmt: skip

Edge = tuple["Node | None", int]
NO_EDGE: Edge = (None, 0)
_sequence = itertools.count()
_new = object.__new__
_STATE = _mode.STATE


class AutogradMeta:
    """What a tensor taking part in autograd carries (None on every other tensor).

    Leaves keep their gradient hooks here; hooks of non-leaf tensors live on their
    grad_fn, keyed by output number, as in PyTorch.
    """

    __slots__ = (
        "__weakref__", "accumulator", "base", "grad", "grad_fn", "hooks", "output_nr",
        "post_accumulate_hooks", "requires_grad", "retains_grad", "view_version",
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
        self.hooks: HookRegistry | None = None
        self.post_accumulate_hooks: HookRegistry | None = None
        # Views (see _views.py): the root base, and the storage version the view was made at.
        self.base: Tensor | None = None
        self.view_version = 0


def nonleaf_meta(node: Node, output_nr: int) -> AutogradMeta:
    """Metadata of output `output_nr` of `node` (the recording fast path)."""
    meta: AutogradMeta = _new(AutogradMeta)
    meta.requires_grad = True
    meta.grad = None
    meta.grad_fn = node
    meta.output_nr = output_nr
    meta.retains_grad = False
    meta.accumulator = None
    meta.hooks = None
    meta.post_accumulate_hooks = None
    meta.base = None
    return meta


def meta_of(t: Tensor) -> AutogradMeta:
    """`t`'s autograd metadata, created on first use."""
    meta: AutogradMeta | None = t._autograd
    if meta is None:
        meta = t._autograd = AutogradMeta(False)
    return meta


class NodeHooks:
    """A node's hooks, created on the first registration (most nodes never have any)."""

    __slots__ = ("post", "pre", "retained", "tensor")

    def __init__(self) -> None:
        self.pre = HookRegistry()  # hook(grad_outputs) -> replacement or None
        self.post = HookRegistry()  # hook(grad_inputs, grad_outputs) -> replacement or None
        # Hooks of the non-leaf tensors this node produced, per output number.
        self.tensor: dict[int, HookRegistry] = {}
        # Output number -> metadata of the non-leaf tensor that retains its grad.
        self.retained: dict[int, Any] = {}


class Node:
    """A backward function in the graph (PyTorch's `grad_fn`)."""

    __slots__ = ("__weakref__", "_hooks", "next_functions", "num_outputs", "sequence_nr", "trace")

    next_functions: tuple[Edge, ...]
    num_outputs: int
    sequence_nr: int
    trace: list[str] | None
    _hooks: NodeHooks | None

    def __init__(self, next_functions: tuple[Edge, ...], num_outputs: int = 1) -> None:
        self.next_functions = next_functions
        self.num_outputs = num_outputs
        self.sequence_nr = next(_sequence)
        self._hooks = None
        self.trace = forward_trace() if ANOMALY.enabled else None

    def name(self) -> str:
        """The node's name, as PyTorch prints it (e.g. "MulBackward")."""
        return type(self).__name__

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        """The gradients of the forward's inputs, given those of its outputs."""
        raise NotImplementedError

    def release(self) -> None:
        """Free what backward needed (after a backward without retain_graph)."""

    def hooks(self) -> NodeHooks:
        if self._hooks is None:
            self._hooks = NodeHooks()
        return self._hooks

    def register_hook(self, hook: Callable[..., Any], *, prepend: bool = False) -> RemovableHandle:
        """hook(grad_inputs, grad_outputs) after this node ran; may replace grad_inputs."""
        return self.hooks().post.add(hook, prepend=prepend)

    def register_prehook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """hook(grad_outputs) before this node runs; may replace grad_outputs."""
        return self.hooks().pre.add(hook)

    def __call__(self, *grads: Tensor | None) -> Any:
        """Run the node's backward directly (as PyTorch's Node.__call__)."""
        result = self.apply(list(grads))
        return result[0] if len(result) == 1 else tuple(result)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"


class AccumulateGrad(Node):
    """The sink of a leaf tensor: the engine adds incoming gradients into its `.grad`.

    The leaf's metadata keeps its accumulator and the accumulator refers to the leaf weakly,
    so no reference cycle keeps a dropped leaf (and its `.grad`) alive.
    """

    __slots__ = ("_variable",)

    def __init__(self, variable: Tensor) -> None:
        super().__init__(())
        self._variable = weakref.ref(variable)

    @property
    def variable(self) -> Tensor | None:
        """The leaf tensor (None once it was garbage collected)."""
        return self._variable()

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        return ()


Formula = Callable[["FormulaNode", Tensor], Sequence[Any]]


class FormulaNode(Node):
    """A node whose backward is a derivative formula written in ember ops."""

    __slots__ = (
        "_formula", "_metas", "_name", "_outputs", "_saved", "_versions", "ctx", "input_meta",
    )  # fmt: skip

    _formula: Formula
    _name: str
    # The saved tensors (None once freed), their versions and metadata when saved, and
    # which of them is the node's output (see _saved.py).
    _saved: tuple[Tensor | None, ...] | None
    _versions: tuple[int, ...]
    _metas: tuple[Any, ...]
    _outputs: tuple[int, ...] | None
    ctx: Any
    # Per input: None, or its (shape, dtype) when they differ from the output's (None
    # altogether when no input's do).
    input_meta: tuple[tuple[Any, Any] | None, ...] | None

    def __init__(
        self, name: str, formula: Formula, edges: tuple[Edge, ...],
        input_meta: tuple[tuple[Any, Any] | None, ...] | None = None, ctx: Any = None,
    ) -> None:  # fmt: skip
        super().__init__(edges)
        self._name = name
        self._formula = formula
        self._saved = ()
        self._versions = ()
        self._metas = ()
        self._outputs = None
        self.input_meta = input_meta
        self.ctx = ctx

    def name(self) -> str:
        return self._name

    @property
    def saved(self) -> tuple[Tensor, ...]:
        """The saved tensors (then the output, if saved), checked for in-place changes."""
        return unpack(self, self._saved, self._versions, self._metas, self._outputs)  # type: ignore[return-value]

    def needs_input_grad(self, i: int) -> bool:
        """Whether input `i` takes a gradient (formulas may skip the others)."""
        return self.next_functions[i][0] is not None

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        grad = grads[0]
        if grad is None:
            return (None,) * len(self.next_functions)
        results = self._formula(self, grad)
        edges = self.next_functions
        input_meta = self.input_meta
        out: list[Tensor | None] = []
        for i, g in enumerate(results):
            if g is None or edges[i][0] is None:
                out.append(None)
                continue
            meta = None if input_meta is None else input_meta[i]
            out.append(g if meta is None else conform(g, meta[0], meta[1]))
        if len(out) != len(edges):
            raise RuntimeError(
                f"{self._name} returned {len(out)} gradients for {len(edges)} inputs"
            )
        return out

    def release(self) -> None:
        self._saved = None


def conform(grad: Tensor, shape: tuple[int, ...], dtype: Any) -> Tensor:
    """Reduce a gradient to its input's shape (undo broadcasting) and cast to its dtype."""
    if grad._shape != shape:
        grad = sum_to_shape(grad, shape)
    if grad._dtype is not dtype:
        grad = _ops.conversion.to(grad, dtype)
    return grad


def sum_to_shape(grad: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Sum `grad` over the dims that broadcasting added or expanded from size 1."""
    lead = len(grad._shape) - len(shape)
    dims = list(range(lead))
    dims += [lead + i for i, size in enumerate(shape) if size == 1 and grad._shape[lead + i] != 1]
    result = _ops.reduction.sum(grad, dims, keepdim=True) if dims else grad
    return _ops.shape.reshape(result, shape) if result._shape != shape else result


def needs_grad(*tensors: Any) -> bool:
    """Whether an op on these operands must record the graph."""
    if not _STATE.enabled:
        return False
    for t in tensors:
        if isinstance(t, Tensor):
            meta = t._autograd
            if meta is not None and meta.requires_grad:
                return True
    return False


def edge_of(t: Tensor) -> Edge:
    """Where the gradient of `t` goes: its grad_fn, or its leaf accumulator."""
    meta = t._autograd
    if meta is None or not meta.requires_grad:
        return NO_EDGE
    if meta.base is not None and t._storage.version != meta.view_version:
        meta = _views.refresh(t)
    if meta.grad_fn is not None:
        return (meta.grad_fn, meta.output_nr)
    accumulator = meta.accumulator
    if accumulator is None:
        accumulator = meta.accumulator = AccumulateGrad(t)
    return (accumulator, 0)


def record(
    name: str,
    formula: Formula,
    inputs: Sequence[Any],
    output: Tensor,
    save: Sequence[Tensor | None] = (),
    save_output: bool = False,
    ctx: Any = None,
) -> Tensor:
    """Attach a FormulaNode to `output` (which may be an input: in-place ops rebase it).

    `formula(node, grad)` returns one gradient (or None) per entry of `inputs`; non-tensor
    inputs get None. Tensors in `save` are available as `node.saved` (then the output last,
    when `save_output`), and `ctx` carries any plain data the formula needs.
    """
    shape, dtype = output._shape, output._dtype
    previous = output._autograd
    edges: list[Edge] = []
    input_meta: list[tuple[Any, Any] | None] | None = None
    for i, x in enumerate(inputs):
        meta = x._autograd if isinstance(x, Tensor) else None
        if meta is None or not meta.requires_grad:
            edges.append(NO_EDGE)
            continue
        if meta.base is not None and x._storage.version != meta.view_version:
            meta = _views.refresh(x)
        producer = meta.grad_fn
        edges.append((producer, meta.output_nr) if producer is not None else edge_of(x))
        if x._shape != shape or x._dtype is not dtype:
            if input_meta is None:
                input_meta = [None] * len(inputs)
            input_meta[i] = (x._shape, x._dtype)
    node: FormulaNode = _new(FormulaNode)
    node.next_functions = tuple(edges)
    node.num_outputs = 1
    node.sequence_nr = next(_sequence)
    node._hooks = None
    node.trace = forward_trace() if ANOMALY.enabled else None
    node._name = name
    node._formula = formula
    node.input_meta = None if input_meta is None else tuple(input_meta)
    node.ctx = ctx
    if save_output:
        saved = (*save, alias(output))
        node._outputs = (-1,) * len(save) + (0,)
    else:
        saved = save if type(save) is tuple else tuple(save)
        node._outputs = None
    if saved:
        node._versions = versions_of(saved)
        node._metas = metas_of(saved)
    else:
        node._versions = node._metas = ()
    node._saved = saved
    output._autograd = nonleaf_meta(node, 0)
    first = inputs[0] if inputs else None
    if output is first:
        if previous is not None and previous.base is not None:
            _views.rebase_base(output, previous)  # an in-place op on a view
    elif isinstance(first, Tensor) and output._storage is first._storage:
        _views.mark_view(output, first)
    return output


def record_elementwise(
    name: str, formula: Formula, inputs: tuple[Any, ...], output: Tensor,
    save: tuple[Tensor | None, ...], save_output: bool, ctx: Any,
) -> None:  # fmt: skip
    """`record` for the elementwise fast paths, whose tensor inputs have the output's shape
    and dtype, so no gradient needs reducing or casting."""
    edges: list[Edge] = []
    for x in inputs:
        meta = x._autograd if isinstance(x, Tensor) else None
        if meta is None or not meta.requires_grad:
            edges.append(NO_EDGE)
            continue
        if meta.base is not None and x._storage.version != meta.view_version:
            meta = _views.refresh(x)
        if meta.grad_fn is not None:
            edges.append((meta.grad_fn, meta.output_nr))
        else:
            edges.append(edge_of(x))
    node: FormulaNode = _new(FormulaNode)
    node.next_functions = tuple(edges)
    node.num_outputs = 1
    node.sequence_nr = next(_sequence)
    node._hooks = None
    node.trace = forward_trace() if ANOMALY.enabled else None
    node._name = name
    node._formula = formula
    node.input_meta = None
    node.ctx = ctx
    if save_output:
        node._saved = (alias(output),)
        node._versions = (output._storage.version,)
        node._metas = (None,)
        node._outputs = (0,)
    else:
        node._saved = save
        node._outputs = None
        if len(save) == 2:  # binary ops, inlined: the common case on the hot path
            a, b = save
            node._versions = (
                a._storage.version if a is not None else -1,
                b._storage.version if b is not None else -1,
            )
            node._metas = (
                a._autograd if a is not None else None,
                b._autograd if b is not None else None,
            )
        elif save:
            node._versions = versions_of(save)
            node._metas = metas_of(save)
        else:
            node._versions = node._metas = ()
    output._autograd = nonleaf_meta(node, 0)


def check_inplace(t: Tensor) -> None:
    """PyTorch's errors for an in-place op, recorded in the graph, on a leaf that requires
    grad or on a view of one."""
    meta = t._autograd
    if meta is None or not meta.requires_grad:
        return
    if meta.grad_fn is None:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    base = meta.base._autograd if meta.base is not None else None
    if base is not None and base.requires_grad and base.grad_fn is None:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )


def write_back(t: Tensor, result: Tensor) -> None:
    """Copy an out-of-place result into `t`, which then continues the graph from the
    result's node (and so does its base, when `t` is a view)."""

    _launch.copy(t, result)
    t._storage.version += 1
    previous = t._autograd
    t._autograd = result._autograd
    if previous is not None and previous.base is not None and result._autograd is not None:
        _views.rebase_base(t, previous)


def before_write(t: Tensor) -> Tensor:
    """A copy of `t`'s values that takes t's place in the graph, for formulas of an
    in-place op that read t's old values."""
    from ember._ops._index_tensors import contiguous_copy

    copy = contiguous_copy(t)
    meta = t._autograd
    if meta is not None and meta.requires_grad:
        if meta.base is not None and t._storage.version != meta.view_version:
            meta = _views.refresh(t)
        if meta.grad_fn is not None:
            copy._autograd = nonleaf_meta(meta.grad_fn, meta.output_nr)
    return copy
