"""`Parameter`: a leaf tensor that a Module registers as a learnable weight."""

from __future__ import annotations

from typing import Any

from ember._ops import creation
from ember._tensor import Tensor

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter", "is_lazy"]

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


class Buffer(Tensor):
    """A tensor that a Module registers as a buffer when it is assigned as an attribute
    (PyTorch 2.x's nn.Buffer); `persistent` says whether state_dict includes it."""

    __slots__ = ("persistent",)
    persistent: bool

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Buffer:
        if data is None:
            data = creation.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(): argument 'data' must be Tensor, not {type(data).__name__}")
        buffer: Buffer = _new(cls)
        adopt(buffer, data.detach())
        buffer._autograd = None
        if data.requires_grad:
            buffer.requires_grad_(True)
        buffer.persistent = persistent
        return buffer

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True) -> None:
        """Everything happens in `__new__`."""

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild_buffer, (self.detach(), self.persistent))


def _rebuild_buffer(data: Tensor, persistent: bool) -> Buffer:
    return Buffer(data, persistent=persistent)


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet (lazy modules): it holds no data until
    `materialize(shape)` turns it into an ordinary Parameter of that shape."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(
        cls, requires_grad: bool = True, device: Any = None, dtype: Any = None
    ) -> UninitializedParameter:
        param: UninitializedParameter = _new(cls)
        adopt(param, creation.empty(0, device=device, dtype=dtype))
        param._autograd = None
        if requires_grad:
            param.requires_grad_(True)
        return param

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None):
        """Everything happens in `__new__`."""

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give this parameter uninitialised storage of `shape`; it becomes a Parameter."""
        _materialize(self, shape, device, dtype, Parameter)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __deepcopy__(self, memo: dict[int, Any]) -> UninitializedParameter:
        found: UninitializedParameter | None = memo.get(id(self))
        if found is None:
            found = type(self)(self.requires_grad, self.device, self.dtype)
            memo[id(self)] = found
        return found

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (UninitializedParameter, (self.requires_grad, None, self.dtype))


class UninitializedBuffer(Tensor):
    """A buffer whose shape is not known yet (lazy modules); `materialize(shape)` gives it
    storage and makes it an ordinary Tensor."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(
        cls, requires_grad: bool = False, device: Any = None, dtype: Any = None,
        persistent: bool = True,
    ) -> UninitializedBuffer:  # fmt: skip
        buffer: UninitializedBuffer = _new(cls)
        adopt(buffer, creation.empty(0, device=device, dtype=dtype))
        buffer._autograd = None
        if requires_grad:
            buffer.requires_grad_(True)
        return buffer

    def __init__(
        self, requires_grad: bool = False, device: Any = None, dtype: Any = None,
        persistent: bool = True,
    ) -> None:  # fmt: skip
        """Everything happens in `__new__`."""

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give this buffer uninitialised storage of `shape`; it becomes a Tensor."""
        _materialize(self, shape, device, dtype, Tensor)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


def _materialize(target: Tensor, shape: Any, device: Any, dtype: Any, becomes: type) -> None:
    device = target.device if device is None else device
    dtype = target.dtype if dtype is None else dtype
    adopt(target, creation.empty(shape, device=device, dtype=dtype))
    target.__class__ = becomes


def is_lazy(value: Any) -> bool:
    """Whether `value` is an uninitialized parameter or buffer."""
    return isinstance(value, (UninitializedParameter, UninitializedBuffer))
