"""The Tensor: a strided view (storage, offset, shape, strides, dtype, device).

Only metadata, host conversion and Python protocols live here; every computation is an
op in `ember._ops`, which the methods below call.
"""

from __future__ import annotations

import builtins
import ctypes
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ember import _dtype as dtypes
from ember._device import device
from ember._storage import HostView, Storage
from ember._stream import current_native

__all__ = ["Tensor", "contiguous_strides", "empty_tensor", "make_view"]

Shape = tuple[int, ...]


_STRIDES_CACHE: dict[Shape, Shape] = {}


def contiguous_strides(shape: Shape) -> Shape:
    """Row-major strides, in elements (memoised: shapes repeat across a program's ops)."""
    found = _STRIDES_CACHE.get(shape)
    if found is not None:
        return found
    strides = []
    step = 1
    for size in reversed(shape):
        strides.append(step)
        step *= size if size > 1 else 1
    result = tuple(reversed(strides))
    if len(_STRIDES_CACHE) < 4096:
        _STRIDES_CACHE[shape] = result
    return result


def _is_contiguous(shape: Shape, strides: Shape) -> bool:
    if 0 in shape:
        return True
    step = 1
    for size, stride in zip(reversed(shape), reversed(strides), strict=True):
        if size != 1:
            if stride != step:
                return False
            step *= size
    return True


class Tensor:
    """An n-dimensional array on a device, with PyTorch's names and semantics."""

    __slots__ = (
        "__weakref__",
        "_autograd",
        "_contiguous",
        "_device",
        "_dtype",
        "_offset",
        "_shape",
        "_storage",
        "_strides",
    )

    _storage: Storage
    _offset: int
    _shape: Shape
    _strides: Shape
    _dtype: dtypes.dtype
    _device: device
    _contiguous: bool
    _autograd: Any  # autograd metadata; None for tensors that never took part in autograd

    # NumPy defers to Tensor's reflected operators (np.float32(2) * t is a Tensor), as
    # it does for torch.Tensor.
    __array_priority__ = 1000

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise TypeError("create tensors with ember.tensor(), ember.zeros(), ... not Tensor()")

    # -- metadata ------------------------------------------------------------------------

    @property
    def shape(self) -> Size:
        return Size(self._shape)

    def size(self, dim: int | None = None) -> Any:
        """The shape, or the size of one dimension."""
        if dim is None:
            return Size(self._shape)
        return self._shape[_wrap_dim(dim, len(self._shape), "size")]

    def stride(self, dim: int | None = None) -> Any:
        """Strides in elements, or the stride of one dimension."""
        if dim is None:
            return self._strides
        return self._strides[_wrap_dim(dim, len(self._shape), "stride")]

    @property
    def dtype(self) -> dtypes.dtype:
        return self._dtype

    @property
    def device(self) -> device:
        return self._device

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def dim(self) -> int:
        return len(self._shape)

    def numel(self) -> int:
        n = 1
        for size in self._shape:
            n *= size
        return n

    def nelement(self) -> int:
        return self.numel()

    def element_size(self) -> int:
        return self._dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self._dtype.itemsize

    def storage_offset(self) -> int:
        return self._offset

    def is_contiguous(self) -> bool:
        return self._contiguous

    def data_ptr(self) -> int:
        """Address of the first element (host devices; 0 where addresses are opaque)."""
        ptr = self._storage.ptr
        return ptr + self._offset * self._dtype.itemsize if ptr else 0

    def untyped_storage(self) -> Storage:
        return self._storage

    def record_stream(self, stream: Any) -> None:
        """Mark this tensor's memory as in use by `stream` (PyTorch's record_stream).

        When the tensor is freed, the caching allocator hands its block out again only
        after the work enqueued on `stream` up to that moment has completed.
        """
        self._storage.record_stream(stream)

    @property
    def _version(self) -> int:
        return self._storage.version

    @property
    def is_floating_point_type(self) -> bool:
        return self._dtype.is_floating_point

    def is_floating_point(self) -> bool:
        return self._dtype.is_floating_point

    @property
    def is_cpu(self) -> bool:
        return self._device.type == "cpu"

    @property
    def requires_grad(self) -> bool:
        return self._autograd is not None and self._autograd.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        _autograd_api().set_requires_grad(self, value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set requires_grad in place (leaves only) and return self."""
        _autograd_api().set_requires_grad(self, requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self._autograd is None or self._autograd.grad_fn is None

    @property
    def grad(self) -> Tensor | None:
        return None if self._autograd is None else self._autograd.grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        _autograd_api().set_grad(self, value)

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
        _autograd_api().backward(self, gradient, retain_graph, create_graph, inputs)

    def register_hook(self, hook: Any) -> Any:
        """Call `hook(grad)` when this tensor's gradient is computed."""
        return _autograd_api().register_hook(self, hook)

    def retain_grad(self) -> None:
        """Keep `.grad` for this non-leaf tensor."""
        _autograd_api().retain_grad(self)

    def register_post_accumulate_grad_hook(self, hook: Any) -> Any:
        """Call `hook(tensor)` after this leaf's `.grad` was updated."""
        return _autograd_api().register_post_accumulate_grad_hook(self, hook)

    @property
    def data(self) -> Tensor:
        """This tensor's values outside autograd (a view sharing storage)."""
        return make_view(self, self._offset, self._shape, self._strides)

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, not {type(value).__name__}")
        self._storage = value._storage
        self._offset = value._offset
        self._shape = value._shape
        self._strides = value._strides
        self._dtype = value._dtype
        self._device = value._device
        self._contiguous = value._contiguous

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        found = memo.get(id(self))
        if found is not None:
            return found
        result = _ops.clone(self.detach())
        if self.requires_grad:
            result.requires_grad_(True)
        memo[id(self)] = result
        return result

    def detach_(self) -> Tensor:
        """Detach in place: this tensor leaves the graph and becomes a leaf."""
        self._autograd = None
        return self

    # -- host conversion -----------------------------------------------------------------

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """A NumPy array sharing memory (cpu); other devices need `force=True` (a copy)."""
        if self.requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy()"
            )
        backend = self._device._backend
        if backend.host_accessible:
            if not backend.synchronous:  # wait for the current stream only
                backend.stream_synchronize(current_native(self._device))
            return np.asarray(self._host_view())
        if not force:
            raise TypeError(
                f"can't convert {self._device} device type tensor to numpy. "
                "Use Tensor.cpu() to copy the tensor to host memory first."
            )
        return _ops.to_host_array(self)

    def _host_view(self) -> HostView:
        itemsize = self._dtype.itemsize
        return HostView(
            self._storage,
            self._offset * itemsize,
            self._shape,
            tuple(s * itemsize for s in self._strides),
            self._dtype.numpy,
        )

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        array = (
            self.numpy(force=True) if self._autograd is None else self.detach().numpy(force=True)
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
        return _ops.to_host_array(self).reshape(()).item()

    def tolist(self) -> Any:
        return _ops.to_host_array(self).tolist()

    def __repr__(self) -> str:
        from ember._format import format_tensor

        return format_tensor(self)

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return (_ops.select(self, 0, i) for i in range(self._shape[0]))

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

    def __hash__(self) -> int:
        return id(self)

    def __dlpack__(self, **kwargs: Any) -> Any:
        return _ops.to_dlpack(self, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return _ops.dlpack_device(self)

    # -- ops (implemented in ember._ops; see each function's docstring) ------------------

    def __getitem__(self, index: Any) -> Tensor:
        return _ops.getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        _ops.setitem(self, index, value)

    # arithmetic operators
    def __add__(self, other: Any) -> Tensor:
        return _ops.add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return _ops.add(other, self)

    def __iadd__(self, other: Any) -> Tensor:
        return _ops.add_(self, other)

    def __sub__(self, other: Any) -> Tensor:
        return _ops.sub(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return _ops.sub(other, self)

    def __isub__(self, other: Any) -> Tensor:
        return _ops.sub_(self, other)

    def __mul__(self, other: Any) -> Tensor:
        return _ops.mul(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return _ops.mul(other, self)

    def __imul__(self, other: Any) -> Tensor:
        return _ops.mul_(self, other)

    def __truediv__(self, other: Any) -> Tensor:
        return _ops.div(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return _ops.div(other, self)

    def __itruediv__(self, other: Any) -> Tensor:
        return _ops.div_(self, other)

    def __floordiv__(self, other: Any) -> Tensor:
        return _ops.floor_divide(self, other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        return _ops.floor_divide(other, self)

    def __mod__(self, other: Any) -> Tensor:
        return _ops.remainder(self, other)

    def __rmod__(self, other: Any) -> Tensor:
        return _ops.remainder(other, self)

    def __pow__(self, other: Any) -> Tensor:
        return _ops.pow(self, other)

    def __rpow__(self, other: Any) -> Tensor:
        return _ops.pow(other, self)

    def __matmul__(self, other: Any) -> Tensor:
        return _ops.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _ops.matmul(other, self)

    def __neg__(self) -> Tensor:
        return _ops.neg(self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return _ops.abs(self)

    def __invert__(self) -> Tensor:
        return _ops.bitwise_not(self)

    def __and__(self, other: Any) -> Tensor:
        return _ops.bitwise_and(self, other)

    def __rand__(self, other: Any) -> Tensor:
        return _ops.bitwise_and(other, self)

    def __or__(self, other: Any) -> Tensor:
        return _ops.bitwise_or(self, other)

    def __ror__(self, other: Any) -> Tensor:
        return _ops.bitwise_or(other, self)

    def __xor__(self, other: Any) -> Tensor:
        return _ops.bitwise_xor(self, other)

    def __rxor__(self, other: Any) -> Tensor:
        return _ops.bitwise_xor(other, self)

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _ops.eq(self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _ops.ne(self, other)

    def __lt__(self, other: Any) -> Tensor:
        return _ops.lt(self, other)

    def __le__(self, other: Any) -> Tensor:
        return _ops.le(self, other)

    def __gt__(self, other: Any) -> Tensor:
        return _ops.gt(self, other)

    def __ge__(self, other: Any) -> Tensor:
        return _ops.ge(self, other)

    # elementwise
    def add(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _ops.add(self, other, alpha=alpha)

    def add_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _ops.add_(self, other, alpha=alpha)

    def sub(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _ops.sub(self, other, alpha=alpha)

    def sub_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _ops.sub_(self, other, alpha=alpha)

    def mul(self, other: Any) -> Tensor:
        return _ops.mul(self, other)

    def mul_(self, other: Any) -> Tensor:
        return _ops.mul_(self, other)

    def div(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        return _ops.div(self, other, rounding_mode=rounding_mode)

    def div_(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        return _ops.div_(self, other, rounding_mode=rounding_mode)

    def floor_divide(self, other: Any) -> Tensor:
        return _ops.floor_divide(self, other)

    def remainder(self, other: Any) -> Tensor:
        return _ops.remainder(self, other)

    def fmod(self, other: Any) -> Tensor:
        return _ops.fmod(self, other)

    def pow(self, exponent: Any) -> Tensor:
        return _ops.pow(self, exponent)

    def pow_(self, exponent: Any) -> Tensor:
        return _ops.pow_(self, exponent)

    def maximum(self, other: Tensor) -> Tensor:
        return _ops.maximum(self, other)

    def minimum(self, other: Tensor) -> Tensor:
        return _ops.minimum(self, other)

    def clamp(self, min: Any = None, max: Any = None) -> Tensor:
        return _ops.clamp(self, min, max)

    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:
        return _ops.clamp_(self, min, max)

    clip = clamp
    clip_ = clamp_

    def eq(self, other: Any) -> Tensor:
        return _ops.eq(self, other)

    def ne(self, other: Any) -> Tensor:
        return _ops.ne(self, other)

    def lt(self, other: Any) -> Tensor:
        return _ops.lt(self, other)

    def le(self, other: Any) -> Tensor:
        return _ops.le(self, other)

    def gt(self, other: Any) -> Tensor:
        return _ops.gt(self, other)

    def ge(self, other: Any) -> Tensor:
        return _ops.ge(self, other)

    def logical_and(self, other: Any) -> Tensor:
        return _ops.logical_and(self, other)

    def logical_or(self, other: Any) -> Tensor:
        return _ops.logical_or(self, other)

    def logical_xor(self, other: Any) -> Tensor:
        return _ops.logical_xor(self, other)

    def logical_not(self) -> Tensor:
        return _ops.logical_not(self)

    def neg(self) -> Tensor:
        return _ops.neg(self)

    def abs(self) -> Tensor:
        return _ops.abs(self)

    def sign(self) -> Tensor:
        return _ops.sign(self)

    def exp(self) -> Tensor:
        return _ops.exp(self)

    def exp_(self) -> Tensor:
        return _ops.exp_(self)

    def log(self) -> Tensor:
        return _ops.log(self)

    def log1p(self) -> Tensor:
        return _ops.log1p(self)

    def expm1(self) -> Tensor:
        return _ops.expm1(self)

    def sqrt(self) -> Tensor:
        return _ops.sqrt(self)

    def rsqrt(self) -> Tensor:
        return _ops.rsqrt(self)

    def sin(self) -> Tensor:
        return _ops.sin(self)

    def cos(self) -> Tensor:
        return _ops.cos(self)

    def tanh(self) -> Tensor:
        return _ops.tanh(self)

    def sigmoid(self) -> Tensor:
        return _ops.sigmoid(self)

    def relu(self) -> Tensor:
        return _ops.relu(self)

    def relu_(self) -> Tensor:
        return _ops.relu_(self)

    # In-place unary variants: the op written into this tensor (autograd-aware).
    def neg_(self) -> Tensor:
        return _ops.neg(self, out=self) if self._autograd is None else self.copy_(self.neg())

    def abs_(self) -> Tensor:
        return _ops.abs(self, out=self) if self._autograd is None else self.copy_(self.abs())

    def sqrt_(self) -> Tensor:
        return _ops.sqrt(self, out=self) if self._autograd is None else self.copy_(self.sqrt())

    def log_(self) -> Tensor:
        return _ops.log(self, out=self) if self._autograd is None else self.copy_(self.log())

    def sigmoid_(self) -> Tensor:
        return (
            _ops.sigmoid(self, out=self) if self._autograd is None else self.copy_(self.sigmoid())
        )

    def tanh_(self) -> Tensor:
        return _ops.tanh(self, out=self) if self._autograd is None else self.copy_(self.tanh())

    def floor_(self) -> Tensor:
        return _ops.floor(self, out=self) if self._autograd is None else self.copy_(self.floor())

    def ceil_(self) -> Tensor:
        return _ops.ceil(self, out=self) if self._autograd is None else self.copy_(self.ceil())

    def round_(self) -> Tensor:
        return _ops.round(self, out=self) if self._autograd is None else self.copy_(self.round())

    def trunc_(self) -> Tensor:
        return _ops.trunc(self, out=self) if self._autograd is None else self.copy_(self.trunc())

    def erf(self) -> Tensor:
        return _ops.erf(self)

    def floor(self) -> Tensor:
        return _ops.floor(self)

    def ceil(self) -> Tensor:
        return _ops.ceil(self)

    def round(self) -> Tensor:
        return _ops.round(self)

    def trunc(self) -> Tensor:
        return _ops.trunc(self)

    def reciprocal(self) -> Tensor:
        return _ops.reciprocal(self)

    def square(self) -> Tensor:
        return _ops.mul(self, self)

    # in-place and copies
    def copy_(self, src: Tensor, non_blocking: builtins.bool = False) -> Tensor:
        return _ops.copy_(self, src, non_blocking)

    def fill_(self, value: Any) -> Tensor:
        return _ops.fill_(self, value)

    def zero_(self) -> Tensor:
        return _ops.fill_(self, 0)

    def masked_fill(self, mask: Tensor, value: Any) -> Tensor:
        return _ops.masked_fill(self, mask, value)

    def masked_fill_(self, mask: Tensor, value: Any) -> Tensor:
        return _ops.masked_fill_(self, mask, value)

    def where(self, condition: Tensor, other: Any) -> Tensor:
        return _ops.where(condition, self, other)

    # reductions
    def sum(self, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None) -> Tensor:
        return _ops.sum(self, dim, keepdim, dtype=dtype)

    def mean(self, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None) -> Tensor:
        return _ops.mean(self, dim, keepdim, dtype=dtype)

    def prod(self, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None) -> Tensor:
        return _ops.prod(self, dim, keepdim, dtype=dtype)

    def max(self, dim: Any = None, keepdim: builtins.bool = False) -> Any:
        return _ops.max(self, dim, keepdim)

    def min(self, dim: Any = None, keepdim: builtins.bool = False) -> Any:
        return _ops.min(self, dim, keepdim)

    def amax(self, dim: Any = (), keepdim: builtins.bool = False) -> Tensor:
        return _ops.amax(self, dim, keepdim)

    def amin(self, dim: Any = (), keepdim: builtins.bool = False) -> Tensor:
        return _ops.amin(self, dim, keepdim)

    def argmax(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        return _ops.argmax(self, dim, keepdim)

    def argmin(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        return _ops.argmin(self, dim, keepdim)

    def var(
        self,
        dim: Any = None,
        *,
        correction: Any = 1,
        keepdim: builtins.bool = False,
        unbiased: builtins.bool | None = None,
    ) -> Tensor:
        return _ops.var(self, dim, correction=correction, keepdim=keepdim, unbiased=unbiased)

    def std(
        self,
        dim: Any = None,
        *,
        correction: Any = 1,
        keepdim: builtins.bool = False,
        unbiased: builtins.bool | None = None,
    ) -> Tensor:
        return _ops.std(self, dim, correction=correction, keepdim=keepdim, unbiased=unbiased)

    def all(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        return _ops.all(self, dim, keepdim)

    def any(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        return _ops.any(self, dim, keepdim)

    def logsumexp(self, dim: Any, keepdim: builtins.bool = False) -> Tensor:
        return _ops.logsumexp(self, dim, keepdim)

    def cumsum(self, dim: int, *, dtype: Any = None) -> Tensor:
        return _ops.cumsum(self, dim, dtype=dtype)

    # linear algebra
    def matmul(self, other: Tensor) -> Tensor:
        return _ops.matmul(self, other)

    def mm(self, other: Tensor) -> Tensor:
        return _ops.mm(self, other)

    def bmm(self, other: Tensor) -> Tensor:
        return _ops.bmm(self, other)

    # views and shape
    def view(self, *shape: Any) -> Tensor:
        return _ops.view(self, *shape)

    def view_as(self, other: Tensor) -> Tensor:
        return _ops.view(self, other.shape)

    def reshape(self, *shape: Any) -> Tensor:
        return _ops.reshape(self, *shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        return _ops.reshape(self, other.shape)

    def permute(self, *dims: Any) -> Tensor:
        return _ops.permute(self, *dims)

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        return _ops.transpose(self, dim0, dim1)

    def t(self) -> Tensor:
        return _ops.t(self)

    @property
    def T(self) -> Tensor:
        return _ops.permute(self, *reversed(range(len(self._shape))))

    @property
    def mT(self) -> Tensor:
        return _ops.transpose(self, -2, -1)

    def select(self, dim: int, index: int) -> Tensor:
        return _ops.select(self, dim, index)

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        return _ops.narrow(self, dim, start, length)

    def expand(self, *sizes: Any) -> Tensor:
        return _ops.expand(self, *sizes)

    def expand_as(self, other: Tensor) -> Tensor:
        return _ops.expand(self, other.shape)

    def squeeze(self, dim: Any = None) -> Tensor:
        return _ops.squeeze(self, dim)

    def unsqueeze(self, dim: int) -> Tensor:
        return _ops.unsqueeze(self, dim)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        return _ops.flatten(self, start_dim, end_dim)

    def unflatten(self, dim: int, sizes: Sequence[int]) -> Tensor:
        return _ops.unflatten(self, dim, sizes)

    def split(self, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
        return _ops.split(self, split_size_or_sections, dim)

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        return _ops.chunk(self, chunks, dim)

    def unbind(self, dim: int = 0) -> tuple[Tensor, ...]:
        return _ops.unbind(self, dim)

    def as_strided(
        self, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
    ) -> Tensor:
        return _ops.as_strided(self, size, stride, storage_offset)

    # indexing
    def gather(self, dim: int, index: Tensor) -> Tensor:
        return _ops.gather(self, dim, index)

    def scatter(self, dim: int, index: Tensor, src: Any) -> Tensor:
        return _ops.scatter(self, dim, index, src)

    def scatter_(self, dim: int, index: Tensor, src: Any) -> Tensor:
        return _ops.scatter_(self, dim, index, src)

    def scatter_add(self, dim: int, index: Tensor, src: Tensor) -> Tensor:
        return _ops.scatter_add(self, dim, index, src)

    def scatter_add_(self, dim: int, index: Tensor, src: Tensor) -> Tensor:
        return _ops.scatter_add_(self, dim, index, src)

    def index_select(self, dim: int, index: Tensor) -> Tensor:
        return _ops.index_select(self, dim, index)

    def nonzero(self, *, as_tuple: builtins.bool = False) -> Any:
        return _ops.nonzero(self, as_tuple=True) if as_tuple else _ops.nonzero(self)

    def movedim(self, source: Any, destination: Any) -> Tensor:
        return _ops.movedim(self, source, destination)

    def take(self, index: Tensor) -> Tensor:
        return _ops.take(self, index)

    # random, in place
    def uniform_(self, from_: float = 0.0, to: float = 1.0, *, generator: Any = None) -> Tensor:
        return _ops.uniform_(self, from_, to, generator=generator)

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
        return _ops.normal_(self, mean, std, generator=generator)

    def random_(self, from_: int = 0, to: int | None = None, *, generator: Any = None) -> Tensor:
        return _ops.random_(self, from_, to, generator=generator)

    # -- conversion ops ------------------------------------------------------------------

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        return _ops.to(self, *args, **kwargs)

    def cpu(self) -> Tensor:
        return _ops.to(self, "cpu")

    def float(self) -> Tensor:
        return _ops.to(self, dtypes.float32)

    def double(self) -> Tensor:
        return _ops.to(self, dtypes.float64)

    def half(self) -> Tensor:
        return _ops.to(self, dtypes.float16)

    def long(self) -> Tensor:
        return _ops.to(self, dtypes.int64)

    def int(self) -> Tensor:
        return _ops.to(self, dtypes.int32)

    def bool(self) -> Tensor:
        return _ops.to(self, dtypes.bool)

    def type_as(self, other: Tensor) -> Tensor:
        return _ops.to(self, other.dtype)

    def clone(self) -> Tensor:
        return _ops.clone(self)

    def contiguous(self) -> Tensor:
        return self if self._contiguous else _ops.clone(self)

    def detach(self) -> Tensor:
        return make_view(self, self._offset, self._shape, self._strides)

    def new_tensor(self, data: Any) -> Tensor:
        return _ops.tensor(data, dtype=self._dtype, device=self._device)

    def new_zeros(self, *size: Any) -> Tensor:
        return _ops.zeros(*size, dtype=self._dtype, device=self._device)

    def new_ones(self, *size: Any) -> Tensor:
        return _ops.ones(*size, dtype=self._dtype, device=self._device)

    def new_empty(self, *size: Any) -> Tensor:
        return _ops.empty(*size, dtype=self._dtype, device=self._device)

    def new_full(self, size: Sequence[builtins.int], fill_value: Any) -> Tensor:
        return _ops.full(size, fill_value, dtype=self._dtype, device=self._device)


class Size(tuple[int, ...]):
    """A tensor's shape: a tuple of ints (PyTorch's torch.Size)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"ember.Size([{', '.join(str(s) for s in self)}])"

    def numel(self) -> int:
        n = 1
        for size in self:
            n *= size
        return n


def _wrap_dim(dim: int, ndim: int, op: str) -> int:
    bound = max(ndim, 1)
    if not -bound <= dim < bound:
        raise IndexError(
            f"{op}: Dimension out of range (expected to be in range of "
            f"[{-bound}, {bound - 1}], but got {dim})"
        )
    return dim + bound if dim < 0 else dim


_new_tensor = object.__new__

# By dtype index: reads one element at a host address (`.value` is the Python number that
# NumPy's `.item()` gives); None where ctypes has no such type (float16).
_READ_SCALAR: tuple[Any, ...] = (
    ctypes.c_bool.from_address,
    ctypes.c_uint8.from_address,
    ctypes.c_int8.from_address,
    ctypes.c_int32.from_address,
    ctypes.c_int64.from_address,
    None,
    ctypes.c_float.from_address,
    ctypes.c_double.from_address,
)
assert tuple(d.index for d in dtypes.ALL_DTYPES) == tuple(range(len(_READ_SCALAR)))
assert _READ_SCALAR[dtypes.float16.index] is None


def empty_tensor(shape: Shape, dt: dtypes.dtype, dev: device) -> Tensor:
    """A new contiguous tensor with uninitialised memory (the allocation fast path)."""
    n = 1
    for size in shape:
        n *= size
    t: Tensor = _new_tensor(Tensor)
    t._storage = Storage(dev, n * dt.itemsize)
    t._offset = 0
    t._shape = shape
    t._strides = _STRIDES_CACHE.get(shape) or contiguous_strides(shape)
    t._dtype = dt
    t._device = dev
    t._contiguous = True
    t._autograd = None
    return t


def make_view(base: Tensor, offset: int, shape: Shape, strides: Shape) -> Tensor:
    """A tensor sharing `base`'s storage with new geometry (no autograd metadata)."""
    t: Tensor = _new_tensor(Tensor)
    t._storage = base._storage
    t._offset = offset
    t._shape = shape
    t._strides = strides
    t._dtype = base._dtype
    t._device = base._device
    t._contiguous = _is_contiguous(shape, strides)
    t._autograd = None
    return t


def wrap_storage(
    storage: Storage, offset: int, shape: Shape, strides: Shape, dt: dtypes.dtype
) -> Tensor:
    """A tensor over an existing storage."""
    t: Tensor = _new_tensor(Tensor)
    t._storage = storage
    t._offset = offset
    t._shape = shape
    t._strides = strides
    t._dtype = dt
    t._device = storage.device
    t._contiguous = _is_contiguous(shape, strides)
    t._autograd = None
    return t


def _autograd_api() -> Any:
    from ember.autograd import _api

    return _api


from ember import _ops  # noqa: E402 - ops import Tensor; methods resolve `_ops` at call time
