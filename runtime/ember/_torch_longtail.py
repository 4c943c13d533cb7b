"""The last small names of torch's namespace: build flags, global switches (autocast state,
default tensor type, flush-denormal), exception classes and torch-level forwards of Tensor
methods (detach_, as_strided_, resize_as_, addmv_).

Each answers from Ember's own state: the flags say what the cpu device was really built
with, and the switches change what ops do, or say honestly that they cannot.
"""

from __future__ import annotations

import warnings
from typing import Any

from ember import _autocast, _legacy_types
from ember import _dtype as dtypes
from ember._device import device as _device_type_check
from ember._ops import conversion, inplace_views
from ember._ops.contractions import addmv_
from ember._tensor import Tensor
from ember.amp.grad_scaler import GradScaler
from ember.plugins._manager import MANAGER

__all__ = [
    "AcceleratorError", "FatalError", "GradScaler", "addmv_", "as_strided_", "detach_",
    "has_lapack", "has_mkl", "has_spectral", "resize_as_", "set_autocast_cpu_dtype",
    "set_autocast_cpu_enabled", "set_autocast_dtype", "set_autocast_enabled",
    "set_autocast_gpu_dtype", "set_default_tensor_type", "set_flush_denormal", "to_dlpack",
]  # fmt: skip

#: the cpu device's linear algebra calls LAPACK through the OpenBLAS it links
has_lapack = True
#: Ember links no MKL
has_mkl = False
#: Ember has no FFT ops
has_spectral = False

to_dlpack = conversion.to_dlpack


class AcceleratorError(RuntimeError):
    """Exception raised while executing on device (torch.AcceleratorError)."""


class FatalError(Exception):
    """An unrecoverable error; like torch.FatalError, an Exception but not a RuntimeError."""


def has_openmp() -> bool:
    """Whether the cpu device's kernels were built with OpenMP (they then import GOMP's
    entry points; `EMBER_CPU_CFLAGS` may have built them without)."""
    MANAGER.ensure_loaded()
    info = MANAGER.device_types.get("cpu")
    if info is None or info.reason is not None:
        return False
    query = getattr(info.backend, "built_with_openmp", None)
    return bool(query()) if query is not None else False


def detach_(input: Tensor) -> Tensor:
    return input.detach_()


def as_strided_(input: Tensor, size: Any, stride: Any, storage_offset: int | None = None) -> Tensor:
    return inplace_views.as_strided_(input, size, stride, storage_offset)


def resize_as_(input: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    return inplace_views.resize_(input, the_template.shape)


# Autocast state, as torch's functions: they set this thread's state for a device type
# outside any region (an `autocast` region entered later saves and restores it).
_LOWER = (dtypes.float16, getattr(dtypes, "bfloat16", dtypes.float16))


def _checked_device_type(device_type: Any) -> str:
    if not isinstance(device_type, str):
        raise TypeError(f"expected a device type string, got {type(device_type).__name__}")
    return _device_type_check(device_type).type


def _deprecated(old: str, new: str) -> None:
    warnings.warn(
        f"ember.{old} is deprecated. Please use ember.{new} instead.",
        DeprecationWarning,
        stacklevel=3,
    )


def set_autocast_enabled(*args: Any) -> None:
    """`set_autocast_enabled(device_type, enabled)`; the one-argument form means cuda."""
    if len(args) == 1:
        _deprecated("set_autocast_enabled(enabled)", "set_autocast_enabled('cuda', enabled)")
        device_type, enabled = "cuda", args[0]
    elif len(args) == 2:
        device_type, enabled = _checked_device_type(args[0]), args[1]
    else:
        raise TypeError(f"set_autocast_enabled() takes 1 or 2 arguments ({len(args)} given)")
    _autocast.set_enabled(device_type, bool(enabled))


def set_autocast_dtype(device_type: str, dtype: dtypes.dtype) -> None:
    """The dtype autocast casts the lower-precision ops to on `device_type`."""
    if not isinstance(dtype, dtypes.dtype):
        raise TypeError(f"set_autocast_dtype(): dtype must be an ember.dtype, not {dtype!r}")
    _autocast.set_dtype(_checked_device_type(device_type), dtype)


def set_autocast_cpu_enabled(enabled: bool) -> None:
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    _autocast.set_enabled("cpu", bool(enabled))


def set_autocast_cpu_dtype(dtype: dtypes.dtype) -> None:
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def set_autocast_gpu_dtype(dtype: dtypes.dtype) -> None:
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)


def set_default_tensor_type(t: Any) -> None:
    """Legacy: set the default dtype from a legacy type (`ember.DoubleTensor`) or its name
    ('torch.DoubleTensor'); only cpu floating types are allowed."""
    warnings.warn(
        "ember.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
        "ember.set_default_dtype() and ember.set_default_device() as alternatives.",
        UserWarning,
        stacklevel=2,
    )
    if isinstance(t, str):
        module, _, name = t.rpartition(".")
        if module in ("torch.cuda", "ember.cuda"):
            raise TypeError(f"type {t} not available. Ember has no legacy cuda types.")
        if module not in ("torch", "ember") or not hasattr(_legacy_types, name):
            raise TypeError(f"invalid type: '{t}'")
        t = getattr(_legacy_types, name)
    if not isinstance(t, _legacy_types.tensortype):
        raise TypeError(
            "invalid type object: only floating-point types are supported as the default type"
        )
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    dtypes.set_default_dtype(t.dtype)


def set_flush_denormal(mode: bool) -> bool:
    """Flushing denormals needs FTZ/DAZ set on every thread the cpu kernels run on, which
    Ember's cpu device does not expose: so, as torch where unsupported, nothing changes and
    the answer is False."""
    return False
