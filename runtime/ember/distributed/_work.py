"""`Work` (an asynchronous collective's handle) and the communication thread behind it.

No MPI here makes progress in the background: a pending nonblocking request completes only
while some thread calls into MPI. So each process group owns one communication thread that
runs its collectives as blocking calls, in submission order (which is what keeps ranks in
step: every rank submits the same collectives in the same order). Blocking MPI calls release
the GIL, so a collective progresses while the caller goes on (DistributedDataParallel's
all-reduces overlap the rest of backward).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

from ember._tensor import Tensor
from ember.distributed._errors import DistError
from ember.futures import Future

__all__ = ["Channel", "Work"]


class _Done:
    """A one-shot flag that makes its Event only for a thread that must wait: most works
    finish on the caller's thread and are never waited for."""

    __slots__ = ("_event", "_set")

    _CREATE: threading.Lock = threading.Lock()

    def __init__(self) -> None:
        self._set = False
        self._event: threading.Event | None = None

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        with _Done._CREATE:
            self._set = True
            event = self._event
        if event is not None:
            event.set()

    def wait(self, timeout: float | None) -> bool:
        if self._set:
            return True
        with _Done._CREATE:
            if self._set:
                return True
            if self._event is None:
                self._event = threading.Event()
            event = self._event
        return event.wait(timeout)


class Work:
    """The handle of a collective: `wait()` for its result, `is_completed()` to poll."""

    __slots__ = ("_done", "_error", "_future", "_op", "_result")

    def __init__(self, op: str, result: Sequence[Tensor] = ()) -> None:
        self._op = op
        self._done = _Done()
        self._error: BaseException | None = None
        self._result = list(result)
        self._future: Future[list[Tensor]] | None = None

    def wait(self, timeout: timedelta | float | None = None) -> bool:
        """Block until the collective has finished; raise its error if it failed. With a
        `timeout` that expires first, raise DistError (the collective may still finish:
        MPI cannot cancel one, so the group should then be given up)."""
        seconds = timeout.total_seconds() if isinstance(timeout, timedelta) else timeout
        if not self._done.wait(seconds):
            raise DistError(f"{self._op} did not complete within {seconds} s")
        if self._error is not None:
            raise self._error
        return True

    def is_completed(self) -> bool:
        """Whether the collective has finished (successfully or not); never blocks."""
        return self._done.is_set()

    def is_success(self) -> bool:
        """Whether it finished without an error."""
        return self._done.is_set() and self._error is None

    def exception(self) -> BaseException | None:
        """The error it finished with, or None."""
        return self._error

    def result(self) -> list[Tensor]:
        """The tensors it wrote (after `wait`)."""
        self.wait()
        return self._result

    def get_future(self) -> Future[list[Tensor]]:
        """A Future completed with `result()` when the collective finishes."""
        if self._future is None:
            future: Future[list[Tensor]] = Future()
            self._future = future
            if self._done.is_set():
                self._settle(future)
        return self._future

    def _finish(self, error: BaseException | None) -> None:
        self._error = error
        self._done.set()
        if self._future is not None:
            self._settle(self._future)

    def _settle(self, future: Future[list[Tensor]]) -> None:
        if future.done():
            return
        if self._error is not None:
            future.set_exception(self._error)
        else:
            future.set_result(self._result)

    def __repr__(self) -> str:
        state = "completed" if self._done.is_set() else "pending"
        return f"Work({self._op}, {state})"


def completed_work(op: str, result: Sequence[Tensor] = ()) -> Work:
    """A Work that is already done (a collective on a group of one, a non-member rank)."""
    work = Work(op, result)
    work._finish(None)
    return work


class Channel:
    """One process group's communication thread: runs submitted collectives in order.

    A blocking call with nothing queued runs on the caller's thread instead (`run`): the
    hand-off to the thread and back costs tens of microseconds, a tenth of a 1 MiB
    all-reduce. `_order` is held by whoever is inside a collective, and `_pending` counts
    the queued and running ones, so that an inline call never overtakes a queued one.
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._queue: queue.SimpleQueue[tuple[Work, Callable[[], Any]] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._order = threading.Lock()
        self._pending = 0
        self._closed = False

    def submit(self, work: Work, run: Callable[[], Any]) -> Work:
        """Queue `run` (the blocking collective plus its finishing steps) for the thread."""
        if self._closed:
            raise DistError(f"{work._op}: the process group was destroyed")
        if self._thread is None:
            self._start()
        with self._lock:
            self._pending += 1
        self._queue.put((work, run))
        return work

    def run(self, work: Work, run: Callable[[], Any], timeout: timedelta) -> None:
        """Run `run` to completion: here when nothing is queued, else after the queue
        (waiting at most `timeout` for it)."""
        if self._closed:
            raise DistError(f"{work._op}: the process group was destroyed")
        with self._lock:
            inline = self._pending == 0
            if inline:
                self._pending = 1
        if not inline:
            self.submit(work, run).wait(timeout)
            return
        try:
            with self._order:
                run()
        except BaseException as exc:
            work._finish(exc)
            raise
        finally:
            with self._lock:
                self._pending -= 1
        work._finish(None)

    def _start(self) -> None:
        with self._lock:
            if self._thread is None:
                # A daemon: a job that exits with collectives still queued must not hang.
                self._thread = threading.Thread(
                    target=self._serve, name=f"ember-distributed-{self._name}", daemon=True
                )
                self._thread.start()

    def _serve(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            work, run = item
            error: BaseException | None = None
            with self._order:
                try:
                    run()
                except BaseException as exc:
                    error = exc
            with self._lock:
                self._pending -= 1
            work._finish(error)

    def close(self) -> None:
        """Finish what is queued, then stop the thread."""
        self._closed = True
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None
