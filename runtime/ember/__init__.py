"""Ember: an imperative, PyTorch-style deep-learning runtime whose devices are plugins."""

from __future__ import annotations

from ember import plugins
from ember._backend import DeviceBackend
from ember._device import (
    device,
    device_count,
    devices,
    get_default_device,
    is_available,
    set_default_device,
)
from ember._dtype import (
    bool,
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    int8,
    int32,
    int64,
    promote_types,
    result_type,
    set_default_dtype,
    uint8,
)
from ember._ops import *  # noqa: F403
from ember._ops import __all__ as _ops_all
from ember._storage import Storage
from ember._tensor import Size, Tensor
from ember._threads import get_num_threads, set_num_threads

__version__ = "0.1.0"

half = float16
float = float32  # noqa: A001 - PyTorch's public alias
double = float64
long = int64
int = int32  # noqa: A001 - PyTorch's public alias

__all__ = [
    "DeviceBackend",
    "Size",
    "Storage",
    "Tensor",
    "bool",
    "device",
    "device_count",
    "devices",
    "double",
    "dtype",
    "float",
    "float16",
    "float32",
    "float64",
    "get_default_device",
    "get_default_dtype",
    "get_num_threads",
    "half",
    "int",
    "int8",
    "int32",
    "int64",
    "is_available",
    "long",
    "plugins",
    "promote_types",
    "result_type",
    "set_default_device",
    "set_default_dtype",
    "set_num_threads",
    "uint8",
    *_ops_all,
]
