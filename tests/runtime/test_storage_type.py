"""The Storage type (C, runtime/ember/_cstorage.c) as Python sees it: its constructor's
arguments and errors, the small-block hit path against the allocator's accounting, wrapped
memory, weak references and concurrent use. The pools themselves are
test_caching_allocator.py's."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator

import numpy as np
import pytest

import ember
import ember.memory
from ember._storage import Storage


@pytest.fixture
def dev() -> Iterator[ember.device]:
    # The accounting checks compare memory_allocated before and after: garbage that
    # earlier tests left in cycles must not be freed in between.
    gc.collect()
    gc.disable()
    try:
        yield ember.ones(1)._device
    finally:
        gc.enable()


def test_positional_and_keyword_construction_agree(dev: ember.device) -> None:
    for storage in (Storage(dev, 24), Storage(dev=dev, nbytes=24), Storage(dev, nbytes=24)):
        assert storage.nbytes == 24 and storage.device is dev and storage.version == 0
        assert storage._size == 512 and isinstance(storage.ptr, int) and storage.ptr


def test_bad_arguments_raise_without_allocating(dev: ember.device) -> None:
    before = ember.memory.memory_allocated(dev)
    with pytest.raises(TypeError):
        Storage(dev)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Storage(dev, 8, 9)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Storage(dev, "8")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="negative size -1 bytes"):
        Storage(dev, -1)
    with pytest.raises(AttributeError):
        Storage(object(), 8)  # type: ignore[arg-type]
    assert ember.memory.memory_allocated(dev) == before


def test_a_freed_small_block_is_the_next_one_of_its_size(dev: ember.device) -> None:
    before = ember.memory.memory_allocated(dev)
    first = Storage(dev, 700)
    assert ember.memory.memory_allocated(dev) == before + 1024
    ptr = first.ptr
    del first
    assert ember.memory.memory_allocated(dev) == before
    again = Storage(dev, 1000)  # rounds to the same 1024 bytes: the block just freed
    assert again.ptr == ptr and again._size == 1024
    assert ember.memory.max_memory_allocated(dev) >= before + 1024


def test_version_counts_and_storage_memory_is_usable(dev: ember.device) -> None:
    storage = Storage(dev, 4 * 8)
    storage.version += 3
    assert storage.version == 3
    t = ember.empty(8)
    t.fill_(2.0)
    assert np.array_equal(t.numpy(), np.full(8, 2.0, np.float32))


def test_wrapped_memory_keeps_its_owner_alive_and_is_not_freed(dev: ember.device) -> None:
    array = np.arange(6, dtype=np.float32)
    owner = weakref.ref(array)
    ptr = array.__array_interface__["data"][0]
    before = ember.memory.memory_allocated(dev)
    storage = Storage.wrap(dev, None, ptr, array.nbytes, owner=array)
    assert storage._alloc is None and storage._owner is array and storage.nbytes == 24
    del array
    gc.collect()
    assert owner() is not None
    del storage
    gc.collect()
    assert owner() is None
    assert ember.memory.memory_allocated(dev) == before
    with pytest.raises(TypeError, match="wrap"):
        Storage.wrap(dev, None, ptr, 24)  # type: ignore[call-arg]


def test_weak_references_see_the_storage_die(dev: ember.device) -> None:
    storage = Storage(dev, 8)
    ref = weakref.ref(storage)
    assert ref() is storage
    del storage
    assert ref() is None


def test_concurrent_allocation_and_free_keep_the_accounting(dev: ember.device) -> None:
    before = ember.memory.memory_allocated(dev)
    errors: list[BaseException] = []

    def churn() -> None:
        try:
            kept = []
            for i in range(3000):
                kept.append(Storage(dev, 8 + i % 5 * 600))
                if len(kept) > 7:
                    kept.pop(0)
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=churn) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert ember.memory.memory_allocated(dev) == before


@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3, 4), (7, 0, 2)])
def test_empty_tensor_builds_what_the_python_factory_built(
    dev: ember.device, shape: tuple[int, ...]
) -> None:
    from ember._tensor import empty_tensor

    for dtype in (ember.float32, ember.int64, ember.bool):
        t = empty_tensor(shape, dtype, dev)
        assert type(t) is ember.Tensor and t.shape == shape and t.dtype == dtype
        assert t.device == dev and t.storage_offset() == 0 and t.is_contiguous()
        # PyTorch's contiguous strides: the product of the later sizes, a 0 counted as 1
        expected = tuple(
            int(np.prod([max(n, 1) for n in shape[i + 1 :]])) for i in range(len(shape))
        )
        assert t.stride() == expected
        assert t._storage.nbytes == int(np.prod(shape)) * dtype.itemsize
        assert t.grad_fn is None and not t.requires_grad
        t.fill_(1)
        assert np.asarray(t).sum() == int(np.prod(shape))


def test_empty_tensor_checks_its_arguments(dev: ember.device) -> None:
    from ember._tensor import empty_tensor

    with pytest.raises(TypeError, match="takes 3 arguments"):
        empty_tensor((2,), ember.float32)  # type: ignore[call-arg]
    with pytest.raises(AttributeError):
        empty_tensor((2,), "float32", dev)  # type: ignore[arg-type]
