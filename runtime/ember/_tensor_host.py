"""Tensor methods that read values on the host, and the Python protocols built on them."""

from __future__ import annotations

import builtins
import ctypes
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ember import _dtype as dtypes
from ember import _upper
from ember._format import format_tensor
from ember._storage import HostView
from ember._stream import current_native
from ember._tensor_core import TensorCore

if TYPE_CHECKING:
    from ember._tensor import Tensor

__all__ = ["HostMethods"]

# Any, not the typed `_upper`: these methods pass `self` (typed as this mixin, not as
# Tensor) to ops; each is a one-line forward whose public signature is typed here.
_up: Any = _upper

# By dtype index: reads one element at a host address (`.value` is the Python number that
# NumPy's `.item()` gives); None where ctypes has no such type (float16, bfloat16).
_READ_SCALAR: tuple[Any, ...] = (
    ctypes.c_bool.from_address,
    ctypes.c_uint8.from_address,
    ctypes.c_int8.from_address,
    ctypes.c_int32.from_address,
    ctypes.c_int64.from_address,
    None,
    ctypes.c_float.from_address,
    ctypes.c_double.from_address,
    None,
)
assert tuple(d.index for d in dtypes.ALL_DTYPES) == tuple(range(len(_READ_SCALAR)))
assert _READ_SCALAR[dtypes.float16.index] is None and _READ_SCALAR[dtypes.bfloat16.index] is None


class HostMethods(TensorCore):
    """numpy(), item(), tolist(), repr, len, iteration, bool/float/int, DLPack."""

    __slots__ = ()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """A NumPy array sharing memory (cpu); other devices need `force=True` (a copy)."""
        if self._autograd is not None and self._autograd.requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy()"
            )
        backend = self._device._backend
        if backend.host_accessible:
            if not backend.synchronous:  # wait for the current stream only
                backend.stream_synchronize(current_native(self._device))
            return self._host_array()
        if not force:
            raise TypeError(
                f"can't convert {self._device} device type tensor to numpy. "
                "Use Tensor.cpu() to copy the tensor to host memory first."
            )
        return _up.ops.to_host_array(self)

    def _host_view(self) -> HostView:
        itemsize = self._dtype.itemsize
        return HostView(
            self._storage,
            self._offset * itemsize,
            self._shape,
            tuple(s * itemsize for s in self._strides),
            self._dtype.numpy,
        )

    def _host_array(self) -> np.ndarray:
        """The host view as a NumPy array of this dtype (shares memory)."""
        array = np.asarray(self._host_view())
        np_dtype = self._dtype.numpy
        return array if array.dtype == np_dtype else array.view(np_dtype)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        array = (
            self.numpy(force=True)
            if self._autograd is None
            else cast("Tensor", self).detach().numpy(force=True)
        )
        if dtype is not None:
            array = array.astype(dtype, copy=False)
        return array.copy() if copy else array

    def item(self) -> builtins.bool | int | float:
        """The value of a one-element tensor as a Python number."""
        n = 1
        for size in self._shape:
            n *= size
        if n != 1:
            raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
        dev = self._device
        backend = dev._backend
        dt = self._dtype
        read = _READ_SCALAR[dt.index]
        if read is not None and backend.host_accessible:
            # Read the element in place: no NumPy array view (~1 us) for one number.
            if not backend.synchronous:  # wait for the current stream only
                backend.stream_synchronize(current_native(dev))
            return read(self._storage.ptr + self._offset * dt.itemsize).value
        return _up.ops.to_host_array(self).reshape(()).item()

    def tolist(self) -> Any:
        return _up.ops.to_host_array(self).tolist()

    def __repr__(self) -> str:
        return format_tensor(cast("Tensor", self))

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return (_up.ops.select(self, 0, i) for i in range(self._shape[0]))

    def __bool__(self) -> builtins.bool:
        if self.numel() != 1:
            raise RuntimeError(f"Boolean value of Tensor with {self.numel()} elements is ambiguous")
        return builtins.bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __dlpack__(self, **kwargs: Any) -> Any:
        return _up.ops.to_dlpack(self, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return _up.ops.dlpack_device(self)
