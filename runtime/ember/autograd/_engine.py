"""The backward engine: an iterative, dependency-counted walk of the recorded graph.

No recursion (deep graphs don't hit Python's recursion limit) and a deterministic order:
a node runs once every node that feeds it a gradient has run, ties broken by creation
order, latest first, as in PyTorch. With `inputs` (autograd.grad), only the nodes on a
path to them run.

Final callbacks (PyTorch's `Variable._execution_engine.queue_callback`): code that runs
during a backward (a hook, say) may queue callables that run once the walk has finished,
before backward returns. DistributedDataParallel waits for its gradient buckets there.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Callable, Sequence
from typing import Any

from ember import _upper
from ember._tensor import Tensor
from ember.autograd import _mode
from ember.autograd._anomaly import ANOMALY, check_nan, report_error
from ember.autograd._graph import edge_of
from ember.autograd._node import AccumulateGrad, Node

__all__ = ["queue_callback", "run_backward"]

Buffer = list[Tensor | None]


class _FinalCallbacks(threading.local):
    """Per thread, one queue per backward call now running (innermost last): a backward
    run inside a hook keeps its own queue."""

    def __init__(self) -> None:
        self.queues: list[list[Callable[[], object]]] = []


_FINAL = _FinalCallbacks()


def queue_callback(callback: Callable[[], object]) -> None:
    """Run `callback()` when the backward now running has walked its graph, before it
    returns (FIFO; a callback may queue more). Only valid during a backward."""
    queues = _FINAL.queues
    if not queues:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    queues[-1].append(callback)


def _run_final_callbacks(queue: list[Callable[[], object]]) -> None:
    # By index, not by iterator: a callback may append to the queue it is run from.
    i = 0
    while i < len(queue):
        queue[i]()
        i += 1


def _call_hook(hook: Any, flags: dict[str, bool], value: Any) -> Any:
    """A tensor hook or a node pre-hook: hook(grad) or hook(grad_outputs)."""
    result = hook(value)
    # A node pre-hook may return a list; the next hook and node.apply see a tuple.
    return tuple(result) if type(result) is list else result


class _Run:
    """The state of one backward call."""

    __slots__ = ("accumulate", "captured", "captures", "create_graph", "foreign", "retain_graph")

    def __init__(self, retain_graph: bool, create_graph: bool, accumulate: bool) -> None:
        self.retain_graph = retain_graph
        self.create_graph = create_graph
        self.accumulate = accumulate  # into leaves' .grad (backward) or not (autograd.grad)
        self.captures: dict[tuple[Node, int], int] = {}
        self.captured: list[Tensor | None] = []
        # Storages that someone outside the engine may hold (root gradients, hook results,
        # captured, retained or stolen gradients): a leaf's first .grad copies them rather
        # than aliasing them, so a later in-place accumulation can't write through.
        self.foreign: set[int] = set()

    def deliver(self, grad: Tensor) -> Tensor:
        """`grad` to keep as a leaf's `.grad`: the tensor itself when nobody else holds it."""
        storage = grad._storage
        if (
            self.create_graph
            or id(storage) in self.foreign
            or not grad._contiguous
            or grad._offset
            or storage.nbytes != grad.numel() * grad._dtype.itemsize
        ):
            if self.create_graph:
                return grad
            grad = _upper.ops.conversion.clone(grad)
        self.foreign.add(id(grad._storage))
        return grad.detach() if grad._autograd is not None else grad


def _graph_nodes(roots: Sequence[Node], keep: dict[Node, bool] | None) -> dict[Node, int]:
    """How many edges point at each node that must run: every reachable one, or with
    `keep`, those it marks."""
    counts: dict[Node, int] = {}
    seen = set(roots)
    stack = list(roots)
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is None or (keep is not None and not keep.get(child)):
                continue
            counts[child] = counts.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return counts


def _on_path(roots: Sequence[Node], targets: set[Node]) -> dict[Node, bool]:
    """For each reachable node, whether some target is reachable from it (iterative DFS)."""
    found: dict[Node, bool] = {}
    for root in roots:
        if root in found:
            continue
        found[root] = root in targets
        stack = [(root, 0)]
        while stack:
            node, i = stack[-1]
            edges = node.next_functions
            if i < len(edges):
                stack[-1] = (node, i + 1)
                child = edges[i][0]
                if child is not None and child not in found:
                    found[child] = child in targets
                    stack.append((child, 0))
                continue
            stack.pop()
            if not found[node]:
                found[node] = any(c is not None and found[c] for c, _ in edges)
    return found


def run_backward(
    outputs: Sequence[Tensor],
    grad_outputs: Sequence[Tensor],
    retain_graph: bool,
    create_graph: bool,
    inputs: Sequence[Tensor] | None = None,
    accumulate: bool = True,
) -> list[Tensor | None]:
    """Propagate `grad_outputs` from `outputs`; return the gradients of `inputs` if given.

    With `accumulate`, gradients of leaves (or of `inputs`, when given) accumulate into
    their `.grad` (Tensor.backward); without, those of `inputs` are returned (autograd.grad).
    """
    run = _Run(retain_graph, create_graph, accumulate)
    roots: list[Node] = []
    buffers: dict[Node, Buffer] = {}
    for i, (t, g) in enumerate(zip(outputs, grad_outputs, strict=True)):
        node, nr = edge_of(t)
        if node is None:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        if node not in buffers:
            roots.append(node)
            buffers[node] = [None] * node.num_outputs
        run.foreign.add(id(g._storage))
        _add_to(buffers[node], nr, g)
    keep: dict[Node, bool] | None = None
    if inputs is not None:
        run.captured = [None] * len(inputs)
        for i, t in enumerate(inputs):
            node, nr = edge_of(t)
            if node is None:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            run.captures[node, nr] = i
        keep = _on_path(roots, {node for node, _ in run.captures})
    counts = _graph_nodes(roots, keep)
    ready = [(-n.sequence_nr, n) for n in roots if n not in counts]
    heapq.heapify(ready)
    previous = _mode.STATE.enabled
    _mode.STATE.enabled = create_graph
    final: list[Callable[[], object]] = []
    queues = _FINAL.queues
    queues.append(final)
    try:
        while ready:
            node = heapq.heappop(ready)[1]
            buffer = buffers.pop(node)
            if node._hooks is not None:
                _tensor_hooks(run, node, buffer)
            if type(node) is AccumulateGrad:
                _leaf(run, node, buffer[0])
                continue
            if run.captures:
                _capture(run, node, buffer)
                if keep is not None and not _leads_on(node, keep):
                    continue  # a requested input's node that no other input lies beyond
            grads = _apply(run, node, buffer)
            for (child, nr), grad in zip(node.next_functions, grads, strict=False):
                if child is None:
                    continue
                remaining = counts.get(child)
                if remaining is None:
                    continue  # pruned: not on a path to the requested inputs
                child_buffer = buffers.get(child)
                if child_buffer is None:
                    child_buffer = buffers[child] = [None] * child.num_outputs
                if grad is not None:
                    _add_to(child_buffer, nr, grad)
                if remaining == 1:
                    del counts[child]
                    heapq.heappush(ready, (-child.sequence_nr, child))
                else:
                    counts[child] = remaining - 1
        if inputs is not None and accumulate:
            for t, captured in zip(inputs, run.captured, strict=True):
                if captured is not None:
                    accumulate_grad(run, t, captured)
        if final:
            _run_final_callbacks(final)
    finally:
        queues.pop()
        _mode.STATE.enabled = previous
    return run.captured


def _leads_on(node: Node, keep: dict[Node, bool]) -> bool:
    return any(child is not None and keep.get(child) for child, _ in node.next_functions)


def _add_to(buffer: Buffer, index: int, grad: Tensor) -> None:
    current = buffer[index]
    buffer[index] = grad if current is None else _upper.ops.elementwise.add(current, grad)


def _tensor_hooks(run: _Run, node: Node, buffer: Buffer) -> None:
    """Hooks of the non-leaf tensors that `node` produced, then their retained grads."""
    hooks = node._hooks
    assert hooks is not None
    for nr, registry in hooks.tensor.items():
        grad = buffer[nr]
        if grad is not None and registry:
            result = registry.run(grad, _call_hook)
            if result is not grad:
                run.foreign.add(id(result._storage))
                buffer[nr] = result
    for nr, ref in hooks.retained.items():
        meta = ref()
        grad = buffer[nr]
        if meta is None or grad is None:
            continue
        run.foreign.add(id(grad._storage))
        kept = grad if run.create_graph else grad.detach()
        meta.grad = kept if meta.grad is None else _plus(meta.grad, kept)


def _plus(a: Tensor, b: Tensor) -> Tensor:
    return _upper.ops.elementwise.add(a, b)


def _capture(run: _Run, node: Node, buffer: Buffer) -> None:
    for nr, grad in enumerate(buffer):
        slot = run.captures.get((node, nr))
        if slot is not None and grad is not None:
            run.foreign.add(id(grad._storage))
            run.captured[slot] = grad


def _leaf(run: _Run, node: AccumulateGrad, grad: Tensor | None) -> None:
    """A leaf's gradient: its hooks, then capture or accumulation into `.grad`."""
    if grad is None:
        return
    variable = node.variable
    if variable is None:
        return  # the leaf is gone: nobody can read its gradient
    meta = variable._autograd
    if meta.hooks:
        result = meta.hooks.run(grad, _call_hook)
        if result is not grad:
            run.foreign.add(id(result._storage))
            grad = result
    if run.captures:
        slot = run.captures.get((node, 0))
        if slot is not None:
            run.foreign.add(id(grad._storage))
            run.captured[slot] = grad
        return
    if not run.accumulate:
        return
    accumulate_grad(run, variable, grad)


def accumulate_grad(run: _Run, variable: Tensor, grad: Tensor) -> None:
    """Add `grad` into `variable.grad` (in place unless building a graph of the gradient)."""
    meta = variable._autograd
    if meta.grad is None:
        meta.grad = run.deliver(grad)
    elif run.create_graph:
        meta.grad = _upper.ops.elementwise.add(meta.grad, grad)
    else:
        _upper.ops.elementwise.add_(
            meta.grad, grad.detach() if grad._autograd is not None else grad
        )
    if meta.post_accumulate_hooks:
        meta.post_accumulate_hooks.call_each(variable)


def _apply(run: _Run, node: Node, buffer: Buffer) -> Sequence[Tensor | None]:
    hooks = node._hooks
    if hooks is not None and hooks.pre:
        given = tuple(buffer)
        result = hooks.pre.run(given, _call_hook)
        if result is not given:
            buffer = list(result)
            run.foreign.update(id(g._storage) for g in buffer if g is not None)
    if ANOMALY.enabled:
        try:
            grads = node.apply(buffer)
            if ANOMALY.check_nan:
                check_nan(node, grads)
        except Exception:
            report_error(node)
            raise
    else:
        grads = node.apply(buffer)
    if hooks is not None and hooks.post:
        grad_outputs = tuple(buffer)

        def call_post(hook: Any, flags: dict[str, bool], grad_inputs: Any) -> Any:
            result = hook(tuple(grad_inputs), grad_outputs)
            return None if result is None else list(result)

        computed = grads
        grads = hooks.post.run(grads, call_post)
        if grads is not computed:
            run.foreign.update(id(g._storage) for g in grads if g is not None)
    if not run.retain_graph:
        node.release()
    return grads
