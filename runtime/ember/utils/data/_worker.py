"""What runs inside a DataLoader worker process, and how its batches cross to the main one.

A worker gets (epoch, task number, indices) from its own index queue, fetches and collates
the batch, and puts (epoch, task number, payload) on the shared result queue. Tensors do not
pickle, so a payload carries each tensor as a NumPy array (`_TensorPayload`), which the main
process wraps back with `from_numpy` (no copy). Payloads are pickled by the worker itself, so
an unpicklable batch becomes an error the main process raises instead of a lost message.
"""

from __future__ import annotations

import os
import pickle
import queue
import random
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from ember._ops.creation import from_numpy
from ember._tensor import Tensor

__all__ = ["WorkerInfo", "get_worker_info"]

POLL_SECONDS: Final = 5.0  # how often an idle worker checks that its parent still lives


@dataclass(frozen=True)
class WorkerInfo:
    """Inside a worker: its id, the number of workers, its seed and its copy of the dataset."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """This process's `WorkerInfo` in a DataLoader worker; None in the main process."""
    return _worker_info


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process and raised again there."""

    def __init__(self, where: str, error: BaseException) -> None:
        self.exc_type: type[BaseException] = type(error)
        self.exc_name = type(error).__qualname__
        self.where = where
        self.text = "".join(traceback.format_exception(error))

    def reraise(self) -> None:
        """Raise an exception of the original type (RuntimeError if it can't be built)."""
        message = f"Caught {self.exc_name} {self.where}.\nOriginal {self.text}"
        if self.exc_type is KeyError:
            # KeyError repr()s its message, which would hide the traceback's line breaks.
            raise KeyError(_KeyErrorMessage(message))
        try:
            error = self.exc_type(message)
        except Exception:
            error = RuntimeError(message)
        raise error


class _KeyErrorMessage(str):
    def __repr__(self) -> str:
        return str(self)


class IterationEnd:
    """A worker's iterable dataset ran out."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


class _TensorPayload:
    """A tensor in transit: its values as a NumPy array, and where it lived."""

    __slots__ = ("array", "device", "requires_grad")

    def __init__(self, t: Tensor) -> None:
        host = t.detach()
        self.device = str(t.device)
        self.requires_grad = t.requires_grad
        self.array = host.numpy() if host.device.type == "cpu" else host.to("cpu").numpy()

    def __getstate__(self) -> tuple[np.ndarray, str, bool]:
        return self.array, self.device, self.requires_grad

    def __setstate__(self, state: tuple[np.ndarray, str, bool]) -> None:
        self.array, self.device, self.requires_grad = state


def pack(data: Any) -> Any:
    """`data` with every tensor replaced by a picklable `_TensorPayload`."""
    if isinstance(data, Tensor):
        return _TensorPayload(data)
    if isinstance(data, (list, tuple, dict)):
        return _map_containers(data, pack)
    return data


def unpack(data: Any) -> Any:
    """The inverse of `pack`, in the main process."""
    if isinstance(data, _TensorPayload):
        t = from_numpy(data.array)
        if data.device != "cpu":
            t = t.to(data.device)
        return t.requires_grad_() if data.requires_grad else t
    if isinstance(data, (list, tuple, dict)):
        return _map_containers(data, unpack)
    return data


def _map_containers(data: Any, fn: Callable[[Any], Any]) -> Any:
    if isinstance(data, dict):
        mapped = {key: fn(value) for key, value in data.items()}
        return mapped if type(data) is dict else _rebuild(data, mapped)
    items = [fn(item) for item in data]
    if type(data) in (list, tuple):
        return items if type(data) is list else tuple(items)
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*items)
    return _rebuild(data, items)


def _rebuild(original: Any, mapped: Any) -> Any:
    try:
        return type(original)(mapped)
    except TypeError:
        return mapped


def worker_loop(
    worker_id: int,
    num_workers: int,
    base_seed: int,
    dataset: Any,
    fetcher_factory: Callable[[], Callable[[Any], Any]],
    worker_init_fn: Callable[[int], None] | None,
    index_queue: Any,
    result_queue: Any,
    done_event: Any,
    parent_pid: int,
) -> None:
    """The body of a worker process: serve index batches until told to stop."""
    global _worker_info
    try:
        _setup(worker_id, base_seed)
        _worker_info = WorkerInfo(worker_id, num_workers, base_seed + worker_id, dataset)
        where = f"in DataLoader worker process {worker_id}"
        init_error: ExceptionWrapper | None = None
        fetcher = None
        try:
            if worker_init_fn is not None:
                worker_init_fn(worker_id)
        except Exception as error:
            init_error = ExceptionWrapper(where, error)
        current_epoch, ended = -1, False
        while True:
            try:
                task = index_queue.get(timeout=POLL_SECONDS)
            except queue.Empty:
                if os.getppid() != parent_pid or done_event.is_set():
                    break  # the main process died or gave up on us without a goodbye
                continue
            if task is None:
                break
            epoch, number, index = task
            if done_event.is_set():
                continue
            if epoch != current_epoch:  # a new epoch (persistent workers): start over
                current_epoch, ended, fetcher = epoch, False, None
            if ended:
                continue
            result: Any
            if init_error is not None:
                result, init_error = init_error, None
            else:
                try:
                    if fetcher is None:
                        fetcher = fetcher_factory()
                    result = pack(fetcher(index))
                except StopIteration:
                    result, ended = IterationEnd(worker_id), True
                except Exception as error:
                    result = ExceptionWrapper(where, error)
            result_queue.put((epoch, number, _dumps(result, where)))
    except KeyboardInterrupt:
        pass  # the main process handles Ctrl-C; a worker just leaves
    if done_event.is_set():
        result_queue.cancel_join_thread()  # unread results must not keep this process alive
    result_queue.close()


def _setup(worker_id: int, base_seed: int) -> None:
    """One intra-op thread (a forked OpenMP runtime must not spawn a team), and seeds."""
    # Cold: once per worker process, which imports ember itself only after it started.
    from ember._ops.random import manual_seed
    from ember._threads import set_num_threads

    set_num_threads(1)
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))


def _dumps(result: Any, where: str) -> bytes:
    try:
        return pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as error:
        failure = RuntimeError(
            f"the batch could not be sent to the main process ({type(error).__name__}: {error}); "
            "workers return tensors, NumPy arrays, numbers, strings and picklable containers"
        )
        if isinstance(result, ExceptionWrapper):
            failure = RuntimeError(f"{result.exc_name} (unpicklable): {result.text}")
        return pickle.dumps(ExceptionWrapper(where, failure))


def loads(payload: bytes) -> Any:
    """The main process's side of `_dumps`."""
    return pickle.loads(payload)
