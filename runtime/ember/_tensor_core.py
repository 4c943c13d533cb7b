"""The tensor layer's core: a strided view (storage, offset, shape, strides, dtype, device).

`TensorCore` holds the slots and the metadata that need no op. The public `Tensor`
(`ember._tensor`) adds the method families of `_tensor_*.py`, each a mixin over this class.
"""

from __future__ import annotations

from typing import Any

from ember import _dtype as dtypes

# Whether (shape, strides) is row-major dense, in C: every view asks it.
from ember._cstorage import is_contiguous
from ember._device import device
from ember._storage import Storage

__all__ = [
    "Size",
    "TensorCore",
    "contiguous_layout",
    "contiguous_strides",
    "is_contiguous",
    "wrap_dim",
]

Shape = tuple[int, ...]


_STRIDES_CACHE: dict[Shape, Shape] = {}
# shape -> (numel, row-major strides): everything a new contiguous tensor needs, at once.
_LAYOUT_CACHE: dict[Shape, tuple[int, Shape]] = {}


def contiguous_layout(shape: Shape) -> tuple[int, Shape]:
    """(numel, contiguous strides) of `shape` (memoised, for the allocation fast path)."""
    found = _LAYOUT_CACHE.get(shape)
    if found is not None:
        return found
    numel = 1
    for size in shape:
        numel *= size
    result = numel, contiguous_strides(shape)
    if len(_LAYOUT_CACHE) < 4096:
        _LAYOUT_CACHE[shape] = result
    return result


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


class TensorCore:
    """The slots of every tensor and the metadata read from them (no op runs here)."""

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
        return self._shape[wrap_dim(dim, len(self._shape), "size")]

    def stride(self, dim: int | None = None) -> Any:
        """Strides in elements, or the stride of one dimension."""
        if dim is None:
            return self._strides
        return self._strides[wrap_dim(dim, len(self._shape), "stride")]

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


def wrap_dim(dim: int, ndim: int, op: str) -> int:
    bound = max(ndim, 1)
    if not -bound <= dim < bound:
        raise IndexError(
            f"{op}: Dimension out of range (expected to be in range of "
            f"[{-bound}, {bound - 1}], but got {dim})"
        )
    return dim + bound if dim < 0 else dim
