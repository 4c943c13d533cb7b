"""Index tensors: dtype and device checks, range checks, and negative-index wrapping.

Range checks read the index's min and max back to the host: one small transfer, so that
an out-of-range index is a clear IndexError instead of a device fault. On an asynchronous
device that transfer makes the host wait for the device, so bounds known without it
(`_known_bounds`: uploaded from the host, or checked by an earlier op) skip the read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember import _dtype
from ember._device import device
from ember._dispatch import kernel_for
from ember._ops import _launch, conversion, names
from ember._ops._known_bounds import known as known_bounds
from ember._ops._meta import broadcast_shapes, broadcast_strides
from ember._ops.conversion import contiguous_copy
from ember._tensor import Tensor, empty_tensor, make_view

_int64 = _dtype.int64
_AMIN = names.REDUCTIONS["amin"]
_AMAX = names.REDUCTIONS["amax"]
_SMALL = 64  # up to this many host values, Python's min/max beat NumPy's call overhead


def as_index(op: str, index: Any, dev: device) -> Tensor:
    """`index` as an int64 tensor on `dev` (int32 is converted); TypeError for other dtypes."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be a Tensor, not {type(index).__name__}")
    if index._device is not dev:
        raise RuntimeError(
            f"{op}(): Expected all tensors to be on the same device, but found at least two "
            f"devices, {dev} and {index._device}!"
        )
    if index._dtype is _int64:
        return index
    if index._dtype is _dtype.int32:
        return conversion.cast(index, _int64)
    raise TypeError(f"{op}(): Expected dtype int64 for index, got {index._dtype.name}")


def bounds(index: Tensor) -> tuple[int, int]:
    """(min, max) of a non-empty int64 tensor, read back to the host in one transfer."""
    if index._device._backend.host_accessible:
        values = conversion.to_host_array(index)  # a view: no copy, no kernel
        if values.size <= _SMALL:
            items = values.reshape(-1).tolist()  # cheaper than two NumPy reductions
            return min(items), max(items)
        return int(values.min()), int(values.max())
    if not index._shape:
        index = make_view(index, index._offset, (1,), (1,))
    ndim = len(index._shape)
    dims = tuple(range(ndim))
    ones = (1,) * ndim
    both = empty_tensor((2,), _int64, index._device)
    _launch.launch_reduction(_AMIN, make_view(both, 0, ones, ones), index, dims)
    _launch.launch_reduction(_AMAX, make_view(both, 1, ones, ones), index, dims)
    low, high = conversion.to_host_array(both).tolist()
    return int(low), int(high)


def checked(
    index: Tensor, size: int, *, negative: bool, error: Callable[[int], Exception]
) -> Tensor:
    """`index` with values in [0, size), or [-size, size) wrapped when `negative` is allowed.

    `error(value)` builds the exception for the first offending value found (min or max).
    """
    if not index.numel():
        return index
    bounded = known_bounds(index)
    if bounded is not None and bounded[0] >= 0 and bounded[1] < size:
        return index
    low, high = bounds(index)
    if high >= size:
        raise error(high)
    if low < (-size if negative else 0):
        raise error(low)
    if low < 0:
        # Python's modulo maps [-size, 0) onto [0, size) and leaves the rest unchanged.
        return int64_binary("remainder", index, size)
    return index


def int64_binary(name: str, a: Tensor, b: Tensor | int) -> Tensor:
    """a (op) b on int64 tensors, broadcast, straight to the kernel (index arithmetic only)."""
    dev = a._device
    if isinstance(b, Tensor):
        shape = broadcast_shapes(name, a._shape, b._shape)
        b = _expanded(b, shape)
    else:
        shape = a._shape
    out = empty_tensor(shape, _int64, dev)
    _launch.launch_binary(names.BINARY[name], out, _expanded(a, shape), b, _int64)
    return out


def int64_arange(n: int, step: int, dev: device) -> Tensor:
    """0, step, 2 * step, ... (n values) as int64."""
    out = empty_tensor((n,), _int64, dev)
    if n:
        kernel_for(names.ARANGE, dev, _int64)(out, 0, step)
    return out


def _expanded(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    if t._shape == shape:
        return t
    return make_view(t, t._offset, shape, broadcast_strides(t._shape, t._strides, shape))


def out_of_bounds(dim: int, size: int, op: str = "") -> Callable[[int], IndexError]:
    """The IndexError factory for `checked`: "index 5 is out of bounds for dimension ..."."""
    prefix = f"{op}(): " if op else ""

    def error(value: int) -> IndexError:
        return IndexError(
            f"{prefix}index {value} is out of bounds for dimension {dim} with size {size}"
        )

    return error


def flat(t: Tensor) -> Tensor:
    """A contiguous 1-d view of `t`'s elements (copying only if `t` is not contiguous)."""
    if not t._contiguous:
        t = contiguous_copy(t)
    return make_view(t, t._offset, (t.numel(),), (1,))
