"""Recording the graph as ops run, and views of tensors in the graph.

Ops record a `FormulaNode` when grad mode is on and an input requires grad. The node keeps
its inputs' edges (`next_functions`), what the derivative formula needs (saved tensors,
checked against the storage version counters, see _saved.py), and the shape and dtype of
each input that differs from the output's, so that gradients of broadcast or promoted
inputs are reduced and cast back here, once, rather than in every formula.

Recording is on the hot path of every op that touches a tensor requiring grad, so nodes
are made with `object.__new__`, set up by `init_node` and filled by direct slot stores.

Views live here too, since recording and views call each other (recording an op on a
stale view regenerates the view's grad_fn, which records). An op whose output shares
its first input's storage (a view: t[0], t.view(...), ...) marks the output's metadata
with the view's root base and the storage version it saw.

* An in-place op on such a view changes its base too, so, as PyTorch's CopySlices does,
  the base is rebased onto a node whose gradient goes to the written region from the
  view's new history, and everywhere else to the base's old history; the view becomes a
  view of the rebased base.
* A view whose storage was written since it was taken (its base was modified in place)
  no longer reads what its grad_fn describes; the next op that uses it regenerates its
  grad_fn from the base's current history first.

Both map gradients between the base and the view through their storage positions
(`storage_map`, from the shape formulas), so they hold for any strides.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember import _dtype, _upper
from ember._tensor import Tensor, contiguous_strides, make_view
from ember.autograd import _mode
from ember.autograd._meta import nonleaf_meta
from ember.autograd._node import NO_EDGE, AccumulateGrad, Edge, Formula, FormulaNode, init_node
from ember.autograd._saved import alias, metas_of, versions_of

__all__ = [
    "before_write", "check_inplace", "edge_of", "edges_of", "mark_view", "needs_grad",
    "rebase_base", "record", "record_elementwise", "refresh", "write_back",
]  # fmt: skip

Layout = tuple[Tensor, Tensor, int]  # storage positions of (base, view), buffer size
_STATE = _mode.STATE
_new = object.__new__


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
        meta = refresh(t)
    if meta.grad_fn is not None:
        return (meta.grad_fn, meta.output_nr)
    accumulator = meta.accumulator
    if accumulator is None:
        accumulator = meta.accumulator = AccumulateGrad(t)
    return (accumulator, 0)


def edges_of(inputs: Sequence[Any]) -> tuple[Edge, ...]:
    """The edge of each input (NO_EDGE for non-tensors and tensors outside autograd): the
    one edge collection of every node kind (ops, custom Functions, module hooks)."""
    edges = []
    for x in inputs:
        meta = x._autograd if isinstance(x, Tensor) else None
        if meta is None or not meta.requires_grad:
            edges.append(NO_EDGE)
        elif meta.grad_fn is not None and meta.base is None:
            edges.append((meta.grad_fn, meta.output_nr))  # inlined: the common case
        else:
            edges.append(edge_of(x))  # a leaf, or a view that may need refreshing
    return tuple(edges)


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
    edges = edges_of(inputs)
    input_meta: list[tuple[Any, Any] | None] | None = None
    for i, x in enumerate(inputs):
        if edges[i][0] is not None and (x._shape != shape or x._dtype is not dtype):
            if input_meta is None:
                input_meta = [None] * len(inputs)
            input_meta[i] = (x._shape, x._dtype)
    node: FormulaNode = _new(FormulaNode)
    init_node(node, edges)
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
            rebase_base(output, previous)  # an in-place op on a view
    elif isinstance(first, Tensor) and output._storage is first._storage:
        mark_view(output, first)
    return output


def record_elementwise(
    name: str, formula: Formula, inputs: tuple[Any, ...], output: Tensor,
    save: tuple[Tensor | None, ...], save_output: bool, ctx: Any,
) -> None:  # fmt: skip
    """`record` for the elementwise fast paths, whose tensor inputs have the output's shape
    and dtype, so no gradient needs reducing or casting."""
    node: FormulaNode = _new(FormulaNode)
    init_node(node, edges_of(inputs))
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
    _upper.ops._launch.copy(t, result)
    t._storage.version += 1
    previous = t._autograd
    t._autograd = result._autograd
    if previous is not None and previous.base is not None and result._autograd is not None:
        rebase_base(t, previous)


def before_write(t: Tensor) -> Tensor:
    """A copy of `t`'s values that takes t's place in the graph, for formulas of an
    in-place op that read t's old values."""
    copy = _upper.ops._index_tensors.contiguous_copy(t)
    meta = t._autograd
    if meta is not None and meta.requires_grad:
        if meta.base is not None and t._storage.version != meta.view_version:
            meta = refresh(t)
        if meta.grad_fn is not None:
            copy._autograd = nonleaf_meta(meta.grad_fn, meta.output_nr)
    return copy


def mark_view(output: Tensor, source: Tensor) -> None:
    """Record that `output` (just recorded) is a view of `source`'s root base."""
    meta = output._autograd
    source_meta = source._autograd
    root = source_meta.base if source_meta is not None else None
    if root is None:
        root = source
    meta.base = root
    meta.view_version = output._storage.version


def refresh(t: Tensor) -> Any:
    """Regenerate the grad_fn of view `t` from its base's current history."""
    root = t._autograd.base
    _record_view(t, root)
    return t._autograd


def rebase_base(view: Tensor, old_meta: Any) -> None:
    """After an in-place op rebased `view`, rebase its base (CopySlices) and make `view`
    a view of the rebased base again."""
    root = old_meta.base
    meta = root._autograd
    if meta is not None and meta.requires_grad and meta.grad_fn is None:
        # Ops check this before writing (check_inplace); this guards the graph regardless.
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )
    layout = _layout(root, view)
    record("CopySlices", _copy_slices_backward, (root, view), root, ctx=layout)
    _record_view(view, root, layout)


def _record_view(view: Tensor, root: Tensor, layout: Layout | None = None) -> None:
    ctx = _layout(root, view) if layout is None else layout
    record("AsStridedBackward", _view_backward, (root,), view, ctx=ctx)


def _layout(root: Tensor, view: Tensor) -> Layout:
    """The storage positions of every element of `root` and of `view` (int64 tensors of
    their shapes, counted from the lowest position either reaches) and their span."""
    low = min(root._offset, view._offset)
    high = max(_highest(root), _highest(view))
    return _positions(root, low), _positions(view, low), high - low + 1


def _highest(t: Tensor) -> int:
    if not t.numel():
        return t._offset
    return t._offset + sum((n - 1) * s for n, s in zip(t._shape, t._strides, strict=True))


def _positions(t: Tensor, low: int) -> Tensor:
    ops = _upper.ops
    int64_arange, int64_binary = ops._index_tensors.int64_arange, ops._index_tensors.int64_binary
    dev = t._device
    ndim = len(t._shape)
    total = ops.creation.full((1,) * ndim, t._offset - low, dtype=_dtype.int64, device=dev)
    for d, (size, stride) in enumerate(zip(t._shape, t._strides, strict=True)):
        along = tuple(size if i == d else 1 for i in range(ndim))
        steps = make_view(int64_arange(size, stride, dev), 0, along, contiguous_strides(along))
        total = int64_binary("add", total, steps)
    return total


def _view_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """The view's gradient placed at its storage positions within the base."""
    root_positions, view_positions, size = node.ctx
    return (_upper.ops.shape_formulas.storage_map(g, view_positions, root_positions, size),)


def _copy_slices_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """Inputs (base before the write, view after it): the written region's gradient goes
    to the view, the rest to the old base."""
    root_positions, view_positions, size = node.ctx
    storage_map = _upper.ops.shape_formulas.storage_map
    region = storage_map(g, root_positions, view_positions, size)
    grad_root = None
    if node.needs_input_grad(0):
        written = storage_map(region, view_positions, root_positions, size)
        grad_root = _upper.ops.elementwise.sub(g, written)
    return grad_root, region
