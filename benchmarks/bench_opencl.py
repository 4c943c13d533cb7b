"""The opencl cases: Ember's opencl device next to plain pyopencl on the same device.

A group times several statements on the same inputs in alternating rounds; its rows each
compare one of Ember's figures with one reference (a pyopencl baseline, or Ember's CPU
device for the small-op overhead) and may carry the issue's target ratio. Device work is
timed properly: every sample starts on an idle device, and a synchronized statement's
clock waits for the device (`ember.synchronize` / `queue.finish()`) before it reads the
time, so each sample's span covers the work its calls enqueued.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np

from benchmarks.bench_core import Unit

__all__ = ["GROUPS", "Group", "Row", "Side", "Timed"]

Side = Literal["ember", "pyopencl", "cpu"]

_N: Final = 16 * 1024 * 1024
_F32: Final = 4


@dataclass(frozen=True)
class Timed:
    """One statement timed on one side, and how to read its result back for the check.

    `result` is an expression over the namespace and `_`, the statement's value, that gives
    a NumPy array. `synchronized`: the clock waits for the side's device, so the figure
    includes the device's work; otherwise only the host's enqueueing is timed (each sample
    still starts on an idle device).
    """

    key: str
    side: Side
    label: str
    statement: str
    result: str
    synchronized: bool = True


@dataclass(frozen=True)
class Row:
    """One line of the table: Ember's `measured` against `reference` (keys of `Timed`)."""

    name: str
    label: str
    measured: str
    reference: str
    min_ratio: float | None = None


@dataclass(frozen=True)
class Group:
    """Statements timed together in alternating rounds on the same inputs."""

    name: str
    unit: Unit
    work: float  # bytes read + written per call (GB/s); unused for us/op
    make_inputs: Callable[[np.random.Generator], dict[str, np.ndarray]]
    expected: Callable[[dict[str, np.ndarray]], np.ndarray]
    timed: tuple[Timed, ...]
    rows: tuple[Row, ...]
    rtol: float = 1e-5
    atol: float = 1e-6


def _pair(size: int) -> Callable[[np.random.Generator], dict[str, np.ndarray]]:
    def make(rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {name: rng.uniform(-1, 1, size=size).astype(np.float32) for name in "ab"}

    return make


def _sum(inputs: dict[str, np.ndarray]) -> np.ndarray:
    return np.asarray(inputs["a"].sum(dtype=np.float64), dtype=np.float32)


def _add(inputs: dict[str, np.ndarray]) -> np.ndarray:
    return inputs["a"] + inputs["b"]


_ELEMENTWISE = Group(
    "elementwise",
    "GB/s",
    3 * _N * _F32,
    _pair(_N),
    _add,
    (
        Timed("add_out", "ember", "add(a, b, out=c)", "ember.add(a, b, out=c)", "_.cpu().numpy()"),
        Timed("add", "ember", "a + b", "a + b", "_.cpu().numpy()"),
        Timed("float4", "pyopencl", "float4 kernel", "add4()", "read(c_ref)"),
        Timed("array", "pyopencl", "pyopencl.array a+b", "a_array + b_array", "read(_)"),
    ),
    (
        Row("ocl_add_out", "add 16M  out=", "add_out", "float4", 0.8),
        Row("ocl_add", "add 16M  a + b", "add", "float4", 0.8),
        Row("ocl_add_array", "add 16M  a + b", "add", "array"),
    ),
)

_REDUCTION = Group(
    "reduction",
    "GB/s",
    _N * _F32,
    _pair(_N),
    _sum,
    (
        Timed("sum", "ember", "a.sum()", "a.sum()", "_.cpu().numpy()"),
        Timed(
            "reduction_kernel", "pyopencl", "ReductionKernel", "reduction_sum(a_array)", "read(_)"
        ),
        Timed("chunked", "pyopencl", "chunked 2-pass kernel", "chunked_sum()", "read(total)"),
    ),
    (
        Row("ocl_sum", "sum 16M", "sum", "reduction_kernel", 10.0),
        Row("ocl_sum_chunked", "sum 16M", "sum", "chunked"),
    ),
    # Float32 partial sums in different orders; a lost chunk would be off by far more.
    rtol=1e-3,
    atol=1e-2,
)

_SMALL = Group(
    "small",
    "us/op",
    0,
    _pair(1),
    _add,
    (
        Timed("enqueue", "ember", "a + b, enqueue", "a + b", "_.cpu().numpy()", synchronized=False),
        Timed("synchronized", "ember", "a + b, synchronized", "a + b", "_.cpu().numpy()"),
        Timed("cpu", "cpu", "cpu device a + b", "a_cpu + b_cpu", "_.numpy()"),
        Timed("raw", "pyopencl", "pyopencl enqueue", "add1()", "read(c_ref)", synchronized=False),
    ),
    (
        # The host's cost per op while it runs ahead of the device: what the issue bounds.
        Row("ocl_add_small", "add 1 elem  a + b", "enqueue", "cpu", 0.5),
        Row("ocl_add_small_sync", "add 1 elem  a + b", "synchronized", "cpu"),
        # The floor: enqueueing a prebuilt 1-element kernel whose arguments are already set.
        Row("ocl_add_small_floor", "add 1 elem  a + b", "enqueue", "raw"),
    ),
)

GROUPS: Final[tuple[Group, ...]] = (_ELEMENTWISE, _REDUCTION, _SMALL)
