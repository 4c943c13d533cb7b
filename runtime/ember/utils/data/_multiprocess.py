"""The DataLoader iterator with worker processes: tasks out round-robin, batches back in order.

Each worker has an index queue; all share one result queue. At most `prefetch_factor *
num_workers` tasks are outstanding; results that arrive early wait in `_task_info` until
their turn. Shutdown (end of data, an abandoned iterator, garbage collection or interpreter
exit) sets the done event, sends every worker None, joins them and terminates stragglers;
it is registered with `weakref.finalize`, so it runs exactly once whatever happens.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import queue
import time
import weakref
from typing import Any, Final

from ember.utils.data._worker import (
    ExceptionWrapper,
    IterationEnd,
    loads,
    unpack,
    worker_loop,
)

__all__ = ["MultiProcessIterator"]

STATUS_SECONDS: Final = 1.0  # how often a waiting main process checks its workers
JOIN_SECONDS: Final = 5.0  # how long a worker may take to finish before it is terminated


class MultiProcessIterator:
    """Iterates a DataLoader through `loader.num_workers` worker processes."""

    def __init__(self, loader: Any) -> None:
        self._num_workers = loader.num_workers
        self._prefetch = loader.prefetch_factor * loader.num_workers
        self._timeout = loader.timeout
        self._persistent = loader.persistent_workers
        self._iterable = loader._iterable
        self._length = loader.__len__
        base_seed = loader._base_seed()
        context = loader._context()
        self._result_queue = context.Queue()
        self._done_event = context.Event()
        self._index_queues: list[Any] = []
        self._workers: list[Any] = []
        fetcher = loader._fetcher()
        try:
            for worker_id in range(self._num_workers):
                index_queue = context.Queue()
                index_queue.cancel_join_thread()  # never block exit on undelivered tasks
                worker = context.Process(
                    target=worker_loop,
                    args=(
                        worker_id,
                        self._num_workers,
                        base_seed,
                        loader.dataset,
                        fetcher,
                        loader.worker_init_fn,
                        index_queue,
                        self._result_queue,
                        self._done_event,
                        os.getpid(),
                    ),
                    daemon=True,
                )
                worker.start()
                self._index_queues.append(index_queue)
                self._workers.append(worker)
        finally:
            self._shutdown = weakref.finalize(
                self,
                _shutdown_workers,
                self._workers,
                self._index_queues,
                self._result_queue,
                self._done_event,
            )
        self._epoch = 0
        self.reset(loader)

    def reset(self, loader: Any) -> None:
        """Start a new pass (persistent workers are reused; stale results are dropped)."""
        self._epoch += 1
        self._indices = iter(loader._index_sampler)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info: dict[int, tuple[Any, ...]] = {}
        self._tasks_outstanding = 0
        self._active = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        for _ in range(self._prefetch):
            self._try_put_index()

    def __iter__(self) -> MultiProcessIterator:
        return self

    def __len__(self) -> int:
        return self._length()

    def __next__(self) -> Any:
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._active[info[0]]):
                    break
                # sent to a worker whose iterable dataset ended: it will never answer
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown()
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:
                del self._task_info[self._rcvd_idx]
                return self._process(info[1])
            number, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, IterationEnd):
                self._active[data.worker_id] = False
                self._try_put_index()
                continue
            if number != self._rcvd_idx:
                self._task_info[number] += (data,)
                continue
            del self._task_info[number]
            return self._process(data)

    def _try_put_index(self) -> None:
        if self._tasks_outstanding >= self._prefetch:
            return
        try:
            index = next(self._indices)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_cycle)
            if self._active[worker_id]:
                break
        else:
            return  # every worker's iterable dataset has ended
        self._index_queues[worker_id].put((self._epoch, self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process(self, data: Any) -> Any:
        self._rcvd_idx += 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return unpack(data)

    def _get_data(self) -> tuple[int, Any]:
        """The next result of this epoch, checking on the workers while waiting."""
        started = time.monotonic()
        while True:
            wait = STATUS_SECONDS
            if self._timeout > 0:
                wait = min(wait, max(0.0, self._timeout - (time.monotonic() - started)))
            try:
                epoch, number, payload = self._result_queue.get(timeout=wait)
            except queue.Empty:
                self._check_workers(started)
                continue
            if epoch == self._epoch:
                return number, loads(payload)

    def _check_workers(self, started: float) -> None:
        dead = [w for w in self._workers if not w.is_alive()]
        if dead:
            self._shutdown()
            pids = ", ".join(str(w.pid) for w in dead)
            codes = ", ".join(str(w.exitcode) for w in dead)
            raise RuntimeError(
                f"DataLoader worker (pid(s) {pids}) exited unexpectedly (exit code(s) {codes})"
            )
        if self._timeout > 0 and time.monotonic() - started >= self._timeout:
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")


def _shutdown_workers(
    workers: list[Any], index_queues: list[Any], result_queue: Any, done_event: Any
) -> None:
    """Stop every worker: ask politely, wait, then terminate; close the queues."""
    done_event.set()
    for index_queue in index_queues:
        with contextlib.suppress(Exception):
            index_queue.put(None)
    deadline = time.monotonic() + JOIN_SECONDS
    for worker in workers:
        worker.join(timeout=max(0.0, deadline - time.monotonic()))
    for worker in workers:
        if worker.is_alive():
            worker.terminate()
            worker.join(timeout=JOIN_SECONDS)
        if worker.is_alive():
            worker.kill()
            worker.join()
    for q in (*index_queues, result_queue):
        q.cancel_join_thread()
        q.close()
