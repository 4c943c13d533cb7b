"""The small names of PyTorch's torch namespace that scripts reach for: constants, type and
size queries, aliases, the global random state, threads and build flags.

Each answers from Ember's own state (the cpu generator, the thread pool, the linked BLAS),
never a fixed guess.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ember import _dtype as dtypes
from ember._device import DeviceLike
from ember._ops import creation, random, shape
from ember._ops.strided_creation import empty_strided
from ember._tensor import Tensor
from ember._tensor_surface import type_name
from ember._threads import get_num_threads
from ember.autograd import _anomaly

__all__ = [
    "asarray", "concat", "concatenate", "detach", "e", "empty_strided", "fill", "frombuffer",
    "get_num_interop_threads", "get_rng_state", "inf", "init_num_threads",
    "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_distributed", "is_same_size",
    "is_tensor", "nan", "newaxis", "numel", "pi", "scalar_tensor", "set_anomaly_enabled",
    "set_num_interop_threads", "set_rng_state", "typename", "zero_",
]  # fmt: skip

e = math.e
pi = math.pi
inf = math.inf
nan = math.nan
newaxis = None

is_anomaly_enabled = _anomaly.is_anomaly_enabled
is_anomaly_check_nan_enabled = _anomaly.is_anomaly_check_nan_enabled


def set_anomaly_enabled(mode: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off for the process (torch.set_anomaly_enabled)."""
    _anomaly.ANOMALY.enabled, _anomaly.ANOMALY.check_nan = bool(mode), bool(check_nan)


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    return input.numel()


def is_same_size(input: Tensor, other: Tensor) -> bool:
    return input.shape == other.shape


def is_distributed(input: Tensor) -> bool:
    """False, as PyTorch's: a tensor is never split across processes (DDP replicates)."""
    return False


def typename(obj: Any) -> str:
    """'torch.FloatTensor' for a tensor (PyTorch's legacy type string), else the class."""
    if isinstance(obj, Tensor):
        return type_name(obj.dtype, obj.device.type)
    kind = type(obj)
    module = kind.__module__
    return (
        kind.__qualname__
        if module in ("builtins", "__builtin__")
        else f"{module}.{kind.__qualname__}"
    )


def concat(tensors: Any, dim: int = 0) -> Tensor:
    """Alias of `cat`."""
    return shape.cat(tensors, dim)


def concatenate(tensors: Any, axis: int = 0) -> Tensor:
    """Alias of `cat` with NumPy's `axis` keyword."""
    return shape.cat(tensors, axis)


def detach(input: Tensor) -> Tensor:
    return input.detach()


def fill(input: Tensor, value: Any) -> Tensor:
    """A new tensor like `input` holding `value` everywhere (torch.fill, out of place)."""
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(
            f"fill only supports 0-dimension value tensor but got tensor with {value.dim()} "
            "dimensions."
        )
    out = creation.empty_like(input)
    return out.fill_(value)


def zero_(input: Tensor) -> Tensor:
    return input.zero_()


def scalar_tensor(
    s: Any, *, dtype: dtypes.dtype | None = None, device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:  # fmt: skip
    """A 0-d tensor of `s`, in the default float dtype unless `dtype` says otherwise."""
    chosen = dtypes.get_default_dtype() if dtype is None else dtype
    value = s.item() if isinstance(s, Tensor) else s
    return creation.tensor(value, dtype=chosen, device=device, requires_grad=requires_grad)


def asarray(
    obj: Any, *, dtype: dtypes.dtype | None = None, device: DeviceLike | None = None,
    copy: bool | None = None, requires_grad: bool = False,
) -> Tensor:  # fmt: skip
    """`obj` as a tensor, sharing memory when it can (a tensor already of that dtype and
    device, a NumPy array on a host device) unless `copy=True`; `copy=False` raises when a
    copy would be needed, as PyTorch does."""
    if isinstance(obj, Tensor):
        out = obj.to(device=device if device is not None else obj.device,
                     dtype=dtype if dtype is not None else obj.dtype)  # fmt: skip
        if copy and out is obj:
            out = obj.clone()
        if copy is False and out is not obj:
            raise ValueError("asarray: copy=False but the tensor needs a dtype or device change")
        return out.requires_grad_(True) if requires_grad else out
    if isinstance(obj, np.ndarray) and not copy:
        shared = creation.from_numpy(obj) if obj.dtype.kind in "biuf" else None
        if (
            shared is not None
            and (dtype is None or dtype is shared.dtype)
            and (device is None or creation.resolve_device(device) is shared.device)
        ):
            return shared.requires_grad_(True) if requires_grad else shared
        if copy is False:
            raise ValueError("asarray: copy=False but the array needs a dtype or device change")
    elif copy is False:
        raise ValueError(f"asarray: copy=False cannot share the memory of a {type(obj).__name__}")
    return creation.tensor(obj, dtype=dtype, device=device, requires_grad=requires_grad)


def frombuffer(
    buffer: Any, *, dtype: dtypes.dtype, count: int = -1, offset: int = 0,
    requires_grad: bool = False,
) -> Tensor:  # fmt: skip
    """A 1-d cpu tensor over an object with the buffer protocol, sharing its memory."""
    array = np.frombuffer(buffer, dtype=dtype.numpy, count=count, offset=offset)
    out = creation.from_numpy(array)
    return out.requires_grad_(True) if requires_grad else out


def get_rng_state() -> Tensor:
    """The cpu default generator's state (a uint8 tensor: its seed and counter)."""
    state = random.default_generator(creation.resolve_device("cpu")).get_state()
    return creation.from_numpy(state.numpy().view(np.uint8).copy())


def set_rng_state(new_state: Tensor) -> None:
    """Restore a state from `get_rng_state`; RuntimeError for anything else."""
    if not isinstance(new_state, Tensor):
        raise TypeError(
            f"set_rng_state(): argument 'new_state' must be Tensor, not {type(new_state).__name__}"
        )
    raw = new_state.numpy()
    if raw.dtype != np.uint8 or raw.size != 16:
        raise RuntimeError("set_rng_state: expected a 16-byte uint8 tensor from get_rng_state")
    state = creation.from_numpy(np.ascontiguousarray(raw).view(np.int64).copy())
    random.default_generator(creation.resolve_device("cpu")).set_state(state)


def get_num_interop_threads() -> int:
    """Ember runs independent ops on the calling thread: one inter-op thread."""
    return 1


def set_num_interop_threads(num: int) -> None:
    """Accepted for PyTorch scripts; Ember has no inter-op pool (ops run in order on the
    calling thread, each using `get_num_threads()` intra-op threads)."""
    if int(num) < 1:
        raise RuntimeError("set_num_interop_threads: expected a positive number of threads")


def init_num_threads() -> None:
    """Initialise the intra-op thread pool (it starts on first use; this is a no-op)."""
    get_num_threads()
