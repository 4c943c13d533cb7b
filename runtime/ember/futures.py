"""`ember.futures`: PyTorch's `torch.futures` — a value that a later event provides.

A collective's `Work.get_future()` and a DistributedDataParallel communication hook hand
one of these around. Callbacks added with `then` run in the thread that completes the
future (the communication thread for a collective), as in PyTorch; `wait` blocks the caller.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

__all__ = ["Future", "collect_all", "wait_all"]

T = TypeVar("T")
S = TypeVar("S")


class Future(Generic[T]):
    """A result set once (`set_result` or `set_exception`), read by `wait`/`value`."""

    __slots__ = ("_callbacks", "_condition", "_done", "_error", "_value")

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._done = False
        self._value: Any = None
        self._error: BaseException | None = None
        self._callbacks: list[Callable[[Future[T]], None]] = []

    def done(self) -> bool:
        """Whether the result (or an error) is set."""
        return self._done

    def wait(self) -> T:
        """Block until the result is set; return it, or raise the error it was set with."""
        with self._condition:
            while not self._done:
                self._condition.wait()
        return self.value()

    def value(self) -> T:
        """The result of a done future (raises its error); RuntimeError when not done."""
        if not self._done:
            raise RuntimeError("Future.value() called before the future completed")
        if self._error is not None:
            raise self._error
        return self._value

    def set_result(self, result: T) -> None:
        """Complete the future with `result`; callbacks run now, in this thread."""
        self._complete(result, None)

    def set_exception(self, result: BaseException) -> None:
        """Complete the future with an error that `wait` and `value` raise."""
        if not isinstance(result, BaseException):
            raise TypeError(f"set_exception expects an exception, got {type(result).__name__}")
        self._complete(None, result)

    def then(self, callback: Callable[[Future[T]], S]) -> Future[S]:
        """A future of `callback(self)`, run once this one completes; an error it raises
        completes the returned future with a RuntimeError naming it, as in PyTorch."""
        chained: Future[S] = Future()

        def run(done: Future[T]) -> None:
            try:
                chained.set_result(callback(done))
            except BaseException as exc:
                chained.set_exception(exc)

        self.add_done_callback(run)
        return chained

    def add_done_callback(self, callback: Callable[[Future[T]], None]) -> None:
        """Run `callback(self)` when done (at once, in this thread, if already done)."""
        with self._condition:
            if not self._done:
                self._callbacks.append(callback)
                return
        callback(self)

    def _complete(self, value: Any, error: BaseException | None) -> None:
        with self._condition:
            if self._done:
                raise RuntimeError("this Future is already completed")
            self._value, self._error, self._done = value, error, True
            callbacks, self._callbacks = self._callbacks, []
            self._condition.notify_all()
        for callback in callbacks:
            callback(self)

    def __repr__(self) -> str:
        state = "done" if self._done else "pending"
        return f"Future({state})"


def collect_all(futures: Sequence[Future[Any]]) -> Future[list[Future[Any]]]:
    """A future completed, with the list of `futures`, once every one of them is done."""
    combined: Future[list[Future[Any]]] = Future()
    pending = [len(futures)]
    lock = threading.Lock()
    items = list(futures)

    def one_done(_: Future[Any]) -> None:
        with lock:
            pending[0] -= 1
            last = pending[0] == 0
        if last:
            combined.set_result(items)

    if not items:
        combined.set_result(items)
    for future in items:
        future.add_done_callback(one_done)
    return combined


def wait_all(futures: Sequence[Future[Any]]) -> list[Any]:
    """Wait for every future; their values, in order (the first error is raised)."""
    return [future.wait() for future in futures]
