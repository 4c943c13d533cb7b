"""The device SDK: everything a device or kernel plugin needs, public and typed.

A plugin imports from here (and `ember` itself), never from `ember._*`::

    from ember.plugins.sdk import DeviceBackend, ElementwisePlan, Storage, hookimpl, ops

`docs/plugins/writing-a-device.md` walks through a whole device with this module.
"""

from __future__ import annotations

from ember._backend import DeviceBackend
from ember._collective import CollectiveBackend, Communicator, ReduceOp
from ember._device import device, device_index
from ember._dispatch import KernelRegistry
from ember._dtype import dtype
from ember._errors import DTypeError, OutOfMemoryError
from ember._plan import ElementwisePlan, MatmulPlan, ReductionPlan, merge_dims
from ember._storage import Storage
from ember._stream import current_native as current_native_stream
from ember._tensor import Tensor
from ember.plugins import ops
from ember.plugins._cache import cache_dir, write_atomically
from ember.plugins._hookspec import hookimpl
from ember.plugins._signatures import (
    BinaryKernel,
    CopyKernel,
    FillKernel,
    IndexKernel,
    MatmulKernel,
    RandomKernel,
    ReductionKernel,
    Scalar,
    UnaryKernel,
    WhereKernel,
)

__all__ = [
    "BinaryKernel", "CollectiveBackend", "Communicator", "CopyKernel", "DTypeError",
    "DeviceBackend", "ElementwisePlan", "FillKernel", "IndexKernel", "KernelRegistry",
    "MatmulKernel", "MatmulPlan", "OutOfMemoryError", "RandomKernel", "ReduceOp",
    "ReductionKernel", "ReductionPlan", "Scalar", "Storage", "Tensor", "UnaryKernel",
    "WhereKernel", "cache_dir", "current_native_stream", "device", "device_index", "dtype",
    "hookimpl", "merge_dims", "ops", "write_atomically",
]  # fmt: skip
