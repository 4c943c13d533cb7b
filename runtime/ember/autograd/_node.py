"""Graph nodes: the backward functions of the recorded graph, and their edges.

A node's `next_functions` are its edges: one (node, output number) per forward input,
`NO_EDGE` where no gradient flows. `FormulaNode` runs a derivative formula written in
ember ops; it reduces and casts gradients of broadcast or promoted inputs back here
(`conform`), once, rather than in every formula.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from ember import _upper
from ember._tensor import Tensor
from ember.autograd._anomaly import ANOMALY, forward_trace
from ember.autograd._saved import unpack
from ember.utils.hooks import HookRegistry, RemovableHandle

__all__ = [
    "NO_EDGE", "AccumulateGrad", "Edge", "Formula", "FormulaNode", "Node", "NodeHooks",
    "conform", "init_node", "sum_to_shape",
]  # fmt: skip

Edge = tuple["Node | None", int]
NO_EDGE: Edge = (None, 0)
_sequence = itertools.count()
_new = object.__new__


def init_node(node: Node, edges: tuple[Edge, ...], num_outputs: int = 1) -> None:
    """Set a node's graph fields: the one place that does, for every kind of node.

    `Node.__init__` calls it; the recording fast path and custom Functions call it on an
    object made with `object.__new__`, skipping `__init__` chains.
    """
    node.next_functions = edges
    node.num_outputs = num_outputs
    node.sequence_nr = next(_sequence)
    node._hooks = None
    node.trace = forward_trace() if ANOMALY.enabled else None


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
        init_node(self, next_functions, num_outputs)

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
        grad = _upper.ops.conversion.to(grad, dtype)
    return grad


def sum_to_shape(grad: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Sum `grad` over the dims that broadcasting added or expanded from size 1."""
    lead = len(grad._shape) - len(shape)
    dims = list(range(lead))
    dims += [lead + i for i, size in enumerate(shape) if size == 1 and grad._shape[lead + i] != 1]
    result = _upper.ops.reduction.sum(grad, dims, keepdim=True) if dims else grad
    return _upper.ops.shape.reshape(result, shape) if result._shape != shape else result
