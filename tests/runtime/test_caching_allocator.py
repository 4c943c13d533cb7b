"""The caching allocator (runtime/ember/_allocator.py) against a recording fake device,
then on every real device: rounding, pools, split and merge, per-stream pools,
record_stream, statistics, the out-of-memory path and the caching switch."""

from __future__ import annotations

import gc
import itertools
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import ember
import ember.memory
from ember._storage import Storage
from ember.plugins import hookimpl

KiB, MiB = 1 << 10, 1 << 20
_names = itertools.count()


class Buffer:
    """A fake device allocation: only its size and a unique address matter here."""

    def __init__(self, size: int, address: int) -> None:
        self.size, self.address = size, address


class Marker:
    """An event marker that completes when the test says so."""

    def __init__(self) -> None:
        self.done = False


class RecordingBackend(ember.DeviceBackend):
    """Records raw allocations and frees; refuses past `budget` live bytes; streams whose
    markers complete by hand."""

    host_accessible = False
    synchronous = False

    def __init__(self, budget: int = 1 << 40, splittable: bool = True) -> None:
        self.type = f"alloctest{next(_names)}"
        self.budget, self.splittable = budget, splittable
        self.allocations: list[int] = []
        self.frees: list[int] = []
        self.live = 0
        self.markers: list[Marker] = []
        self.on_allocate: Callable[[], None] | None = None
        self._next_address = 1 << 32

    def device_count(self) -> int:
        return 1

    def allocate(self, nbytes: int, index: int) -> tuple[Any, int]:
        if self.on_allocate is not None:
            self.on_allocate()
        if self.live + nbytes > self.budget:
            raise MemoryError(f"fake: {nbytes} bytes over the budget")
        self.allocations.append(nbytes)
        self.live += nbytes
        address, self._next_address = self._next_address, self._next_address + nbytes + MiB
        return Buffer(nbytes, address), address

    def free(self, handle: Any, nbytes: int, index: int) -> None:
        assert handle.size == nbytes
        self.frees.append(nbytes)
        self.live -= nbytes

    def region(self, handle: Any, byte_offset: int, nbytes: int, index: int) -> tuple[Any, int]:
        if not self.splittable:
            raise NotImplementedError
        assert byte_offset % 512 == 0 and byte_offset + nbytes <= handle.size
        return (handle, byte_offset), handle.address + byte_offset

    def stream_create(self, index: int, priority: int, default: bool) -> Any:
        return object()

    def event_record(self, stream: Any, index: int, enable_timing: bool) -> Any:
        self.markers.append(Marker())
        return self.markers[-1]

    def event_query(self, marker: Any) -> bool:
        return bool(marker.done)

    def event_synchronize(self, marker: Any) -> None:
        marker.done = True


class SynchronousBackend(RecordingBackend):
    synchronous = True


class UnsplittableBackend(ember.DeviceBackend):
    """A device that leaves `region` unimplemented."""

    host_accessible = False

    def __init__(self) -> None:
        self.type = f"alloctest{next(_names)}"
        self.allocations: list[int] = []

    def device_count(self) -> int:
        return 1

    def allocate(self, nbytes: int, index: int) -> tuple[Any, int]:
        self.allocations.append(nbytes)
        return object(), 0


class _Plugin:
    def __init__(self, backend: ember.DeviceBackend) -> None:
        self.backend = backend

    @hookimpl
    def ember_devices(self) -> list[ember.DeviceBackend]:
        return [self.backend]


@pytest.fixture
def make_device() -> Iterator[Callable[[ember.DeviceBackend], ember.device]]:
    """Registers a fake backend as a new device type (its allocator starts afresh)."""
    names: list[str] = []

    def make(backend: ember.DeviceBackend) -> ember.device:
        ember.plugins.register(_Plugin(backend), name=backend.type)
        names.append(backend.type)
        return ember.device(backend.type)

    yield make
    for name in names:
        ember.plugins.unregister(name)


@pytest.fixture
def fake(make_device: Callable[[ember.DeviceBackend], ember.device]) -> ember.device:
    return make_device(RecordingBackend())


def backend_of(dev: ember.device) -> Any:
    return dev.backend


def stats(dev: ember.device) -> dict[str, int]:
    return ember.memory.memory_stats(dev)


# -- rounding and the small pool ---------------------------------------------------------


@pytest.mark.parametrize(
    ("nbytes", "block"),
    [(0, 512), (1, 512), (512, 512), (513, 1024), (MiB - 1, MiB), (MiB + 1, MiB + 512)],
)
def test_requests_round_up_to_512_bytes(fake: ember.device, nbytes: int, block: int) -> None:
    s = Storage(fake, nbytes)
    assert s.nbytes == nbytes
    assert ember.memory.memory_allocated(fake) == block


def test_small_blocks_are_reused_by_rounded_size(fake: ember.device) -> None:
    s = Storage(fake, 100)
    address = s.ptr
    del s
    again = Storage(fake, 300)  # the same 512-byte class
    assert again.ptr == address
    other = Storage(fake, 600)  # the next class: a block of its own
    assert other.ptr != address
    assert backend_of(fake).allocations == [512, 1024]


def test_the_synchronous_hit_path_keeps_stats_and_allocates_nothing(
    make_device: Callable[[ember.DeviceBackend], ember.device],
) -> None:
    dev = make_device(SynchronousBackend())
    keep = [Storage(dev, 4 * KiB) for _ in range(3)]
    del keep
    for _ in range(100):
        a, b = Storage(dev, 4 * KiB), Storage(dev, 4 * KiB)
        assert ember.memory.memory_allocated(dev) == 8 * KiB
        del a, b
    assert ember.memory.memory_allocated(dev) == 0
    assert ember.memory.max_memory_allocated(dev) == 12 * KiB
    assert stats(dev)["num_raw_alloc"] == 3
    assert stats(dev)["reserved_bytes.all.current"] == 12 * KiB


# -- the large pool: segments, split, merge, best fit ------------------------------------


def test_large_blocks_are_carved_from_a_20_mib_segment(fake: ember.device) -> None:
    a, b = Storage(fake, 2 * MiB), Storage(fake, 3 * MiB)
    assert backend_of(fake).allocations == [20 * MiB]
    assert b.ptr == a.ptr + 2 * MiB
    assert ember.memory.memory_allocated(fake) == 5 * MiB
    assert ember.memory.memory_reserved(fake) == 20 * MiB
    assert stats(fake)["inactive_split_bytes.all.current"] == 15 * MiB


def test_requests_of_10_mib_and_more_get_a_segment_rounded_to_2_mib(fake: ember.device) -> None:
    big = Storage(fake, 11 * MiB - 5)
    assert backend_of(fake).allocations == [12 * MiB]
    # the 1 MiB rest of the segment is too small to split off
    assert ember.memory.memory_allocated(fake) == 12 * MiB
    assert big.ptr != 0


def test_freed_neighbours_merge_and_empty_cache_frees_whole_segments(fake: ember.device) -> None:
    a, b, c = Storage(fake, 2 * MiB), Storage(fake, 2 * MiB), Storage(fake, 2 * MiB)
    start = a.ptr
    del a, c
    ember.memory.empty_cache(fake)  # b keeps the segment
    assert backend_of(fake).frees == []
    assert ember.memory.memory_reserved(fake) == 20 * MiB
    del b
    # one 20 MiB free block again: a request for all of it fits without a new segment
    whole = Storage(fake, 20 * MiB)
    assert whole.ptr == start
    assert backend_of(fake).allocations == [20 * MiB]
    del whole
    ember.memory.empty_cache(fake)
    assert backend_of(fake).frees == [20 * MiB]
    assert ember.memory.memory_reserved(fake) == 0
    assert stats(fake)["segment.all.current"] == 0


def test_best_fit_takes_the_smallest_free_block_that_fits(fake: ember.device) -> None:
    a = Storage(fake, 2 * MiB)
    gap1 = Storage(fake, 2 * MiB)
    b = Storage(fake, 4 * MiB)
    gap2 = Storage(fake, 2 * MiB)
    first, second = a.ptr, b.ptr
    del a, b  # free blocks: 2 MiB, 4 MiB, and the 10 MiB rest of the segment
    c = Storage(fake, 3 * MiB)
    assert c.ptr == second
    # 1 MiB would be left: not worth a block of its own, so c takes all 4 MiB
    assert ember.memory.memory_allocated(fake) == 8 * MiB
    d = Storage(fake, 2 * MiB)
    assert d.ptr == first
    assert backend_of(fake).allocations == [20 * MiB]
    assert gap1.ptr and gap2.ptr


def test_a_backend_without_region_gets_unsplit_blocks(
    make_device: Callable[[ember.DeviceBackend], ember.device],
) -> None:
    backend = UnsplittableBackend()
    dev = make_device(backend)
    a = Storage(dev, 2 * MiB)
    del a
    b = Storage(dev, 2 * MiB - 100 * KiB)  # within a quarter of the cached block: reused
    assert ember.memory.memory_allocated(dev) == 2 * MiB
    c = Storage(dev, 1 * MiB)  # the cached 2 MiB block would waste half: a new one
    assert backend.allocations == [2 * MiB, MiB]
    assert b.nbytes and c.nbytes


def test_a_region_that_raises_not_implemented_stops_splitting(
    make_device: Callable[[ember.DeviceBackend], ember.device],
) -> None:
    backend = RecordingBackend(splittable=False)
    dev = make_device(backend)
    a = Storage(dev, 2 * MiB)
    b = Storage(dev, 3 * MiB)
    assert backend.allocations == [20 * MiB, 3 * MiB]  # the first segment went whole
    assert ember.memory.memory_allocated(dev) == 23 * MiB
    assert a.handle is not b.handle


# -- streams -------------------------------------------------------------------------------


@pytest.mark.parametrize("nbytes", [4 * KiB, 2 * MiB])
def test_each_stream_has_its_own_pool(fake: ember.device, nbytes: int) -> None:
    side = ember.Stream(fake)
    a = Storage(fake, nbytes)
    address = a.ptr
    del a
    with ember.stream(side):
        b = Storage(fake, nbytes)
        assert b.ptr != address
        del b
    assert Storage(fake, nbytes).ptr == address
    assert len(backend_of(fake).allocations) == 2


@pytest.mark.parametrize("nbytes", [4 * KiB, 2 * MiB])
def test_record_stream_keeps_the_block_until_the_event_completes(
    fake: ember.device, nbytes: int
) -> None:
    backend = backend_of(fake)
    side = ember.Stream(fake)
    t = Storage(fake, nbytes)
    address, size = t.ptr, t._size
    t.record_stream(side)
    t.record_stream(side)  # once is enough
    del t
    assert len(backend.markers) == 1
    assert ember.memory.memory_allocated(fake) == 0
    assert stats(fake)["active_bytes.all.current"] == size
    other = Storage(fake, nbytes)
    assert other.ptr != address
    ember.memory.empty_cache(fake)  # the pending block is not the cache's to free
    assert sum(backend.frees) == 0
    backend.markers[0].done = True
    again = Storage(fake, nbytes)
    assert again.ptr == address
    assert stats(fake)["active_bytes.all.current"] == 2 * size


def test_empty_cache_frees_a_pending_block_once_its_event_completed(fake: ember.device) -> None:
    backend = backend_of(fake)
    t = Storage(fake, 4 * KiB)
    t.record_stream(ember.Stream(fake))
    del t
    ember.memory.empty_cache(fake)
    assert backend.frees == []
    backend.markers[0].done = True
    ember.memory.empty_cache(fake)
    assert backend.frees == [4 * KiB]


def test_record_stream_on_the_allocating_stream_is_a_no_op(fake: ember.device) -> None:
    t = Storage(fake, 4 * KiB)
    address = t.ptr
    t.record_stream(ember.current_stream(fake))
    del t
    assert backend_of(fake).markers == []
    assert Storage(fake, 4 * KiB).ptr == address


def test_record_stream_of_another_device_raises(fake: ember.device) -> None:
    t = Storage(fake, 4 * KiB)
    with pytest.raises(RuntimeError, match="record_stream"):
        t.record_stream(ember.current_stream("cpu"))


# -- statistics ----------------------------------------------------------------------------


def test_stats_follow_allocations_and_peaks_reset(fake: ember.device) -> None:
    a = Storage(fake, 3 * MiB)
    b = Storage(fake, 1000)
    assert ember.memory.memory_allocated(fake) == 3 * MiB + 1024
    assert ember.memory.memory_reserved(fake) == 20 * MiB + 1024
    del a
    assert ember.memory.memory_allocated(fake) == 1024
    assert ember.memory.max_memory_allocated(fake) == 3 * MiB + 1024
    ember.memory.reset_peak_memory_stats(fake)
    assert ember.memory.max_memory_allocated(fake) == 1024
    assert ember.memory.max_memory_reserved(fake) == 20 * MiB + 1024
    ember.memory.empty_cache(fake)
    assert ember.memory.memory_reserved(fake) == 1024
    assert ember.memory.max_memory_reserved(fake) == 20 * MiB + 1024
    ember.memory.reset_peak_memory_stats(fake)
    s = stats(fake)
    assert s["reserved_bytes.all.peak"] == 1024
    assert (s["num_raw_alloc"], s["num_raw_free"]) == (2, 1)
    assert (s["segment.all.current"], s["segment.all.peak"]) == (1, 1)
    assert (s["num_alloc_retries"], s["num_ooms"]) == (0, 0)
    assert b.nbytes == 1000


def test_device_none_is_the_default_device() -> None:
    assert ember.memory.memory_stats() == ember.memory.memory_stats(ember.get_default_device())


# -- out of memory -------------------------------------------------------------------------


def test_a_failed_allocation_empties_the_cache_and_retries(
    make_device: Callable[[ember.DeviceBackend], ember.device],
) -> None:
    backend = RecordingBackend(budget=20 * MiB)
    dev = make_device(backend)
    cached = [Storage(dev, 512 * KiB) for _ in range(16)]  # 8 MiB of small blocks
    del cached
    big = Storage(dev, 14 * MiB)  # 8 + 14 MiB exceed the budget until the cache goes
    assert backend.frees == [512 * KiB] * 16
    assert stats(dev)["num_alloc_retries"] == 1
    assert stats(dev)["num_ooms"] == 0
    assert big.nbytes == 14 * MiB


def test_out_of_memory_raises_naming_device_and_sizes_and_leaves_the_allocator_intact(
    make_device: Callable[[ember.DeviceBackend], ember.device],
) -> None:
    backend = RecordingBackend(budget=30 * MiB)
    dev = make_device(backend)
    keep = Storage(dev, 2 * MiB)
    with pytest.raises(ember.OutOfMemoryError) as caught:
        Storage(dev, 40 * MiB)
    message = str(caught.value)
    assert str(dev) in message
    assert "40.00 MiB (41943040 bytes)" in message
    assert "2.00 MiB allocated and 20.00 MiB reserved" in message
    assert isinstance(caught.value, RuntimeError)
    s = stats(dev)
    assert (s["num_alloc_retries"], s["num_ooms"]) == (1, 1)
    assert ember.memory.memory_allocated(dev) == 2 * MiB
    after = Storage(dev, 2 * MiB)  # still carved from the same segment
    assert after.ptr == keep.ptr + 2 * MiB
    assert backend.allocations == [20 * MiB]


def test_out_of_memory_waits_for_pending_frees_before_giving_up(
    make_device: Callable[[ember.DeviceBackend], ember.device],
) -> None:
    backend = RecordingBackend(budget=20 * MiB)
    dev = make_device(backend)
    t = Storage(dev, 12 * MiB)
    t.record_stream(ember.Stream(dev))
    del t
    fresh = Storage(dev, 12 * MiB)  # the pending block can't serve it, nor the budget
    assert backend.markers[0].done, "the allocator should have waited for the event"
    assert backend.frees == [12 * MiB]
    assert fresh.nbytes == 12 * MiB


# -- the caching switch --------------------------------------------------------------------


def test_with_caching_off_every_free_is_a_raw_free(fake: ember.device) -> None:
    backend = backend_of(fake)
    cached = Storage(fake, 4 * KiB)
    del cached
    ember.memory.set_caching_enabled(False, fake)
    assert not ember.memory.is_caching_enabled(fake)
    assert backend.frees == [4 * KiB]  # switching off emptied the cache
    for _ in range(3):
        small, large = Storage(fake, 4 * KiB), Storage(fake, 3 * MiB)
        del small, large
    assert backend.allocations == [4 * KiB] + [4 * KiB, 3 * MiB] * 3
    assert backend.frees == [4 * KiB] + [4 * KiB, 3 * MiB] * 3
    assert ember.memory.memory_reserved(fake) == 0
    ember.memory.set_caching_enabled(True, fake)
    a = Storage(fake, 4 * KiB)
    del a
    Storage(fake, 4 * KiB)
    assert len(backend.allocations) == 8


def test_a_block_allocated_with_caching_on_is_freed_raw_once_it_is_off(fake: ember.device) -> None:
    small, large = Storage(fake, 4 * KiB), Storage(fake, 2 * MiB)
    ember.memory.set_caching_enabled(False, fake)
    del small, large
    assert sorted(backend_of(fake).frees) == [4 * KiB, 20 * MiB]


def test_the_environment_variable_turns_caching_off(
    make_device: Callable[[ember.DeviceBackend], ember.device], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EMBER_NO_MEMORY_CACHING", "1")
    dev = make_device(RecordingBackend())
    assert not ember.memory.is_caching_enabled(dev)
    a = Storage(dev, 4 * KiB)
    del a
    assert backend_of(dev).frees == [4 * KiB]


# -- finalizers and threads ----------------------------------------------------------------


def test_a_free_from_inside_an_allocation_is_completed_afterwards(fake: ember.device) -> None:
    backend = backend_of(fake)
    victims = [Storage(fake, 2 * MiB)]
    address = victims[0].ptr
    # The cyclic GC may finalize a storage in the middle of any allocation.
    backend.on_allocate = victims.clear
    small = Storage(fake, 4 * KiB)
    backend.on_allocate = None
    assert ember.memory.memory_allocated(fake) == 4 * KiB
    assert Storage(fake, 2 * MiB).ptr == address
    assert small.nbytes


def test_concurrent_threads_keep_the_counts_exact(
    make_device: Callable[[ember.DeviceBackend], ember.device],
) -> None:
    dev = make_device(SynchronousBackend())
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        try:
            for i in range(300):
                sizes = (seed * 512 + 100, (i % 3 + 1) * MiB, 4 * KiB)
                held = [Storage(dev, n) for n in sizes]
                del held
        except BaseException as error:  # re-raised in the main thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    gc.collect()
    assert ember.memory.memory_allocated(dev) == 0
    ember.memory.empty_cache(dev)
    assert ember.memory.memory_reserved(dev) == 0
    assert backend_of(dev).live == 0


# -- real devices --------------------------------------------------------------------------


@pytest.fixture(params=ember.devices())
def real_device(request: pytest.FixtureRequest) -> ember.device:
    dev = ember.device(request.param)
    ember.synchronize(dev)
    return dev


def test_tensors_on_a_real_device_are_counted_and_reused(real_device: ember.device) -> None:
    dev = real_device
    before = ember.memory.memory_allocated(dev)
    t = ember.empty(1000, device=dev)  # 4000 bytes: a 4096-byte block
    assert ember.memory.memory_allocated(dev) == before + 4096
    del t
    assert ember.memory.memory_allocated(dev) == before
    big = ember.ones(3 * MiB // 4, device=dev)  # 3 MiB
    address = big.data_ptr()
    raw = ember.memory.memory_stats(dev)["num_raw_alloc"]
    del big
    again = ember.zeros(3 * MiB // 4, device=dev)
    assert again.data_ptr() == address
    assert ember.memory.memory_stats(dev)["num_raw_alloc"] == raw
    assert again.sum().item() == 0.0
    assert ember.memory.memory_reserved(dev) >= ember.memory.memory_allocated(dev) + 17 * MiB
    del again
    ember.synchronize(dev)
    ember.memory.empty_cache(dev)
    assert ember.memory.memory_reserved(dev) <= ember.memory.memory_allocated(dev) + 20 * MiB


def test_split_blocks_on_a_real_device_hold_their_own_values(real_device: ember.device) -> None:
    dev = real_device
    a = ember.full((MiB // 2,), 1.0, device=dev)  # 2 MiB blocks of one segment
    b = ember.full((MiB // 2,), 2.0, device=dev)
    c = a + b
    assert (a.sum().item(), b.sum().item(), c.sum().item()) == (MiB / 2, MiB, 1.5 * MiB)
