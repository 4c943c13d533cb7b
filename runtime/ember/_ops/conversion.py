"""Copies between dtypes and devices, host transfers and DLPack."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import _dtype, _upper
from ember._device import check_usable, device
from ember._ops import _launch
from ember._ops import memory_formats as _formats
from ember._ops._known_bounds import remember_host_values
from ember._ops._meta import broadcast_shapes, broadcast_strides, describe
from ember._ops._overlap import check_no_overlap
from ember._stream import current_native
from ember._tensor import Tensor, empty_tensor, make_view
from ember.autograd._graph import check_inplace, needs_grad, record

__all__ = ["clone", "copy_", "fill_", "to"]


def copy_(dst: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    """Copy `src` into `dst` in place, broadcasting and converting dtype and device."""
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' must be a Tensor, not {type(src).__name__}")
    original = src
    grad = (
        (dst._autograd is not None or src._autograd is not None)
        and dst._dtype.is_floating_point
        and needs_grad(dst, src)
    )
    if grad:
        check_inplace(dst)
    if src._shape != dst._shape:
        if broadcast_shapes("copy_", src._shape, dst._shape) != dst._shape:
            raise RuntimeError(
                f"copy_: the source of shape {list(src._shape)} cannot be broadcast to the "
                f"destination of shape {list(dst._shape)}"
            )
        src = make_view(
            src, src._offset, dst._shape, broadcast_strides(src._shape, src._strides, dst._shape)
        )
    if src._device is dst._device:
        check_no_overlap("copy_", dst, (src,))
        _launch.copy(dst, src)
    else:
        _copy_across_devices(dst, src, non_blocking)
    dst._storage.version += 1
    if grad:
        # `dst` continues the graph from the copy, which replaced all of its values.
        record("CopyBackwards", _copy_backward, (dst, original), dst, ctx=original._device)
    return dst


def _copy_backward(node: Any, g: Tensor) -> tuple[Tensor, Tensor]:
    # The old values of dst no longer matter: their gradient is zero.
    return _upper.ops.creation.zeros(g._shape, dtype=g._dtype, device=g._device), _to_device(
        g, node.ctx
    )


def _to_device(g: Tensor, dev: device) -> Tensor:
    """`g` moved back to its input's device (the graph casts the dtype back)."""
    return g if g._device is dev else to(g, dev)


def _to_backward(node: Any, g: Tensor) -> tuple[Tensor]:
    return (_to_device(g, node.ctx),)


def _clone_backward(node: Any, g: Tensor) -> tuple[Tensor]:
    return (g,)


def _copy_across_devices(dst: Tensor, src: Tensor, non_blocking: bool) -> None:
    """Copy between devices on the current streams, through host memory.

    Host-to-device copies never make the host wait for the device: with `non_blocking`
    the backend reads `src`'s memory later (the caller must not change it meanwhile, as in
    PyTorch); without, a source that the caller could still change is first snapshotted
    on the host. Device-to-host copies with `non_blocking` return before the values
    arrive: the caller synchronizes the stream (or an event recorded after the copy)
    before reading them.
    """
    if dst._device._backend.host_accessible:
        _copy_to_host_tensor(dst, src, non_blocking)
    else:
        _copy_to_device_tensor(dst, src, non_blocking)


def _copy_to_host_tensor(dst: Tensor, src: Tensor, non_blocking: bool) -> None:
    if dst.numel() == 0:
        return
    wait_for_host(dst)
    target = dst._host_array()
    backend = src._device._backend
    same_dtype = src._dtype is dst._dtype
    if backend.host_accessible or not dst._contiguous or not (same_dtype or non_blocking):
        np.copyto(target, to_host_array(src), casting="unsafe")
        return
    if not (src._contiguous and same_dtype):
        # Convert on the device, so that the transfer itself can stay asynchronous.
        staged = empty_tensor(src._shape, dst._dtype, src._device)
        _launch.copy(staged, src)
        src = staged
    # `target` views dst's storage, so the backend holding it keeps that memory alive.
    _read(backend, src, target, non_blocking)


def _copy_to_device_tensor(dst: Tensor, src: Tensor, non_blocking: bool) -> None:
    values = to_host_array(src)
    host = np.asarray(values, dtype=dst._dtype.numpy, order="C")
    # A host tensor's memory is the caller's, who may change it once we return.
    owned = host is not values or not src._device._backend.host_accessible
    upload(dst, host, owned, non_blocking)


def upload(dst: Tensor, host: np.ndarray, owned: bool, non_blocking: bool = False) -> None:
    """Enqueue a copy of `host` (C-contiguous, `dst`'s shape and dtype) into device `dst`.

    The host never waits: an asynchronous device reads `host` later, so unless the copy is
    `non_blocking` (the caller then keeps `host` unchanged until the copy is done) or
    `owned` (nobody else holds `host`), it reads a snapshot of it.
    """
    if not host.size:
        return
    backend = dst._device._backend
    asynchronous = not backend.synchronous
    if asynchronous and not (non_blocking or owned):
        host = host.copy()
    if dst._contiguous:
        _write(backend, dst, host, asynchronous)
        return
    staging = empty_tensor(dst._shape, dst._dtype, dst._device)
    _write(backend, staging, host, asynchronous)
    _launch.copy(dst, staging)


def _write(backend: Any, dst: Tensor, host: np.ndarray, non_blocking: bool) -> None:
    """Enqueue host -> contiguous `dst` on the current stream (the backend keeps `host`)."""
    dev = dst._device
    backend.copy_from_host(
        dst._storage.handle,
        dst._offset * dst._dtype.itemsize,
        host,
        dev._ordinal,
        current_native(dev),
        non_blocking,
    )


def _read(backend: Any, src: Tensor, host: np.ndarray, non_blocking: bool) -> None:
    """Contiguous `src` -> `host` on the current stream; waits unless `non_blocking`."""
    dev = src._device
    backend.copy_to_host(
        src._storage.handle,
        src._offset * src._dtype.itemsize,
        host,
        dev._ordinal,
        current_native(dev),
        non_blocking and not backend.synchronous,
    )


def fill_(t: Tensor, value: Any) -> Tensor:
    """Set every element of `t` to `value` (a scalar or a one-element tensor)."""
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions"
            )
        value = value.item()
    grad = t._autograd is not None and needs_grad(t)
    if grad:
        check_inplace(t)
    _launch.fill(t, python_scalar(value, t._dtype))
    t._storage.version += 1
    if grad:
        record("FillBackward", _fill_backward, (t,), t)
    return t


def _fill_backward(node: Any, g: Tensor) -> tuple[Tensor]:
    return (_upper.ops.creation.zeros(g._shape, dtype=g._dtype, device=g._device),)


def python_scalar(value: Any, dt: _dtype.dtype) -> bool | int | float:
    """`value` as the Python type that kernels expect for dtype `dt`."""
    if dt.is_floating_point:
        return float(value)
    if dt is _dtype.bool:
        return bool(value)
    if isinstance(value, float) and value != value:
        raise RuntimeError(f"cannot convert float NaN to integer dtype {dt.name}")
    return int(value)


def contiguous_copy(t: Tensor) -> Tensor:
    """A new row-major tensor with `t`'s values on the same device, not recorded for autograd."""
    out = empty_tensor(t._shape, t._dtype, t._device)
    _launch.copy(out, t)
    return out


def clone(t: Tensor, *, memory_format: _formats.memory_format = _formats.preserve_format) -> Tensor:
    """A copy of `t` on the same device, laid out in `memory_format` (recorded for autograd)."""
    out = _formats.copy_in_order(t, _formats.layout_order(t, memory_format, "clone"))
    if t._autograd is not None and needs_grad(t):
        record("CloneBackward", _clone_backward, (t,), out)
    return out


def cast(t: Tensor, dt: _dtype.dtype) -> Tensor:
    """`t` converted to `dt` (the same tensor when it already has that dtype)."""
    if t._dtype is dt:
        return t
    out = empty_tensor(t._shape, dt, t._device)
    _launch.copy(out, t)
    return _record_to(t, out)


def _record_to(t: Tensor, out: Tensor) -> Tensor:
    """Record a dtype/device conversion (only floating results are differentiable)."""
    if t._autograd is not None and out._dtype.is_floating_point and needs_grad(t):
        record("ToCopyBackward", _to_backward, (t,), out, ctx=t._device)
    return out


def to(t: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """`t.to(device)`, `t.to(dtype)`, `t.to(device, dtype)`, `t.to(other)`; copies if needed.

    `non_blocking=True` (keyword, or the first positional bool) makes a copy between
    host and device asynchronous, with PyTorch's rules (docs/streams.md).
    """
    target_device, target_dtype, copy = _parse_to_args(args, kwargs)
    non_blocking = bool(kwargs.get("non_blocking", False))
    dev = t._device if target_device is None else device(target_device).placement
    dt = t._dtype if target_dtype is None else target_dtype
    if dev is t._device and dt is t._dtype and not copy:
        return t
    if dev is t._device:
        out = empty_tensor(t._shape, dt, dev)
        _launch.copy(out, t)
        return _record_to(t, out)
    check_usable(dev)
    out = empty_tensor(t._shape, dt, dev)
    _copy_across_devices(out, t, non_blocking)
    if (
        dt is t._dtype
        and not non_blocking  # the device reads the host memory later: it may change
        and not dev._backend.host_accessible
        and t._device._backend.host_accessible
    ):
        # Integer values passing through the host: their bounds spare index checks a read.
        remember_host_values(out, t._host_array())
    return _record_to(t, out)


def _parse_to_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any, bool]:
    """(device, dtype, copy) from PyTorch's `to` signatures.

    `non_blocking` stays in `kwargs` (a positional one is moved there) for the caller.
    """
    target_device = kwargs.pop("device", None)
    target_dtype = kwargs.pop("dtype", None)
    copy = bool(kwargs.pop("copy", False))
    unknown = set(kwargs) - {"non_blocking"}
    if unknown:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(unknown)}")
    flags = 0
    for arg in args:
        if isinstance(arg, _dtype.dtype):
            target_dtype = arg
        elif isinstance(arg, (str, device)):
            target_device = arg
        elif isinstance(arg, Tensor):
            target_device, target_dtype = arg._device, arg._dtype
        elif isinstance(arg, bool) and flags < 2:
            if flags == 0:
                kwargs["non_blocking"] = arg
            else:
                copy = arg
            flags += 1
        else:
            raise TypeError(f"to() received an invalid combination of arguments: {arg!r}")
    return target_device, target_dtype, copy


def wait_for_host(t: Tensor) -> None:
    """Before the host touches a host-accessible tensor's memory: its current stream's work.

    Synchronous devices (the CPU) have nothing pending; an asynchronous one waits for its
    current stream only, never for the whole device.
    """
    backend = t._device._backend
    if not backend.synchronous:
        backend.stream_synchronize(current_native(t._device))


def to_host_array(t: Tensor) -> np.ndarray:
    """The values of `t` as a NumPy array (a view on host devices; treat as read-only).

    Waits for exactly what the values need: the work enqueued so far on the current
    stream of `t`'s device (an in-order queue), by a blocking read on that stream.
    """
    backend = t._device._backend
    if backend.host_accessible:
        wait_for_host(t)
        return t._host_array()
    host = np.empty(t._shape, dtype=t._dtype.numpy)
    if host.size:
        _read(backend, t if t._contiguous else contiguous_copy(t), host, False)
    return host


# -- DLPack ---------------------------------------------------------------------------------

_DLPACK_CPU = 1


def dlpack_device(t: Tensor) -> tuple[int, int]:
    """(device type, index) in DLPack's enumeration; host devices report kDLCPU."""
    if t._device._backend.host_accessible:
        return (_DLPACK_CPU, 0)
    raise BufferError(f"__dlpack_device__: {t._device} tensors cannot be exported through DLPack")


def to_dlpack(t: Tensor, **kwargs: Any) -> Any:
    """A DLPack capsule sharing `t`'s memory (host devices, through NumPy's exporter)."""
    if not t._device._backend.host_accessible:
        raise BufferError(f"__dlpack__: {describe(t)} cannot be exported through DLPack")
    if t._dtype is _dtype.bfloat16:
        raise BufferError(
            f"__dlpack__: {describe(t)} cannot be exported through DLPack: NumPy's exporter, "
            "which Ember's goes through, has no bfloat16"
        )
    array = np.asarray(t._host_view())
    return array.__dlpack__(**kwargs)
