"""Per-tensor autograd metadata: the `_autograd` slot of a tensor that takes part in autograd.

Every tensor outside autograd keeps None there, so "does anything need grad?" is one
`is None` test on the hot path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ember.utils.hooks import HookRegistry

if TYPE_CHECKING:
    from ember._tensor import Tensor
    from ember.autograd._node import AccumulateGrad, Node

__all__ = ["AutogradMeta", "meta_of", "nonleaf_meta"]

_new = object.__new__


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
        # Views (see _graph.py): the root base, and the storage version the view was made at.
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
