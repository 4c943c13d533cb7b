"""Ember's opencl `a + b` against a hand-written float4 kernel, same PoCL device, one run.

    python devices/opencl/benchmarks/elementwise_bandwidth.py [--n 16777216]

Prints GB/s (3 * 4 * n bytes moved, best device time of several runs from OpenCL
profiling events), the host overhead per op for a 1-element `a + b` (µs), and the
first-build and first-launch times of a fresh program.
"""

from __future__ import annotations

import argparse
import time
import uuid

import numpy as np
import pyopencl as cl

import ember
from ember_opencl import _launch, _programs, profiling
from ember_opencl.backend import BACKEND

FLOAT4 = """
__kernel void add4(__global float4* o, __global const float4* a, __global const float4* b) {
    const size_t i = get_global_id(0);
    o[i] = a[i] + b[i];
}
"""


def _gbps(n: int, seconds: float) -> float:
    return 3 * 4 * n / seconds / 1e9


def hand_written(dev: ember.device, n: int, reps: int) -> float:
    queue = _launch.queue_for(dev)
    ctx = queue.context
    a = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * n)
    b = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * n)
    o = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * n)
    k = cl.Kernel(cl.Program(ctx, FLOAT4).build(), "add4")
    k.set_args(o, a, b)
    best = float("inf")
    for _ in range(reps):
        event = cl.enqueue_nd_range_kernel(queue, k, (n // 4,), None)
        event.wait()
        best = min(best, (event.profile.end - event.profile.start) * 1e-9)
    return _gbps(n, best)


def ember_add(dev: ember.device, n: int, reps: int) -> float:
    a = ember.ones(n, device=dev)
    b = ember.ones(n, device=dev)
    out = ember.empty(n, device=dev)
    ember.add(a, b, out=out)
    ember.synchronize(dev)
    best = float("inf")
    for _ in range(reps):
        with profiling.timeline() as tl:
            ember.add(a, b, out=out)
        (span,) = tl.spans()
        best = min(best, (span.device_end_ns - span.device_start_ns) * 1e-9)
    np.testing.assert_array_equal(out[:4].cpu().numpy(), [2, 2, 2, 2])
    return _gbps(n, best)


def overhead_us(device: str, reps: int = 20000) -> float:
    a = ember.ones(1, device=device)
    b = ember.ones(1, device=device)
    for _ in range(1000):
        a + b
    ember.synchronize(device)
    start = time.perf_counter()
    for _ in range(reps):
        a + b
    elapsed = time.perf_counter() - start
    ember.synchronize(device)
    return elapsed / reps * 1e6


def build_times(dev: ember.device) -> tuple[float, float]:
    source = (
        f"__kernel void fresh(__global float* o) {{ o[get_global_id(0)] += 1; }} // {uuid.uuid4()}"
    )
    start = time.perf_counter()
    k = _launch.kernel(dev, source, "fresh")
    built = time.perf_counter()
    t = ember.zeros(64, device=dev)
    _launch.launch(dev, k, (64,), [t.untyped_storage().handle], (64,)).wait()
    return built - start, time.perf_counter() - built


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1 << 24)
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    dev = ember.device("opencl:0")
    print(f"device: {BACKEND.cl_device(0).name}")
    reference = hand_written(dev, args.n, args.reps)
    ours = ember_add(dev, args.n, args.reps)
    print(
        f"a + b, {args.n} float32: float4 kernel {reference:.1f} GB/s, ember {ours:.1f} GB/s "
        f"({ours / reference:.2f}x)"
    )
    cpu, opencl = overhead_us("cpu"), overhead_us("opencl:0")
    print(
        f"host time per 1-element a + b: cpu {cpu:.2f} us, opencl {opencl:.2f} us "
        f"({opencl / cpu:.2f}x)"
    )
    build, first = build_times(dev)
    print(
        f"fresh program: build {build * 1e3:.0f} ms (incl. binary for the disk cache), "
        f"first launch {first * 1e3:.1f} ms; cache {_programs.cache_dir()}"
    )


if __name__ == "__main__":
    main()
