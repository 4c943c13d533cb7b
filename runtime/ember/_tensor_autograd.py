"""Tensor methods of autograd: requires_grad, grad, backward, hooks (ember.autograd)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ember import _upper
from ember._tensor_core import TensorCore

if TYPE_CHECKING:
    from ember._tensor import Tensor

__all__ = ["AutogradMethods"]

# Any, not the typed `_upper`: these methods pass `self` (typed as this mixin, not as
# Tensor) to ops; each is a one-line forward whose public signature is typed here.
_up: Any = _upper

# Methods that return `self` keep its type (Tensor) through this variable.
_Self = TypeVar("_Self", bound=TensorCore)


class AutogradMethods(TensorCore):
    """requires_grad, grad, grad_fn, backward and the tensor hooks."""

    __slots__ = ()

    @property
    def requires_grad(self) -> bool:
        return self._autograd is not None and self._autograd.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        _up.autograd.set_requires_grad(self, value)

    def requires_grad_(self: _Self, requires_grad: bool = True) -> _Self:
        """Set requires_grad in place (leaves only) and return self."""
        _up.autograd.set_requires_grad(self, requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self._autograd is None or self._autograd.grad_fn is None

    @property
    def grad(self) -> Tensor | None:
        return None if self._autograd is None else self._autograd.grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        _up.autograd.set_grad(self, value)

    @property
    def grad_fn(self) -> Any:
        return None if self._autograd is None else self._autograd.grad_fn

    @property
    def retains_grad(self) -> bool:
        return self._autograd is not None and self._autograd.retains_grad

    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Sequence[Tensor] | None = None,
    ) -> None:
        """Accumulate the gradient of this tensor into the leaves' `.grad`."""
        _up.autograd.backward(self, gradient, retain_graph, create_graph, inputs)

    def register_hook(self, hook: Any) -> Any:
        """Call `hook(grad)` when this tensor's gradient is computed."""
        return _up.autograd.register_hook(self, hook)

    def retain_grad(self) -> None:
        """Keep `.grad` for this non-leaf tensor."""
        _up.autograd.retain_grad(self)

    def register_post_accumulate_grad_hook(self, hook: Any) -> Any:
        """Call `hook(tensor)` after this leaf's `.grad` was updated."""
        return _up.autograd.register_post_accumulate_grad_hook(self, hook)

    def detach_(self: _Self) -> _Self:
        """Detach in place: this tensor leaves the graph and becomes a leaf."""
        self._autograd = None
        return self
