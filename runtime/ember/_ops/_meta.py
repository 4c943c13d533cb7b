"""Shared meta-step helpers: broadcasting, dims, devices, dtype checks and error text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ember._device import device
    from ember._tensor import Tensor

Shape = tuple[int, ...]


def broadcast_shapes(op: str, *shapes: Shape) -> Shape:
    """PyTorch's broadcast of shapes, with an error naming the op and the shapes."""
    ndim = max((len(s) for s in shapes), default=0)
    result = [1] * ndim
    for shape in shapes:
        offset = ndim - len(shape)
        for i, size in enumerate(shape):
            current = result[offset + i]
            if current == size or size == 1:
                continue
            if current == 1:
                result[offset + i] = size
            else:
                raise RuntimeError(
                    f"{op}: shapes {' and '.join(str(list(s)) for s in shapes)} are not "
                    f"broadcastable (size {current} vs {size} at dimension {offset + i})"
                )
    return tuple(result)


def broadcasts_to(shape: Shape, target: Shape) -> bool:
    """Whether `shape` broadcasts to exactly `target` (every size equal or 1, none extra):
    PyTorch's rule for the operand of an in-place op."""
    if len(shape) > len(target):
        return False
    for size, want in zip(reversed(shape), reversed(target), strict=False):
        if size != want and size != 1:
            return False
    return True


def broadcast_strides(shape: Shape, strides: Shape, target: Shape) -> Shape:
    """Strides that view a tensor of `shape` as `target` (zero where broadcast)."""
    offset = len(target) - len(shape)
    out = [0] * len(target)
    for i, size in enumerate(shape):
        out[offset + i] = strides[i] if size == target[offset + i] else 0
    return tuple(out)


def wrap_dim(dim: int, ndim: int, op: str) -> int:
    """A dim in [-ndim, ndim) made non-negative; 0-d tensors accept 0 and -1."""
    bound = ndim if ndim > 0 else 1
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{op}: dim must be an int, got {type(dim).__name__}")
    if dim < -bound or dim >= bound:
        raise IndexError(
            f"{op}: Dimension out of range (expected to be in range of "
            f"[{-bound}, {bound - 1}], but got {dim})"
        )
    return dim + bound if dim < 0 else dim


def wrap_dims(dims: int | Sequence[int] | None, ndim: int, op: str) -> tuple[int, ...]:
    """Reduction dims: None means all; duplicates are an error."""
    if dims is None:
        return tuple(range(ndim))
    if isinstance(dims, int):
        dims = (dims,)
    wrapped = tuple(wrap_dim(d, ndim, op) for d in dims)
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"{op}: dim {list(dims)} appears multiple times in the list of dims")
    return tuple(d for d in wrapped if ndim > 0)


def same_device(op: str, *tensors: Tensor) -> device:
    """The common device of `tensors`, or a RuntimeError naming both devices."""
    first = tensors[0]._device
    for t in tensors[1:]:
        if t._device is not first:
            raise RuntimeError(
                f"{op}: Expected all tensors to be on the same device, but found at least "
                f"two devices, {first} and {t._device}!"
            )
    return first


def normalize_shape(op: str, size: Sequence[Any]) -> Shape:
    """Accept f(2, 3), f((2, 3)), f([2, 3]) and f(ember.Size(...))."""
    if len(size) == 1 and not isinstance(size[0], int):
        size = tuple(size[0])
    shape = []
    for s in size:
        if isinstance(s, bool) or not hasattr(s, "__index__"):
            raise TypeError(f"{op}: size must be a sequence of ints, got {list(size)!r}")
        value = s.__index__()
        if value < 0:
            raise RuntimeError(f"{op}: negative dimension {value} in size {list(size)}")
        shape.append(value)
    return tuple(shape)


def describe(t: Tensor) -> str:
    """'float32[2, 3] on cpu:0' for error messages."""
    return f"{t._dtype.name}{list(t._shape)} on {t._device}"
