"""`Parameter`: a leaf tensor that a Module registers as a learnable weight."""

from __future__ import annotations

from typing import Any

from ember._ops import creation
from ember._tensor import Tensor

__all__ = ["Parameter"]

_new = object.__new__


class Parameter(Tensor):
    """A Tensor that modules register when it is assigned as an attribute.

    It shares `data`'s storage and is always a leaf. Ops on parameters return plain Tensors
    (they take the general path of each op: fast paths test `type(x) is Tensor`).
    """

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = creation.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(
                f"Parameter(): argument 'data' must be Tensor, not {type(data).__name__}"
            )
        param: Parameter = _new(cls)
        adopt(param, data)
        param._autograd = None
        if requires_grad:
            param.requires_grad_(True)
        return param

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        """Everything happens in `__new__` (Tensor.__init__ refuses direct construction)."""

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        found: Parameter | None = memo.get(id(self))
        if found is not None:
            return found
        result = type(self)(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (Parameter, (self.detach(), self.requires_grad))


def adopt(target: Tensor, source: Tensor) -> None:
    """Point `target` at `source`'s storage and geometry (PyTorch's `target.data = source`).

    Autograd metadata is kept: the tensor object, its requires_grad and `.grad` stay, which
    is how `Module.to()` converts parameters while optimizers keep referring to them.
    """
    target._storage = source._storage
    target._offset = source._offset
    target._shape = source._shape
    target._strides = source._strides
    target._dtype = source._dtype
    target._device = source._device
    target._contiguous = source._contiguous
