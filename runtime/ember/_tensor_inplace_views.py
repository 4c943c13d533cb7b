"""Tensor methods that change a tensor's own geometry or memory (the in-place views,
`resize_`; ember._ops.inplace_views) and the few remaining queries (`H`, `mH`,
`sum_to_size`, `new`, `cuda`, ...)."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any, cast

from ember import _upper
from ember._tensor_core import TensorCore

if TYPE_CHECKING:
    from ember._tensor import Tensor

__all__ = ["InplaceViewMethods"]

_up: Any = _upper


class InplaceViewMethods(TensorCore):
    """t.squeeze_(), t.t_(), t.resize_(...), t.H, t.sum_to_size(...), t.cuda(), ..."""

    __slots__ = ()

    def squeeze_(self, dim: Any = None) -> Tensor:
        return _up.ops.squeeze_(self, dim)

    def unsqueeze_(self, dim: int) -> Tensor:
        return _up.ops.unsqueeze_(self, dim)

    def t_(self) -> Tensor:
        return _up.ops.t_(self)

    def transpose_(self, dim0: int, dim1: int) -> Tensor:
        return _up.ops.transpose_(self, dim0, dim1)

    def swapaxes_(self, axis0: int, axis1: int) -> Tensor:
        return _up.ops.transpose_(self, axis0, axis1)

    def swapdims_(self, dim0: int, dim1: int) -> Tensor:
        return _up.ops.transpose_(self, dim0, dim1)

    def as_strided_(self, size: Any, stride: Any, storage_offset: int | None = None) -> Tensor:
        return _up.ops.as_strided_(self, size, stride, storage_offset)

    def resize_(self, *sizes: Any) -> Tensor:
        return _up.ops.resize_(self, sizes)

    def resize_as_(self, other: Tensor) -> Tensor:
        return _up.ops.resize_(self, other.shape)

    def sum_to_size(self, *size: Any) -> Tensor:
        """Sum over the broadcast dimensions so the result has `size` (expand's adjoint)."""
        shape = _up.ops.creation.normalize_shape("sum_to_size", size)
        mine = self._shape
        lead = len(mine) - len(shape)
        if lead < 0 or any(s not in (1, n) for s, n in zip(shape, mine[lead:], strict=True)):
            raise RuntimeError(
                f"sum_to_size: size {list(shape)} is not expandable to size {list(mine)}"
            )
        out: Any = self
        if lead:
            out = out.sum(tuple(range(lead)))
        dims = tuple(i for i, (s, n) in enumerate(zip(shape, mine[lead:], strict=True))
                     if s == 1 and n != 1)  # fmt: skip
        return out.sum(dims, keepdim=True) if dims else out

    @property
    def H(self) -> Tensor:
        """Conjugate transpose of a matrix (a transpose: Ember's dtypes are real)."""
        if len(self._shape) not in (0, 2):
            raise RuntimeError(
                "tensor.H is only supported on matrices (2-D tensors). Got "
                f"{len(self._shape)}-D tensor."
            )
        return cast("Tensor", self) if not self._shape else _up.ops.t(self)

    @property
    def mH(self) -> Tensor:
        """Conjugate transpose of the last two dimensions."""
        if len(self._shape) < 2:
            raise RuntimeError(
                f"tensor.mH is only supported on matrices or batches of matrices. Got "
                f"{len(self._shape)}-D tensor."
            )
        return _up.ops.transpose(self, -2, -1)

    def new(self, *args: Any, **kwargs: Any) -> Tensor:
        """The legacy constructor: sizes give uninitialised memory, data is copied; same
        dtype and device as this tensor."""
        device = kwargs.pop("device", self._device)
        if kwargs:
            raise TypeError(f"new(): unexpected keyword arguments {sorted(kwargs)}")
        if not args or all(isinstance(a, builtins.int) for a in args):
            return _up.ops.creation.empty(args or (0,), dtype=self._dtype, device=device)
        if len(args) == 1:
            return _up.ops.creation.tensor(args[0], dtype=self._dtype, device=device)
        raise TypeError(f"new(): expected sizes or one sequence, got {args!r}")

    def new_empty_strided(self, size: Any, stride: Any, *, dtype: Any = None, device: Any = None,
                          requires_grad: builtins.bool = False) -> Tensor:  # fmt: skip
        return _up.ops.empty_strided(
            size, stride, dtype=dtype or self._dtype, device=device or self._device,
            requires_grad=requires_grad,
        )  # fmt: skip

    def const_data_ptr(self) -> builtins.int:
        return self.data_ptr()

    def cuda(self, device: Any = None, non_blocking: builtins.bool = False) -> Tensor:
        """This tensor on a cuda device (RuntimeError with the reason when there is none)."""
        if device is None:
            target: Any = "cuda"
        elif isinstance(device, builtins.int):
            target = f"cuda:{device}"
        else:
            target = device
        return _up.ops.to(self, target, non_blocking=non_blocking)

    def adjoint(self) -> Tensor:
        return _up.ops.adjoint(self)

    def resize(self, *sizes: Any) -> Tensor:
        return _up.ops.resize(self, *sizes)

    def resize_as(self, tensor: Tensor) -> Tensor:
        return _up.ops.resize_as(self, tensor)

    def as_strided_scatter(
        self, src: Tensor, size: Any, stride: Any, storage_offset: builtins.int | None = None
    ) -> Tensor:
        return _up.ops.as_strided_scatter(self, src, size, stride, storage_offset)

    def is_shared(self) -> builtins.bool:
        """Ember has no shared-memory storages (no share_memory_): never shared."""
        return False

    @property
    def output_nr(self) -> builtins.int:
        """Which output of its grad_fn this tensor is (0 for leaves and plain tensors)."""
        meta = self._autograd
        return 0 if meta is None else meta.output_nr

    @property
    def name(self) -> None:
        """Named tensors are not supported: always None, as an unnamed torch tensor."""
        return None

    def is_pinned(self, device: Any = None) -> builtins.bool:
        """Ember's host memory is ordinary (pageable) memory: never pinned."""
        return False

    def is_set_to(self, tensor: Tensor) -> builtins.bool:
        return (
            self._storage is tensor._storage and self._offset == tensor._offset
            and self._shape == tensor._shape and self._strides == tensor._strides
        )  # fmt: skip
