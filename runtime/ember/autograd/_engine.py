"""The backward engine: an iterative, dependency-counted walk of the recorded graph.

No recursion (deep graphs don't hit Python's recursion limit) and a deterministic order:
a node runs once every node that feeds it a gradient has run, ties broken by creation
order, latest first, as in PyTorch.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

from ember._tensor import Tensor
from ember.autograd import _mode
from ember.autograd._graph import ANOMALY, AccumulateGrad, Node, edge_of

__all__ = ["run_backward"]


def _dependencies(roots: Sequence[Node]) -> dict[Node, int]:
    """How many edges point at each node reachable from `roots`."""
    counts: dict[Node, int] = {}
    seen = set(roots)
    stack = list(roots)
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is None:
                continue
            counts[child] = counts.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return counts


def _accumulate(buffer: list[Tensor | None], index: int, grad: Tensor) -> None:
    from ember._ops import elementwise

    current = buffer[index]
    buffer[index] = grad if current is None else elementwise.add(current, grad)


def _run_tensor_hooks(node: Node, buffer: list[Tensor | None]) -> None:
    """Hooks registered on the non-leaf tensors whose grad_fn is `node`."""
    hooks = node._tensor_hooks
    if not hooks:
        return
    for output_nr, hook in list(hooks.values()):
        grad = buffer[output_nr]
        if grad is not None:
            result = hook(grad)
            if result is not None:
                buffer[output_nr] = result


def _accumulate_leaf(node: AccumulateGrad, grad: Tensor, create_graph: bool) -> None:
    from ember._ops import elementwise

    variable = node.variable
    meta = variable._autograd
    if meta.tensor_hooks:
        for hook in list(meta.tensor_hooks.values()):
            result = hook(grad)
            if result is not None:
                grad = result
    if meta.grad is None:
        meta.grad = grad if create_graph else grad.detach()
    elif create_graph:
        meta.grad = elementwise.add(meta.grad, grad)
    else:
        elementwise.add_(meta.grad, grad.detach())
    if meta.post_accumulate_hooks:
        for hook in list(meta.post_accumulate_hooks.values()):
            hook(variable)


def run_backward(
    outputs: Sequence[Tensor],
    grad_outputs: Sequence[Tensor],
    retain_graph: bool,
    create_graph: bool,
    inputs: Sequence[Tensor] | None = None,
) -> list[Tensor | None]:
    """Propagate `grad_outputs` from `outputs`; return the gradients of `inputs` if given.

    Without `inputs`, gradients accumulate into leaves' `.grad` (Tensor.backward); with
    them, they are captured and returned instead (autograd.grad).
    """
    roots: list[Node] = []
    root_grads: dict[Node, list[Tensor | None]] = {}
    for t, g in zip(outputs, grad_outputs, strict=True):
        node, nr = edge_of(t)
        if node is None:
            raise RuntimeError(
                "element 0 of tensors does not require grad and does not have a grad_fn"
            )
        if node not in root_grads:
            roots.append(node)
            root_grads[node] = [None] * _arity(node)
        _accumulate(root_grads[node], nr, g)

    captures: dict[tuple[Node, int], int] = {}
    if inputs is not None:
        for i, t in enumerate(inputs):
            node, nr = edge_of(t)
            if node is None:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            captures[node, nr] = i
    captured: list[Tensor | None] = [None] * (len(inputs) if inputs is not None else 0)

    counts = _dependencies(roots)
    buffers: dict[Node, list[Tensor | None]] = dict(root_grads)
    ready = [(-n.sequence_nr, n) for n in roots if counts.get(n, 0) == 0]
    heapq.heapify(ready)
    previous = _mode.STATE.enabled
    _mode.STATE.enabled = create_graph
    try:
        while ready:
            _, node = heapq.heappop(ready)
            buffer = buffers.pop(node)
            _run_tensor_hooks(node, buffer)
            if captures:
                for nr, grad in enumerate(buffer):
                    slot = captures.get((node, nr))
                    if slot is not None and grad is not None:
                        captured[slot] = grad
            if isinstance(node, AccumulateGrad):
                if inputs is None and buffer[0] is not None:
                    _accumulate_leaf(node, buffer[0], create_graph)
                continue
            grads = _apply(node, buffer)
            if not retain_graph:
                node.release()
            for (child, nr), grad in zip(node.next_functions, grads, strict=False):
                if child is None:
                    continue
                child_buffer = buffers.get(child)
                if child_buffer is None:
                    child_buffer = buffers[child] = [None] * _arity(child)
                if grad is not None:
                    _accumulate(child_buffer, nr, grad)
                counts[child] -= 1
                if counts[child] == 0:
                    heapq.heappush(ready, (-child.sequence_nr, child))
    finally:
        _mode.STATE.enabled = previous
    return captured


def _arity(node: Node) -> int:
    """How many gradients flow into `node` (its forward's outputs)."""
    return node.num_outputs


def _apply(node: Node, buffer: list[Tensor | None]) -> Sequence[Tensor | None]:
    if node._pre_hooks:
        for hook in list(node._pre_hooks.values()):
            result = hook(tuple(buffer))
            if result is not None:
                buffer = list(result)
    grads = node.apply(buffer)
    if node._post_hooks:
        for hook in list(node._post_hooks.values()):
            result = hook(tuple(grads), tuple(buffer))
            if result is not None:
                grads = list(result)
    if ANOMALY.enabled:
        _check_anomaly(node, grads)
    return grads


def _check_anomaly(node: Node, grads: Sequence[Any]) -> None:
    from ember._ops import reduction, unary

    for i, grad in enumerate(grads):
        if isinstance(grad, Tensor) and grad._dtype.is_floating_point:
            finite = reduction.all(unary.logical_not(_isnan(grad)))
            if not finite.item():
                where = "".join(node.trace or [])
                raise RuntimeError(
                    f"Function '{node.name()}' returned nan values in its {i}th output."
                    + (f"\nThe forward call that created it:\n{where}" if where else "")
                )


def _isnan(t: Tensor) -> Tensor:
    from ember._ops import elementwise

    return elementwise.ne(t, t)
