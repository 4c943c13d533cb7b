"""DataLoader worker processes: the same batches as in-process loading, errors raised in the
main process naming the worker, and no process left behind however iteration ends."""

from __future__ import annotations

import gc
import multiprocessing
import os
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import ember
from ember.utils.data import (
    DataLoader,
    IterableDataset,
    TensorDataset,
    get_worker_info,
)

from ._helpers import Samples, as_list

pytestmark = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="workers need fork here"
)


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Iterator[None]:
    """Every test must end with no worker process alive."""
    yield
    gc.collect()
    assert multiprocessing.active_children() == []


def assert_equal_batches(ours: Any, expected: Any) -> None:
    if isinstance(expected, ember.Tensor):
        assert isinstance(ours, ember.Tensor) and ours.dtype is expected.dtype
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(expected))
    elif isinstance(expected, dict):
        assert list(ours) == list(expected)
        for key in expected:
            assert_equal_batches(ours[key], expected[key])
    elif isinstance(expected, (list, tuple)):
        assert type(ours) is type(expected) and len(ours) == len(expected)
        for a, b in zip(ours, expected, strict=True):
            assert_equal_batches(a, b)
    else:
        assert ours == expected


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("drop_last", [False, True])
def test_two_workers_give_the_batches_of_none(shuffle: bool, drop_last: bool) -> None:
    def loader(workers: int) -> DataLoader[Any]:
        return DataLoader(
            Samples(ember.tensor, 23),
            batch_size=4,
            shuffle=shuffle,
            drop_last=drop_last,
            num_workers=workers,
            generator=ember.Generator().manual_seed(7),
        )

    expected = list(loader(0))
    got = list(loader(2))
    assert len(got) == len(expected) == len(loader(2))
    for a, b in zip(got, expected, strict=True):
        assert_equal_batches(a, b)


def test_tensor_dataset_in_workers_with_every_prefetch() -> None:
    x = ember.arange(60.0).reshape(20, 3)
    data = TensorDataset(x, ember.arange(20))
    expected = [as_list(b[0]) for b in DataLoader(data, batch_size=3)]
    for workers, prefetch in ((1, 1), (2, 2), (3, 5)):
        loader = DataLoader(data, batch_size=3, num_workers=workers, prefetch_factor=prefetch)
        assert [as_list(b[0]) for b in loader] == expected


def test_custom_collate_and_no_batching() -> None:
    def collate(samples: list[int]) -> dict[str, Any]:
        return {"sum": sum(samples), "tensor": ember.tensor(samples), "pid": os.getpid()}

    batches = list(DataLoader(list(range(9)), batch_size=4, collate_fn=collate, num_workers=2))
    assert [b["sum"] for b in batches] == [6, 22, 8]
    assert [as_list(b["tensor"]) for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8]]
    assert all(b["pid"] != os.getpid() for b in batches)
    single = list(DataLoader([np.float32(1.5), np.float32(2.5)], batch_size=None, num_workers=2))
    assert [float(t) for t in single] == [1.5, 2.5]


class Probe:
    """Reports where and with which seeds each sample was produced."""

    def __len__(self) -> int:
        return 8

    def __getitem__(self, i: int) -> dict[str, Any]:
        info = get_worker_info()
        return {
            "i": i,
            "worker": -1 if info is None else info.id,
            "workers": 0 if info is None else info.num_workers,
            "seed": 0 if info is None else info.seed,
            "same_dataset": info is not None and info.dataset is not None,
            "random": float(ember.rand(1)),
            "pid": os.getpid(),
            "threads": ember.get_num_threads(),
        }


def test_worker_info_seeds_and_init_fn() -> None:
    assert get_worker_info() is None
    started = multiprocessing.get_context("fork").Queue()

    def init(worker_id: int) -> None:
        started.put((worker_id, get_worker_info().id))  # type: ignore[union-attr]

    def run(seed: int) -> list[dict[str, Any]]:
        loader = DataLoader(
            Probe(),
            batch_size=2,
            num_workers=2,
            worker_init_fn=init,
            generator=ember.Generator().manual_seed(seed),
        )
        return list(loader)

    batches = run(5)
    assert sorted(started.get(timeout=10) for _ in range(2)) == [(0, 0), (1, 1)]
    assert [as_list(b["worker"]) for b in batches] == [[0, 0], [1, 1], [0, 0], [1, 1]]
    assert all(as_list(b["workers"]) == [2, 2] for b in batches)
    assert all(as_list(b["threads"]) == [1, 1] for b in batches)
    seeds = {as_list(b["worker"])[0]: as_list(b["seed"])[0] for b in batches}
    assert seeds[1] == seeds[0] + 1
    randoms = [x for b in batches for x in as_list(b["random"])]
    assert len(set(randoms)) == len(randoms)  # the workers' streams differ
    assert [x for b in run(5) for x in as_list(b["random"])] == randoms  # and are reproducible
    for _ in range(2):
        started.get(timeout=10)
    assert [x for b in run(6) for x in as_list(b["random"])] != randoms


class Failing:
    def __init__(self, error: BaseException, at: int = 5) -> None:
        self.error = error
        self.at = at

    def __len__(self) -> int:
        return 10

    def __getitem__(self, i: int) -> int:
        if i == self.at:
            raise self.error
        return i


class NeedsTwoArguments(Exception):
    def __init__(self, a: int, b: int) -> None:
        super().__init__(f"{a} and {b}")


@pytest.mark.parametrize(
    ("error", "raised"),
    [
        (ValueError("bad sample"), ValueError),
        (KeyError("missing"), KeyError),
        (NeedsTwoArguments(1, 2), RuntimeError),
    ],
)
def test_a_worker_error_is_raised_in_the_main_process(
    error: BaseException, raised: type[BaseException]
) -> None:
    loader = DataLoader(Failing(error), batch_size=2, num_workers=2)
    iterator = iter(loader)
    assert as_list(next(iterator)) == [0, 1]
    assert as_list(next(iterator)) == [2, 3]
    with pytest.raises(raised) as caught:
        next(iterator)
    text = str(caught.value)
    assert f"Caught {type(error).__name__} in DataLoader worker process 0" in text
    assert "Original Traceback" in text and "__getitem__" in text
    assert as_list(next(iterator)) == [6, 7]  # the other batches still arrive, in order
    del iterator, caught


def test_an_unpicklable_error_or_batch_becomes_a_runtime_error() -> None:
    class Local(Exception):
        pass

    with pytest.raises(RuntimeError, match="Local \\(unpicklable\\)"):
        list(DataLoader(Failing(Local("x"), at=0), batch_size=2, num_workers=1))
    with pytest.raises(RuntimeError, match="could not be sent to the main process"):
        list(DataLoader(list(range(4)), collate_fn=lambda s: lambda: s, num_workers=1))


def test_an_error_in_worker_init_fn_is_raised() -> None:
    def init(worker_id: int) -> None:
        raise OSError(f"cannot open shard {worker_id}")

    with pytest.raises(OSError, match="cannot open shard"):
        list(DataLoader(list(range(4)), num_workers=2, worker_init_fn=init))


@pytest.mark.parametrize("workers", [1, 3])
def test_abandoning_iteration_leaves_no_process(workers: int) -> None:
    loader = DataLoader(list(range(100)), batch_size=2, num_workers=workers)
    for i, _ in enumerate(loader):
        if i == 2:
            break
    assert multiprocessing.active_children() == []  # gone at once, not at collection


def test_exhausting_iteration_leaves_no_process() -> None:
    iterator = iter(DataLoader(list(range(6)), batch_size=2, num_workers=2))
    assert len(list(iterator)) == 3
    assert multiprocessing.active_children() == []
    with pytest.raises(StopIteration):
        next(iterator)


class Dies:
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int) -> int:
        if i == 2:
            os._exit(3)
        return i


def test_a_worker_that_dies_is_reported() -> None:
    with pytest.raises(RuntimeError, match=r"exited unexpectedly \(exit code\(s\) 3\)"):
        list(DataLoader(Dies(), batch_size=1, num_workers=1))


class Slow:
    def __len__(self) -> int:
        return 2

    def __getitem__(self, i: int) -> int:
        time.sleep(1.0)
        return i


def test_timeout() -> None:
    loader = DataLoader(Slow(), num_workers=1, timeout=0.3)
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0\.3 seconds"):
        next(iter(loader))


def test_persistent_workers_are_reused_across_epochs() -> None:
    loader = DataLoader(Probe(), batch_size=2, num_workers=2, persistent_workers=True, shuffle=True)
    first = list(loader)
    pids = {p for b in first for p in as_list(b["pid"])}
    for i, _ in enumerate(loader):  # an epoch abandoned half-way ...
        if i == 1:
            break
    second = list(loader)  # ... does not leak into the next one
    assert sorted(i for b in second for i in as_list(b["i"])) == list(range(8))
    assert {p for b in second for p in as_list(b["pid"])} == pids
    assert len(multiprocessing.active_children()) == 2
    del loader
    gc.collect()


def make_shards(n: int) -> Any:
    class Shards(IterableDataset[int]):
        def __iter__(self) -> Iterator[int]:
            info = get_worker_info()
            assert info is not None
            return iter(range(info.id * 100, info.id * 100 + n + info.id))

    return Shards()


def test_iterable_dataset_in_workers_interleaves_like_torch() -> None:
    torch = pytest.importorskip("torch")

    class TorchShards(torch.utils.data.IterableDataset):  # type: ignore[misc]
        def __iter__(self) -> Iterator[int]:
            info = torch.utils.data.get_worker_info()
            return iter(range(info.id * 100, info.id * 100 + 5 + info.id))

    ours = [as_list(b) for b in DataLoader(make_shards(5), batch_size=2, num_workers=2)]
    theirs = [
        b.tolist() for b in torch.utils.data.DataLoader(TorchShards(), batch_size=2, num_workers=2)
    ]
    assert ours == theirs
    persistent = DataLoader(make_shards(5), batch_size=2, num_workers=2, persistent_workers=True)
    assert [as_list(b) for b in persistent] == theirs
    assert [as_list(b) for b in persistent] == theirs
    del persistent
    gc.collect()
