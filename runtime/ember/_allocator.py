"""The caching allocator: one per device, generic over the backend's raw allocate/free.

Requests round up to 512 bytes; under 1 MiB they take small blocks from per-size free
lists, from 1 MiB on large blocks carved from segments (best fit, split, merge; see
_blocks.py). Pools are per stream. docs/memory.md describes the whole design.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from ember._backend import DeviceBackend
from ember._blocks import ACTIVE, PENDING, Block, Pool, Segment
from ember._errors import OutOfMemoryError

if TYPE_CHECKING:
    from ember._device import device
    from ember._storage import Storage
    from ember._stream import Event, Stream

__all__ = ["NO_FAST_PATH", "ROUND", "SMALL_LIMIT", "CachingAllocator", "FreeLists"]

ROUND: Final = 512
SMALL_LIMIT: Final = 1 << 20  # below: the small pool; also the least rest worth splitting off
LARGE_SEGMENT: Final = 20 << 20  # the segment carved for large requests under MIN_LARGE_ALLOC
MIN_LARGE_ALLOC: Final = 10 << 20  # from here a request gets a segment of its own...
LARGE_ROUND: Final = 2 << 20  # ...rounded up to this
UNSPLIT_SLACK: Final = 4  # an unsplittable block serves requests down to 4/5 of its size

FreeLists = Mapping[int, list[tuple[Any, int]]]

#: `Storage._home` of a block that can't go back on the lock-free path (large blocks,
#: caching off, record_stream): its `get` finds nothing, so the free comes to `release`.
NO_FAST_PATH: Final[FreeLists] = MappingProxyType({})

_COUNTERS: Final = (
    *("active_bytes.all.peak", "pending_free_bytes.all.current"),
    *("reserved_bytes.all.current", "reserved_bytes.all.peak"),
    *("segment.all.current", "segment.all.peak"),
    *("num_raw_alloc", "num_raw_free", "num_alloc_retries", "num_ooms"),
)

# (size, handle, ptr, home, block): what a freed storage leaves for its block's recycling
Freed = tuple[int, Any, int, FreeLists, Block | None]


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.2f} MiB"


class _Exclusive:
    """`with allocator._exclusive:` holds the lock with `_busy` set (never nested)."""

    __slots__ = ("allocator",)

    def __init__(self, allocator: CachingAllocator) -> None:
        self.allocator = allocator

    def __enter__(self) -> None:
        self.allocator._lock.acquire()
        self.allocator._busy = True

    def __exit__(self, *exc: object) -> None:
        self.allocator._busy = False
        self.allocator._lock.release()


class CachingAllocator:
    """The memory of one device: pools per stream, statistics, the out-of-memory path.

    Storage's inlined hit and free paths read and write `fast`, `stream_small`,
    `allocated` and `peak_allocated`, and frees append to `_deferred`, without the lock (the
    GIL keeps each step whole); everything else changes under `_lock`, and pools only while
    `_busy`.
    """

    __slots__ = (
        "_backend",
        "_busy",
        "_caching",
        "_counts",
        "_current_native",
        "_deferred",
        "_exclusive",
        "_index",
        "_lent",
        "_lock",
        "_pending",
        "_pools",
        "_single",
        "_splittable",
        "_synchronous",
        "allocated",
        "default_small",
        "device",
        "fast",
        "peak_allocated",
        "stream_small",
    )

    def __init__(self, dev: device, backend: DeviceBackend, index: int) -> None:
        from ember._stream import current_native  # _stream imports _device, which imports us

        self.device = dev
        self._backend = backend
        self._index = index
        self._current_native = current_native
        self._synchronous = backend.synchronous
        self._caching = os.environ.get("EMBER_NO_MEMORY_CACHING", "") in ("", "0")
        # Host pointers split by arithmetic; other devices only if the backend says how.
        self._splittable = backend.host_accessible or (
            type(backend).region is not DeviceBackend.region
        )
        self._lock = threading.RLock()
        # True while an operation changes the pools: a finalizer that runs inside it
        # (the cyclic GC may start at any allocation) only queues its free.
        self._busy = False
        self._exclusive = _Exclusive(self)
        self._deferred: list[Freed] = []  # freed blocks not yet back in their pools
        self._pending: list[tuple[list[Event], Freed]] = []
        self._pools: dict[int, Pool] = {}
        # id(storage) -> (its block's free lists, other streams using it): record_stream
        self._lent: dict[int, tuple[FreeLists, list[Stream]]] = {}
        self.allocated = 0
        self.peak_allocated = 0
        self._counts = dict.fromkeys(_COUNTERS, 0)
        # A synchronous device's work is done when its call returns: one pool serves every
        # stream, and Storage takes small blocks from it without calling in here.
        self._single = self._pool_of(None) if self._synchronous else None
        # None on other devices: Storage then looks up the current stream's pool.
        self.fast: FreeLists | None = self._single.small if self._single else None
        # Otherwise id(native stream) -> its pool's small free lists, for Storage's hit
        # path; ids stay unique while the pool keeps its stream's native object.
        self.stream_small: dict[int, FreeLists] = {}
        # ...and the default stream's, once its pool exists: no lookup for the common case.
        self.default_small: FreeLists = NO_FAST_PATH

    # -- allocation ------------------------------------------------------------------------

    def allocate(self, storage: Storage, nbytes: int) -> None:
        """Give `storage` a block of `nbytes` or more: sets handle, ptr, _size, _home."""
        storage._alloc = None  # until it holds a block its finalizer has nothing to free
        pool = self._single or self._pool_of(self._current_native(self.device))
        small = nbytes < SMALL_LIMIT
        size = (nbytes + ROUND - 1) // ROUND * ROUND or ROUND
        block = entry = None
        if small and not self._pending:
            blocks = pool.small.get(size)
            if blocks:
                try:
                    entry = blocks.pop()
                except IndexError:  # another thread took the last one
                    entry = None
        if entry is None:
            with self._lock:  # what `_exclusive` does, inlined for the large blocks' sake
                self._busy = True
                try:
                    if self._deferred or self._pending:
                        self._collect()
                    if small:
                        entry = self._allocate_small(pool, size, nbytes)
                    else:
                        block = self._allocate_large(pool, size, nbytes)
                        size = block.size
                        entry = block.handle, block.ptr
                finally:
                    self._busy = False
        storage.handle, storage.ptr = entry
        storage._size = size
        if block is None:
            storage._home = pool.small if self._caching else NO_FAST_PATH
        else:
            storage._block = block
            storage._home = NO_FAST_PATH
        allocated = self.allocated = self.allocated + size
        if allocated > self.peak_allocated:
            self.peak_allocated = allocated
        counts = self._counts
        pending = counts["pending_free_bytes.all.current"]
        # With nothing pending, active equals allocated, whose peak `stats` already takes.
        if pending and allocated + pending > counts["active_bytes.all.peak"]:
            counts["active_bytes.all.peak"] = allocated + pending
        storage._alloc = self

    def _pool_of(self, native: Any) -> Pool:
        pool = self._pools.get(id(native))
        if pool is None:
            with self._lock:
                pool = self._pools.setdefault(id(native), Pool(native))
                if not self._synchronous:
                    self.stream_small[id(native)] = pool.small
                    default = self.device._default_stream
                    if default is not None and default.native is native:
                        self.default_small = pool.small
        return pool

    def _allocate_small(self, pool: Pool, size: int, nbytes: int) -> tuple[Any, int]:
        blocks = pool.small.get(size)
        if blocks:
            return blocks.pop()
        entry = self._raw_allocate(size, nbytes)
        if self._caching:
            pool.small.setdefault(size, [])  # where the lock-free free path will put it
        return entry

    def _allocate_large(self, pool: Pool, size: int, nbytes: int) -> Block:
        block = None
        if self._caching:
            largest = size + size // UNSPLIT_SLACK if not self._splittable else 1 << 62
            block = pool.take_best_fit(size, largest)
        if block is None:
            if not (self._caching and self._splittable):
                segment_size = size
            elif size < MIN_LARGE_ALLOC:
                segment_size = LARGE_SEGMENT
            else:
                segment_size = -(-size // LARGE_ROUND) * LARGE_ROUND
            handle, ptr = self._raw_allocate(segment_size, nbytes)
            block = Block(Segment(handle, ptr, segment_size, pool), 0, segment_size)
            block.handle, block.ptr = handle, ptr
        segment = block.segment
        if self._splittable and block.size - size > SMALL_LIMIT:
            try:
                handle, ptr = self._backend.region(segment.handle, block.offset, size, self._index)
            except NotImplementedError:
                self._splittable = False
            else:
                pool.split(block, size)
                block.handle, block.ptr = handle, ptr
        if block.handle is None:
            if block.whole:
                block.handle, block.ptr = segment.handle, segment.ptr
            else:
                block.handle, block.ptr = self._backend.region(
                    segment.handle, block.offset, block.size, self._index
                )
        block.state = ACTIVE
        return block

    def _raw_allocate(self, nbytes: int, requested: int) -> tuple[Any, int]:
        """The backend's allocation; on MemoryError, empty the cache and retry once."""
        backend, index, counts = self._backend, self._index, self._counts
        try:
            handle, ptr = backend.allocate(nbytes, index)
        except MemoryError as first:
            counts["num_alloc_retries"] += 1
            self._process_events(wait=True)
            self._release_cached()
            try:
                handle, ptr = backend.allocate(nbytes, index)
            except MemoryError as second:
                counts["num_ooms"] += 1
                raise OutOfMemoryError(self._oom_message(nbytes, requested, second)) from first
        counts["num_raw_alloc"] += 1
        counts["reserved_bytes.all.current"] += nbytes
        counts["segment.all.current"] += 1
        self._update_peak("reserved_bytes.all")
        self._update_peak("segment.all")
        return handle, ptr

    def _oom_message(self, nbytes: int, requested: int, error: MemoryError) -> str:
        what = f"{_mib(requested)} ({requested} bytes)"
        if nbytes != requested:
            what += f" as a {_mib(nbytes)} block"
        reserved = self._counts["reserved_bytes.all.current"]
        return (
            f"{self.device}: out of memory: tried to allocate {what}; "
            f"{_mib(self.allocated)} allocated and {_mib(reserved)} reserved by the caching "
            f"allocator after emptying its cache ({error})"
        )

    def _update_peak(self, name: str) -> None:
        counts = self._counts
        if counts[name + ".current"] > counts[name + ".peak"]:
            counts[name + ".peak"] = counts[name + ".current"]

    # -- freeing -------------------------------------------------------------------------

    def release(self, storage: Storage) -> None:
        """Take back the block of a storage being finalised (the slow path)."""
        size = storage._size
        self.allocated -= size
        block = storage._block if size >= SMALL_LIMIT else None
        uses = self._lent.pop(id(storage), None) if self._lent else None
        if uses is None:
            freed = (size, storage.handle, storage.ptr, storage._home, block)
            if self._caching:
                # Into its pool at the next locked operation: a free stays cheap, lock-free.
                self._deferred.append(freed)
                return
        with self._lock:
            if uses is None:
                self._deferred.append(freed)
            else:
                self._defer_until_used((size, storage.handle, storage.ptr, uses[0], block), uses[1])
            if self._busy:
                return  # a finalizer inside one of our operations: the next one pools it
            with self._exclusive:
                self._collect()

    def _defer_until_used(self, freed: Freed, streams: list[Stream]) -> None:
        """Keep the block out of every pool until `streams` pass the current point."""
        # Cold (a block freed after record_stream); _stream imports _device, which imports us.
        from ember._stream import Event

        events = []
        for stream in streams:
            event = Event(self.device)
            event.record(stream)
            events.append(event)
        if freed[4] is not None:
            freed[4].state = PENDING
        self._pending.append((events, freed))
        self._counts["pending_free_bytes.all.current"] += freed[0]

    def _collect(self) -> None:
        """Pool the deferred frees and the pending blocks whose events completed (busy)."""
        deferred = self._deferred
        while deferred:
            self._recycle(*deferred.pop())
        if self._pending:
            self._process_events()

    def _process_events(self, wait: bool = False) -> None:
        """Recycle pending blocks whose events have completed (all of them when `wait`)."""
        pending, self._pending = self._pending, []
        for events, freed in pending:
            if wait:
                for event in events:
                    event.synchronize()
            elif not all(event.query() for event in events):
                self._pending.append((events, freed))
                continue
            self._counts["pending_free_bytes.all.current"] -= freed[0]
            self._recycle(*freed)

    def _recycle(
        self, size: int, handle: Any, ptr: int, home: FreeLists, block: Block | None
    ) -> None:
        """A block nothing uses any more: back into its pool, or to the backend."""
        if block is not None:
            pool = block.segment.pool
            block = pool.release(block)
            if not self._caching and block.whole:
                pool.remove(block)
                self._raw_free(block.segment.handle, block.segment.size)
        elif self._caching and isinstance(home, dict):
            home.setdefault(size, []).append((handle, ptr))
        else:
            self._raw_free(handle, size)

    def _raw_free(self, handle: Any, nbytes: int) -> None:
        self._backend.free(handle, nbytes, self._index)
        counts = self._counts
        counts["num_raw_free"] += 1
        counts["reserved_bytes.all.current"] -= nbytes
        counts["segment.all.current"] -= 1

    # -- streams ---------------------------------------------------------------------------

    def record_stream(self, storage: Storage, stream: Stream) -> None:
        """Remember that `stream` uses the storage's block (see Storage.record_stream)."""
        if self._synchronous:
            return  # all work is finished by the time anything is freed
        if stream.device is not self.device:
            raise RuntimeError(
                f"record_stream: the storage is on {self.device}, the stream on {stream.device}"
            )
        with self._lock:
            block = storage._block if storage._size >= SMALL_LIMIT else None
            uses = self._lent.get(id(storage))
            home = storage._home if uses is None else uses[0]
            owner = block.segment.pool if block is not None else self._pool_by_home(home)
            if owner is not None and stream.native is owner.native:
                return  # the allocating stream's own order already protects the block
            if uses is None:
                uses = self._lent[id(storage)] = (home, [])
                storage._home = NO_FAST_PATH
            if all(s.native is not stream.native for s in uses[1]):
                uses[1].append(stream)

    def _pool_by_home(self, home: FreeLists) -> Pool | None:
        for pool in self._pools.values():
            if pool.small is home:
                return pool
        return None  # a raw block of caching-off mode, in no pool

    # -- cache control and statistics --------------------------------------------------------

    def empty_cache(self) -> None:
        """Return every cached small block and every wholly free segment to the backend."""
        with self._exclusive:
            self._release_cached()
        self._backend.empty_cache(self._index)

    def _release_cached(self) -> None:
        self._collect()
        for pool in self._pools.values():
            for size, blocks in pool.small.items():
                while blocks:
                    self._raw_free(blocks.pop()[0], size)
            for block in [b for b in pool.blocks if b.whole]:
                pool.remove(block)
                self._raw_free(block.segment.handle, block.segment.size)

    def set_caching(self, enabled: bool) -> None:
        """Cache freed blocks or not; turning caching off first empties the cache."""
        with self._exclusive:
            self._collect()
            self._caching = bool(enabled)
            if not enabled:
                self._release_cached()
                for pool in self._pools.values():
                    pool.small.clear()  # so live small blocks miss the lock-free path

    @property
    def caching(self) -> bool:
        """Whether freed blocks are kept for reuse."""
        return self._caching

    def stats(self) -> dict[str, int]:
        """The counters, under PyTorch's memory_stats names where it has them."""
        with self._exclusive:
            self._collect()
            counts = dict(self._counts)
            active = self.allocated + counts["pending_free_bytes.all.current"]
            # Allocations only track active's peak while blocks are pending; otherwise
            # active equals allocated, and allocated's peak counts.
            active_peak = max(counts.pop("active_bytes.all.peak"), active, self.peak_allocated)
            split_free = sum(
                b.size for pool in self._pools.values() for b in pool.blocks if not b.whole
            )
            return {
                "allocated_bytes.all.current": self.allocated,
                "allocated_bytes.all.peak": self.peak_allocated,
                "active_bytes.all.current": active,
                "active_bytes.all.peak": active_peak,
                "inactive_split_bytes.all.current": split_free,
                **counts,
            }

    def reset_peaks(self) -> None:
        """Set every peak to its current value."""
        with self._exclusive:
            counts = self._counts
            self.peak_allocated = self.allocated
            counts["active_bytes.all.peak"] = (
                self.allocated + counts["pending_free_bytes.all.current"]
            )
            for name in ("reserved_bytes.all", "segment.all"):
                counts[name + ".peak"] = counts[name + ".current"]
