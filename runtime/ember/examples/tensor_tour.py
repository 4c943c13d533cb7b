"""A short tour of tensor work on one device, printed as an interactive session.

Each step is a line of Python that is shown, run and (if it is an expression) followed by
its result, so what is printed is exactly what ran.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import ember
from ember._device import DeviceLike

__all__ = ["STEPS", "run"]

STEPS: tuple[str, ...] = (
    "a = ember.arange(6, dtype=ember.float32, device=dev).reshape(2, 3)",
    "a",
    "b = ember.tensor([10.0, 20.0, 30.0], device=dev)",
    "a + b  # broadcasting: (2, 3) with (3,)",
    "a * 2 - 1",
    "a.sum(dim=1)  # a reduction",
    "a.mean().item()",
    "a @ a.T  # matmul: (2, 3) @ (3, 2)",
    "t = a.T  # a view: same storage, strides swapped",
    "(t.shape, t.stride(), t.is_contiguous())",
    "t[0, 1] = -1.0  # writes through the view into a[1, 0]",
    "a",
    "a[:, 1:]  # slicing is a view too",
    "a[a > 2]  # a boolean mask gathers a copy",
)


def run(device: DeviceLike | None = None) -> None:
    """Print the tour on `device` (default: the default device), then one timing line."""
    dev = ember.get_default_device() if device is None else ember.device(device).placement
    print(f"Tensor tour on {dev}")
    namespace: dict[str, object] = {"ember": ember, "dev": dev}
    for line in STEPS:
        print(f">>> {line}")
        _run_line(line, namespace)
    sample = namespace["a"]
    assert isinstance(sample, ember.Tensor)
    print()
    print(_timing(sample))


def _run_line(line: str, namespace: dict[str, object]) -> None:
    try:
        code = compile(line, "<tensor tour>", "eval")
    except SyntaxError:  # an assignment: a statement, with nothing to show
        exec(compile(line, "<tensor tour>", "exec"), namespace)
        return
    print(repr(eval(code, namespace)))


def _timing(sample: ember.Tensor) -> str:
    """Per-op time of a tiny add and the rate of a square matmul, on `sample`'s device."""
    dev = sample.device
    x = sample.new_ones(16)
    y = sample.new_ones(16)
    add_us = _seconds_per_call(lambda: x + y, dev, 2000) * 1e6
    n = 256
    m = sample.new_ones(n, n)
    matmul_s = _seconds_per_call(lambda: m @ m, dev, 20)
    gflops = 2 * n**3 / matmul_s / 1e9
    return (
        f"timing on {dev}: x + y on 16 {sample.dtype.name} takes {add_us:.2f} us per op; "
        f"a {n}x{n} matmul runs at {gflops:.1f} GFLOP/s"
    )


def _seconds_per_call(step: Callable[[], object], dev: ember.device, repeat: int) -> float:
    step()  # warm-up: first-call costs (caches, lazy set-up) are not the steady state
    ember.synchronize(dev)
    start = time.perf_counter()
    for _ in range(repeat):
        step()
    ember.synchronize(dev)
    return (time.perf_counter() - start) / repeat
