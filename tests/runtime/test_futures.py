"""ember.futures.Future against torch.futures.Future's documented behaviour."""

from __future__ import annotations

import threading
import time

import pytest

from ember.futures import Future, collect_all, wait_all

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("library", ["ember", "torch"])
def test_then_chains_and_errors_propagate_as_in_torch(library: str) -> None:
    make = Future if library == "ember" else torch.futures.Future
    first = make()
    assert not first.done()
    doubled = first.then(lambda f: f.wait() * 2)
    failed = doubled.then(lambda f: 1 / 0)
    first.set_result(21)
    assert first.done() and first.value() == 21 and first.wait() == 21
    assert doubled.wait() == 42
    with pytest.raises(RuntimeError, match="error when running the callback: ZeroDivisionError"):
        failed.wait()
    errored = make()
    errored.set_exception(ValueError("boom"))
    with pytest.raises(ValueError, match="boom"):
        errored.wait()
    with pytest.raises(RuntimeError):
        first.set_result(0)  # completed once


def test_wait_blocks_until_another_thread_completes() -> None:
    future: Future[str] = Future()
    threading.Timer(0.05, future.set_result, args=("done",)).start()
    started = time.perf_counter()
    assert future.wait() == "done"
    assert time.perf_counter() - started >= 0.04


def test_value_before_completion_is_refused() -> None:
    with pytest.raises(RuntimeError, match="before the future completed"):
        Future().value()
    with pytest.raises(TypeError, match="expects an exception"):
        Future().set_exception("not an exception")  # type: ignore[arg-type]


def test_callbacks_run_once_and_at_once_when_already_done() -> None:
    future: Future[int] = Future()
    seen: list[int] = []
    future.add_done_callback(lambda f: seen.append(f.value()))
    future.set_result(3)
    future.add_done_callback(lambda f: seen.append(f.value() + 1))
    assert seen == [3, 4]


def test_collect_all_and_wait_all_match_torch() -> None:
    ours = [Future() for _ in range(3)]
    theirs = [torch.futures.Future() for _ in range(3)]
    combined, reference = collect_all(ours), torch.futures.collect_all(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert combined.done() == reference.done() == False  # noqa: E712
        a.set_result(i)
        b.set_result(i)
    assert [f.value() for f in combined.wait()] == [f.value() for f in reference.wait()]
    assert wait_all(ours) == torch.futures.wait_all(theirs) == [0, 1, 2]
    assert collect_all([]).done()
