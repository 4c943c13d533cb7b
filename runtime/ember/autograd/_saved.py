"""Tensors saved for backward, checked against their storage's version counter.

A node keeps its saved tensors as three parallel tuples rather than one object per tensor
(recording is on every op's hot path): the tensors, their storage versions when saved, and
the autograd metadata they had then (to name the op that made a tensor that was later
modified in place). An op's own output is saved as an alias without autograd metadata:
keeping the output itself would make a reference cycle output -> node -> output. On
unpacking under grad mode (create_graph) the alias gets the node as its grad_fn again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember._tensor import Tensor
from ember.autograd import _mode
from ember.autograd._anomaly import ANOMALY
from ember.autograd._meta import nonleaf_meta

__all__ = ["alias", "freed_error", "unpack", "versions_of"]

_new = object.__new__
_STATE = _mode.STATE


def freed_error() -> RuntimeError:
    """PyTorch's error for a second backward through freed saved tensors."""
    return RuntimeError(
        "Trying to backward through the graph a second time (or directly access saved tensors "
        "after they have already been freed). Saved intermediate values of the graph are freed "
        "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
        "backward through the graph a second time or if you need to access saved tensors after "
        "calling backward."
    )


def alias(t: Tensor) -> Tensor:
    """A new tensor object over `t`'s data, without autograd metadata (make_view, minus
    the contiguity check that `t` already made)."""
    view: Tensor = _new(Tensor)
    view._storage = t._storage
    view._offset = t._offset
    view._shape = t._shape
    view._strides = t._strides
    view._dtype = t._dtype
    view._device = t._device
    view._contiguous = t._contiguous
    view._autograd = None
    return view


def versions_of(tensors: Sequence[Tensor | None]) -> tuple[int, ...]:
    """The storage version of each tensor (-1 for None)."""
    n = len(tensors)
    first = tensors[0]
    if n == 1 and first is not None:
        return (first._storage.version,)
    if n == 2:
        second = tensors[1]
        return (
            first._storage.version if first is not None else -1,
            second._storage.version if second is not None else -1,
        )
    return tuple([t._storage.version if t is not None else -1 for t in tensors])


def metas_of(tensors: Sequence[Tensor | None]) -> tuple[Any, ...]:
    """The autograd metadata of each tensor (its grad_fn then is named in errors)."""
    n = len(tensors)
    first = tensors[0]
    if n == 1 and first is not None:
        return (first._autograd,)
    if n == 2:
        second = tensors[1]
        return (
            first._autograd if first is not None else None,
            second._autograd if second is not None else None,
        )
    return tuple([t._autograd if t is not None else None for t in tensors])


def unpack(
    node: Any,
    tensors: tuple[Tensor | None, ...] | None,
    versions: tuple[int, ...],
    metas: tuple[Any, ...],
    outputs: tuple[int, ...] | None,
) -> tuple[Tensor | None, ...]:
    """The saved tensors, after checking they were neither freed nor modified in place.

    `outputs[i]` is the output number of entry i when it is one of the node's own outputs
    (-1 otherwise); `outputs` is None when no output was saved.
    """
    if tensors is None:
        raise freed_error()
    for i, t in enumerate(tensors):
        if t is not None and t._storage.version != versions[i]:
            nr = -1 if outputs is None else outputs[i]
            raise _modified(t, versions[i], node, metas[i], nr)
    if outputs is None or not _STATE.enabled:
        return tensors
    # create_graph: saved outputs are differentiable again, through the node that made them.
    result = list(tensors)
    for i, nr in enumerate(outputs):
        t = result[i]
        if nr >= 0 and t is not None:
            view = alias(t)
            view._autograd = nonleaf_meta(node, nr)
            result[i] = view
    return tuple(result)


def _modified(t: Tensor, version: int, node: Any, meta: Any, output_nr: int) -> RuntimeError:
    if output_nr >= 0:
        which = f", which is output {output_nr} of {node.name()},"
    elif meta is not None and meta.grad_fn is not None:
        which = f", which is output {meta.output_nr} of {meta.grad_fn.name()},"
    else:
        which = ""
    hint = (
        " Hint: the backtrace further above shows the operation that failed to compute its "
        "gradient. The variable in question was changed in there or anywhere later. Good luck!"
        if ANOMALY.enabled
        else " Hint: enable anomaly detection to find the operation that failed to compute "
        "its gradient, with ember.autograd.set_detect_anomaly(True)."
    )
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{t._dtype} {list(t._shape)}]{which} is at version "
        f"{t._storage.version}; expected version {version} instead.{hint}"
    )
