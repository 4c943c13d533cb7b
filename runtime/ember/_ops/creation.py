"""Factories: tensors from data, filled tensors, ranges, identity, NumPy and DLPack."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember import _dtype
from ember._device import DeviceLike, check_usable, device, get_default_device
from ember._dispatch import kernel_for
from ember._ops import _launch, names
from ember._ops._known_bounds import remember_host_values
from ember._ops._meta import normalize_shape
from ember._ops.conversion import fill_, upload
from ember._storage import Storage
from ember._tensor import Tensor, empty_tensor, make_view, wrap_storage

__all__ = [
    "arange",
    "as_tensor",
    "empty",
    "empty_like",
    "eye",
    "from_dlpack",
    "from_numpy",
    "full",
    "full_like",
    "linspace",
    "ones",
    "ones_like",
    "tensor",
    "zeros",
    "zeros_like",
]


def _requiring_grad(t: Tensor, requires_grad: bool) -> Tensor:
    """A factory's result, made a leaf that requires grad when asked (PyTorch's keyword)."""
    return t.requires_grad_(True) if requires_grad else t


def resolve_device(dev: DeviceLike | None) -> device:
    """The device a factory allocates on: `dev`, else the default device."""
    if dev is None:
        return get_default_device()
    resolved = device(dev)
    check_usable(resolved)
    return resolved.placement


def _infer_dtype(array: np.ndarray) -> _dtype.dtype:
    kind = array.dtype.kind
    if kind == "f":
        return _dtype.get_default_dtype()
    if kind in "iu":
        return _dtype.int64
    if kind == "b":
        return _dtype.bool
    raise TypeError(f"tensor: can't convert data of NumPy dtype {array.dtype} to an ember dtype")


def _host_array(data: Any, dt: _dtype.dtype | None) -> tuple[np.ndarray, _dtype.dtype]:
    if dt is not None:
        dt = _factory_dtype(dt)
    if isinstance(data, np.ndarray):
        array = data
        if dt is None:
            found = _dtype.FROM_NUMPY.get(array.dtype)
            if found is None:
                raise TypeError(f"tensor: unsupported NumPy dtype {array.dtype}")
            dt = found
    else:
        if isinstance(data, Tensor):
            data = data.numpy(force=True)
        elif isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
            data = [x.numpy(force=True) if isinstance(x, Tensor) else x for x in data]
        array = np.asarray(data)
        if array.dtype == object:
            raise TypeError(f"tensor: can't build a tensor from {type(data).__name__} data")
        if dt is None:
            dt = _infer_dtype(array) if not isinstance(data, np.generic) else _scalar_dtype(data)
    return np.asarray(array, dtype=dt.numpy, order="C"), dt


def _scalar_dtype(value: np.generic) -> _dtype.dtype:
    found = _dtype.FROM_NUMPY.get(value.dtype)
    if found is None:
        raise TypeError(f"tensor: unsupported NumPy scalar type {value.dtype}")
    return found


def _upload(array: np.ndarray, dt: _dtype.dtype, dev: device, source: Any = None) -> Tensor:
    """A new tensor on `dev` with `array`'s values; `source` is what `array` came from."""
    out = empty_tensor(tuple(array.shape), dt, dev)
    # An asynchronous device reads `array` later: unless it is ours alone (built from
    # lists, or a converted copy), the upload takes a snapshot so the caller may change
    # their array at once, as after torch.tensor(array).
    owned = not (isinstance(source, np.ndarray) and np.may_share_memory(array, source))
    upload(out, array, owned)
    if not dev._backend.host_accessible:
        remember_host_values(out, array)  # spares index checks a device read
    return out


def tensor(
    data: Any,
    *,
    dtype: _dtype.dtype | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """A new tensor holding a copy of `data` (nested lists, scalars, NumPy arrays)."""
    array, dt = _host_array(data, dtype)
    return _requiring_grad(_upload(array, dt, resolve_device(device), data), requires_grad)


def as_tensor(
    data: Any, dtype: _dtype.dtype | None = None, device: DeviceLike | None = None
) -> Tensor:
    """Like `tensor`, but shares memory with a tensor or a NumPy array when it can."""
    if isinstance(data, Tensor):
        return data.to(device=device or data._device, dtype=dtype or data._dtype)
    dev = resolve_device(device)
    shareable = isinstance(data, np.ndarray) and (dtype is None or dtype.numpy == data.dtype)
    if shareable and dev._backend.host_accessible and data.dtype in _dtype.FROM_NUMPY:
        return _wrap_numpy(data, dev)
    return tensor(data, dtype=dtype, device=dev)


def from_numpy(array: np.ndarray) -> Tensor:
    """A cpu tensor sharing memory with `array` (writes show through both ways)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected np.ndarray (got {type(array).__name__})")
    return _wrap_numpy(array, device("cpu"))


def _wrap_numpy(array: np.ndarray, dev: device) -> Tensor:
    dt = _dtype.FROM_NUMPY.get(array.dtype)
    if dt is None:
        raise TypeError(
            f"from_numpy: can't convert np.ndarray of type {array.dtype}. The only supported "
            f"types are: {', '.join(d.numpy.name for d in _dtype.ALL_DTYPES)}."
        )
    itemsize = array.itemsize
    if any(s % itemsize for s in array.strides) or any(s < 0 for s in array.strides):
        raise ValueError(
            "from_numpy: arrays with negative or unaligned strides are not supported; "
            "copy the array first (np.ascontiguousarray)"
        )
    wrapped = dev._backend.wrap_host_array(array)
    if wrapped is None:
        raise RuntimeError(f"from_numpy: device {dev} cannot share host memory")
    handle, ptr = wrapped
    strides = tuple(s // itemsize for s in array.strides)
    extent = (
        sum((n - 1) * s for n, s in zip(array.shape, strides, strict=True)) + 1 if array.size else 0
    )
    storage = Storage.wrap(dev, handle, ptr, extent * itemsize, owner=array)
    return wrap_storage(storage, 0, tuple(array.shape), strides, dt)


def from_dlpack(capsule_owner: Any) -> Tensor:
    """A tensor sharing memory with any DLPack exporter (NumPy, PyTorch, ...) on the host."""
    if isinstance(capsule_owner, Tensor):
        return capsule_owner
    array = np.from_dlpack(capsule_owner)
    return from_numpy(array)


def _factory_dtype(dtype: _dtype.dtype | None) -> _dtype.dtype:
    if dtype is None:
        return _dtype.get_default_dtype()
    if not isinstance(dtype, _dtype.dtype):
        raise TypeError(f"dtype must be an ember.dtype such as ember.float32, not {dtype!r}")
    return dtype


def empty(
    *size: Any,
    dtype: _dtype.dtype | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """An uninitialised tensor."""
    out = empty_tensor(
        normalize_shape("empty", size), _factory_dtype(dtype), resolve_device(device)
    )
    return _requiring_grad(out, requires_grad)


def full(
    size: Sequence[int],
    fill_value: Any,
    *,
    dtype: _dtype.dtype | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """A tensor filled with `fill_value` (dtype inferred from it when not given)."""
    if dtype is None:
        dtype = _dtype.default_for_category(_dtype.scalar_category(fill_value))
    dtype = _factory_dtype(dtype)
    out = empty_tensor(normalize_shape("full", (size,)), dtype, resolve_device(device))
    return _requiring_grad(fill_(out, fill_value), requires_grad)


def zeros(
    *size: Any,
    dtype: _dtype.dtype | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """A tensor of zeros."""
    out = empty_tensor(
        normalize_shape("zeros", size), _factory_dtype(dtype), resolve_device(device)
    )
    return _requiring_grad(fill_(out, 0), requires_grad)


def ones(
    *size: Any,
    dtype: _dtype.dtype | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """A tensor of ones."""
    out = empty_tensor(normalize_shape("ones", size), _factory_dtype(dtype), resolve_device(device))
    return _requiring_grad(fill_(out, 1), requires_grad)


def _like(t: Tensor, dtype: _dtype.dtype | None, dev: DeviceLike | None) -> Tensor:
    return empty_tensor(
        t._shape,
        t._dtype if dtype is None else _factory_dtype(dtype),
        t._device if dev is None else resolve_device(dev),
    )


def empty_like(
    t: Tensor,
    *,
    dtype: _dtype.dtype | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """An uninitialised tensor with `t`'s shape (and dtype and device unless given)."""
    return _requiring_grad(_like(t, dtype, device), requires_grad)


def zeros_like(
    t: Tensor,
    *,
    dtype: _dtype.dtype | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """Zeros with `t`'s shape."""
    return _requiring_grad(fill_(_like(t, dtype, device), 0), requires_grad)


def ones_like(
    t: Tensor,
    *,
    dtype: _dtype.dtype | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """Ones with `t`'s shape."""
    return _requiring_grad(fill_(_like(t, dtype, device), 1), requires_grad)


def full_like(
    t: Tensor,
    fill_value: Any,
    *,
    dtype: _dtype.dtype | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """`fill_value` everywhere, with `t`'s shape."""
    return _requiring_grad(fill_(_like(t, dtype, device), fill_value), requires_grad)


def arange(
    start: Any,
    end: Any = None,
    step: Any = 1,
    *,
    dtype: _dtype.dtype | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """Values from `start` to `end` (exclusive) by `step`; int64 unless a bound is a float."""
    if end is None:
        start, end = 0, start
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError(
            f"arange: upper bound and larger bound inconsistent with step sign "
            f"(start={start}, end={end}, step={step})"
        )
    if dtype is None:
        floats = any(isinstance(v, float) for v in (start, end, step))
        dtype = _dtype.get_default_dtype() if floats else _dtype.int64
    dtype = _factory_dtype(dtype)
    count = max(0, math.ceil((end - start) / step))
    out = empty_tensor((count,), dtype, resolve_device(device))
    if count:
        cast = float if dtype.is_floating_point else int
        kernel_for(names.ARANGE, out._device, dtype)(out, cast(start), cast(step))
    return _requiring_grad(out, requires_grad)


def linspace(
    start: float,
    end: float,
    steps: int,
    *,
    dtype: _dtype.dtype | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """`steps` evenly spaced values from `start` to `end` inclusive."""
    if steps < 0:
        raise RuntimeError("linspace: number of steps must be non-negative")
    dtype = _factory_dtype(dtype)
    dev = resolve_device(device)
    out = empty_tensor((steps,), dtype, dev)
    if steps == 0:
        return out
    if steps == 1:
        return fill_(out, start)
    step = (end - start) / (steps - 1)
    # Computed in float64 from both ends (as PyTorch does) so the last value is exactly `end`.
    values = empty_tensor((steps,), _dtype.float64, dev)
    kernel_for(names.ARANGE, dev, _dtype.float64)(values, float(start), float(step))
    half = steps // 2
    tail = make_view(values, half, (steps - half,), (1,))
    kernel_for(names.ARANGE, dev, _dtype.float64)(
        tail, float(end) - (steps - 1 - half) * step, step
    )
    _launch.copy(out, values)
    return _requiring_grad(out, requires_grad)


def eye(
    n: int,
    m: int | None = None,
    *,
    dtype: _dtype.dtype | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """The identity matrix (n x m)."""
    m = n if m is None else m
    if n < 0 or m < 0:
        raise RuntimeError(f"eye: n and m must be non-negative, got n={n}, m={m}")
    out = zeros(n, m, dtype=dtype, device=device)
    diagonal = make_view(out, 0, (min(n, m),), (m + 1,))
    fill_(diagonal, 1)
    return _requiring_grad(out, requires_grad)
