"""Value bounds of integer tensors known without reading them from the device.

Checking an index tensor's range reads its min and max back to the host, and on an
asynchronous device that read makes the host wait until the device has caught up. The
bounds are often known without it: an integer tensor uploaded from host memory had its
values on the host a moment ago, and an index that one op checked needs no second check
by the next. So bounds are remembered per storage (every view of a storage holds a
subset of its values), until the storage is written to (its version counter moves on).
Only the success path uses them: an error always comes from an exact read, so that it
names the offending value.
"""

from __future__ import annotations

import weakref

import numpy as np

from ember._storage import Storage
from ember._tensor import Tensor

__all__ = ["known", "remember", "remember_host_values"]

# storage -> (its version when remembered, low, high): every value lies in [low, high]
_bounds: weakref.WeakKeyDictionary[Storage, tuple[int, int, int]] = weakref.WeakKeyDictionary()


def _spans_storage(t: Tensor) -> bool:
    n = 1
    for size in t._shape:
        n *= size
    return t._offset == 0 and t._contiguous and n * t._dtype.itemsize == t._storage.nbytes


def remember(t: Tensor, low: int, high: int) -> None:
    """Record that every value of `t` lies in [low, high]; kept only when `t` is its
    whole storage (a part says nothing of the rest)."""
    if _spans_storage(t):
        _bounds[t._storage] = (t._storage.version, low, high)


def remember_host_values(t: Tensor, values: np.ndarray) -> None:
    """Record the bounds of `t`, just filled from the host array `values`."""
    if values.size and values.dtype.kind in "iu":
        remember(t, int(values.min()), int(values.max()))


def known(t: Tensor) -> tuple[int, int] | None:
    """(low, high) bounding every value of `t`, when known without a device read."""
    entry = _bounds.get(t._storage)
    if entry is None or entry[0] != t._storage.version:
        return None
    return entry[1], entry[2]
