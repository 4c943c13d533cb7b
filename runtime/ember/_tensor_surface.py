"""Tensor methods that describe a tensor or build a sibling: format, type(), new_*, is_*."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any, cast

from ember import _dtype as dtypes
from ember import _upper
from ember._layout import layout, strided
from ember._tensor_core import TensorCore

if TYPE_CHECKING:
    from ember._tensor import Tensor

__all__ = ["SurfaceMethods", "type_name"]

_up: Any = _upper

# PyTorch's legacy type strings, which scripts compare against (`t.type() ==
# 'torch.FloatTensor'`): Ember answers the same strings so that those comparisons port.
_TYPE_NAMES = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
    "int16": "ShortTensor",
    "int8": "CharTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
}
_BY_TYPE_NAME = {f"torch.{v}": k for k, v in _TYPE_NAMES.items()}


def type_name(dt: dtypes.dtype, device_type: str) -> str:
    """'torch.FloatTensor' on cpu, 'torch.cuda.FloatTensor' on cuda, 'torch.opencl....'."""
    prefix = "torch." if device_type == "cpu" else f"torch.{device_type}."
    return prefix + _TYPE_NAMES[dt.name]


class SurfaceMethods(TensorCore):
    """f"{t:.4f}", t.type(), t.new_zeros(...), t.is_signed(), t.layout, ..."""

    __slots__ = ()

    def __format__(self, spec: str) -> str:
        if not self._shape:  # a 0-d tensor formats as its Python number, as in torch
            return format(cast("Tensor", self).item(), spec)
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return repr(self)

    def type(self, dtype: Any = None, non_blocking: builtins.bool = False) -> Any:
        """No argument: the type string ('torch.FloatTensor'); else convert to `dtype`."""
        if dtype is None:
            return type_name(self._dtype, self._device.type)
        if isinstance(dtype, str):
            name = _BY_TYPE_NAME.get(dtype)
            found = getattr(dtypes, name, None) if name else None
            if not isinstance(found, dtypes.dtype):
                raise ValueError(f"type: invalid type {dtype!r}")
            dtype = found
        return _up.ops.to(self, dtype, non_blocking=non_blocking)

    def _like(self, dtype: Any, device: Any) -> dict[str, Any]:
        return {
            "dtype": self._dtype if dtype is None else dtype,
            "device": self._device if device is None else device,
        }

    def new_tensor(
        self, data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
    ) -> Tensor:
        out = _up.ops.tensor(data, **self._like(dtype, device))
        return out.requires_grad_(requires_grad) if requires_grad else out

    def new_zeros(
        self, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
    ) -> Tensor:
        return _up.ops.zeros(*size, **self._like(dtype, device), requires_grad=requires_grad)

    def new_ones(
        self, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
    ) -> Tensor:
        return _up.ops.ones(*size, **self._like(dtype, device), requires_grad=requires_grad)

    def new_empty(
        self, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
    ) -> Tensor:
        return _up.ops.empty(*size, **self._like(dtype, device), requires_grad=requires_grad)

    def new_full(
        self,
        size: Any,
        fill_value: Any,
        *,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
    ) -> Tensor:
        kwargs = self._like(dtype, device)
        return _up.ops.full(size, fill_value, **kwargs, requires_grad=requires_grad)

    def is_complex(self) -> builtins.bool:
        return False  # Ember has no complex dtypes

    def is_signed(self) -> builtins.bool:
        return self._dtype.is_signed

    def is_nonzero(self) -> builtins.bool:
        return is_nonzero(self)

    def is_same_size(self, other: Any) -> builtins.bool:
        return self._shape == other._shape

    def is_distributed(self) -> builtins.bool:
        return False  # as PyTorch's: a tensor is never split across processes

    @property
    def is_sparse(self) -> builtins.bool:
        return False

    @property
    def is_quantized(self) -> builtins.bool:
        return False

    @property
    def is_meta(self) -> builtins.bool:
        return False

    @property
    def is_cuda(self) -> builtins.bool:
        return self._device.type == "cuda"

    @property
    def layout(self) -> layout:
        return strided

    def get_device(self) -> int:
        """-1 on an unindexed device such as the cpu (as torch), else the device index."""
        index = self._device.index
        return -1 if index is None else index

    def ndimension(self) -> int:
        return len(self._shape)

    def dim_order(self) -> tuple[int, ...]:
        """Dims from outermost to innermost in memory (stable for equal strides)."""
        dims = range(len(self._shape))
        return tuple(sorted(dims, key=lambda d: -self._strides[d]))

    def byte(self) -> Tensor:
        return _up.ops.to(self, dtypes.uint8)

    def char(self) -> Tensor:
        return _up.ops.to(self, dtypes.int8)


def is_nonzero(t: Any) -> builtins.bool:
    """The truth of a one-element tensor; RuntimeError otherwise, as torch."""
    n = t.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(t.item())


def is_complex(t: Any) -> builtins.bool:
    """False: Ember has no complex dtypes."""
    return builtins.bool(t.is_complex())


def is_floating_point(t: Any) -> builtins.bool:
    """Whether `t`'s dtype is a floating type."""
    return builtins.bool(t.is_floating_point())


def is_signed(t: Any) -> builtins.bool:
    """Whether `t`'s dtype is signed."""
    return builtins.bool(t.is_signed())


def get_device(t: Any) -> int:
    """-1 for a cpu tensor, else its device index."""
    return int(t.get_device())
