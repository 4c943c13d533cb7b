"""Plain pyopencl on the device Ember's `opencl:0` uses: the references of the opencl suite.

Hand-written kernels (a float4 `a + b`, a chunked two-pass sum) show what the device can do
with OpenCL C written for it; `pyopencl.array` and `ReductionKernel` are what a pyopencl
user gets without writing a kernel. Everything lives in its own context and in-order queue,
as a separate program would, with profiling off (Ember's queues have it on).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np

__all__ = ["Baselines", "make_baselines"]

_ADD: Final = """
__kernel void add_float4(__global const float4 *a, __global const float4 *b,
                         __global float4 *c) {
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i];
}

__kernel void add_float(__global const float *a, __global const float *b, __global float *c) {
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i];
}
"""

# Pass one: each work-item sums one contiguous chunk with float4 loads, in four independent
# accumulators so the adds pipeline; pass two: one work-item adds the partial sums.
_CHUNKED_SUM: Final = """
__kernel void partial_sums(__global const float4 *x, __global float *partial,
                           const long n4, const long chunk4) {
    long begin = (long)get_global_id(0) * chunk4;
    long end = min(begin + chunk4, n4);
    float4 s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    long i = begin;
    for (; i + 4 <= end; i += 4) {
        s0 += x[i];
        s1 += x[i + 1];
        s2 += x[i + 2];
        s3 += x[i + 3];
    }
    for (; i < end; ++i) s0 += x[i];
    float4 s = (s0 + s1) + (s2 + s3);
    partial[get_global_id(0)] = (s.x + s.y) + (s.z + s.w);
}

__kernel void final_sum(__global const float *partial, __global float *out, const int count) {
    float s = 0.0f;
    for (int i = 0; i < count; ++i) s += partial[i];
    out[0] = s;
}
"""

_CHUNKS: Final = 256  # work-items of pass one: enough to spread over every core


@dataclass
class Baselines:
    """The pyopencl objects the statements use; `finish()` waits for the queue."""

    queue: Any
    namespace: dict[str, Any]

    def finish(self) -> None:
        """Block until everything enqueued on the baselines' queue has completed."""
        self.queue.finish()


def make_baselines(cl_device: Any, a: np.ndarray, b: np.ndarray) -> Baselines:
    """Inputs `a`, `b` (contiguous float32 of one length) on `cl_device`.

    The namespace holds `add4()` (the float4 kernel into `c_ref`; the length must be a multiple
    of 4), `add1()` (the same with one float per work-item: the floor of a small op),
    `a_array + b_array` (`pyopencl.array`), `reduction_sum(a_array)` (`ReductionKernel`),
    `chunked_sum()` (into `total`), and `read(array)` to bring a result back to the host.
    """
    import pyopencl as cl
    import pyopencl.array as cl_array

    if a.dtype != np.float32 or b.dtype != np.float32 or b.shape != a.shape:
        raise ValueError("the baselines need two float32 arrays of one length")
    context = cl.Context([cl_device])
    queue = cl.CommandQueue(context)
    a_array = cl_array.to_device(queue, a)
    b_array = cl_array.to_device(queue, b)
    c_array = cl_array.empty_like(a_array)
    n4 = a.size // 4

    add_program = cl.Program(context, _ADD).build()
    add_kernel = add_program.add_float4
    add_kernel.set_args(a_array.data, b_array.data, c_array.data)
    scalar_kernel = add_program.add_float
    scalar_kernel.set_args(a_array.data, b_array.data, c_array.data)

    sum_program = cl.Program(context, _CHUNKED_SUM).build()
    partial = cl_array.empty(queue, _CHUNKS, np.float32)
    total = cl_array.empty(queue, (), np.float32)
    pass_one = sum_program.partial_sums
    pass_one.set_args(a_array.data, partial.data, np.int64(n4), np.int64(-(-n4 // _CHUNKS)))
    pass_two = sum_program.final_sum
    pass_two.set_args(partial.data, total.data, np.int32(_CHUNKS))

    reduction_sum = _reduction_sum(context)

    def add4() -> None:
        if a.size % 4:
            raise ValueError(f"add4 needs a length divisible by 4, not {a.size}")
        cl.enqueue_nd_range_kernel(queue, add_kernel, (n4,), None)

    def add1() -> None:
        cl.enqueue_nd_range_kernel(queue, scalar_kernel, (a.size,), None)

    def chunked_sum() -> None:
        cl.enqueue_nd_range_kernel(queue, pass_one, (_CHUNKS,), None)
        cl.enqueue_nd_range_kernel(queue, pass_two, (1,), (1,))

    def read(array: Any) -> np.ndarray:
        return np.asarray(array.get(queue=queue))

    queue.finish()
    # A kernel argument does not keep its buffer alive: every buffer stays referenced here.
    namespace = {
        "a_array": a_array,
        "b_array": b_array,
        "c_ref": c_array,
        "partial": partial,
        "total": total,
        "add4": add4,
        "add1": add1,
        "chunked_sum": chunked_sum,
        "reduction_sum": reduction_sum,
        "read": read,
    }
    return Baselines(queue, namespace)


def _reduction_sum(context: Any) -> Any:
    """`ReductionKernel` summing float32; without Mako, a stand-in that raises why."""
    try:
        from pyopencl.reduction import ReductionKernel
    except ImportError as error:  # pyopencl's templated kernels need Mako (`pip install mako`)
        message = f"pyopencl.reduction needs Mako: {error}".splitlines()[0]

        def unavailable(*_: Any) -> Any:
            raise ImportError(message)

        return unavailable
    return ReductionKernel(
        context,
        np.float32,
        neutral="0",
        reduce_expr="a+b",
        map_expr="x[i]",
        arguments="__global const float *x",
    )
