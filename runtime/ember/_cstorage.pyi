# Types of the C extension ember._cstorage (see _cstorage.c).
from typing import Any

from ember._allocator import CachingAllocator, FreeLists
from ember._blocks import Block
from ember._device import device as _device
from ember._dtype import dtype as _dtype
from ember._stream import Stream
from ember._tensor import Tensor

class Storage:
    """A device buffer plus the version counter that in-place ops bump."""

    _alloc: CachingAllocator | None  # None: memory that `_owner` keeps alive
    _size: int  # the block's size, as the allocator rounded it
    _home: FreeLists  # the free lists the block goes back to
    _block: Block  # large blocks only
    _owner: object  # wrapped memory only: what keeps it alive
    device: _device
    handle: Any
    ptr: int
    nbytes: int
    version: int

    def __init__(self, dev: _device, nbytes: int) -> None: ...
    @classmethod
    def wrap(cls, dev: _device, handle: Any, ptr: int, nbytes: int, owner: object) -> Storage:
        """A storage over memory that `owner` keeps alive (a NumPy array, a DLPack capsule)."""
    def record_stream(self, stream: Stream) -> None:
        """Mark the memory as used by `stream`: once freed, it is reused only after the work
        enqueued on `stream` up to the free has completed."""

def configure(small_limit: int, rounding: int, stream_home: Any) -> None:
    """The allocator's small-block limit and rounding, and stream_home(alloc, dev)."""

def empty_tensor(shape: tuple[int, ...], dt: _dtype, dev: _device) -> Tensor:
    """A new contiguous tensor with uninitialised memory (the allocation fast path)."""

def configure_tensor(tensor: type, layout_cache: dict[Any, Any], contiguous_layout: Any) -> None:
    """The Tensor type empty_tensor builds, its layout memo and the memo's filler."""

def make_view(
    base: Tensor, offset: int, shape: tuple[int, ...], strides: tuple[int, ...]
) -> Tensor:
    """A tensor sharing `base`'s storage with new geometry (no autograd metadata)."""

def is_contiguous(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether (shape, strides) is row-major dense (sizes of 1 and empty tensors aside)."""

def exact_ints(args: Any) -> tuple[int, ...] | None:
    """`args` (or its one tuple or list) as a plain tuple when every item is an exact int."""
