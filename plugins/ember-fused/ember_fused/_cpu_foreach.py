"""Multi-tensor cpu kernels for Ember's `foreach_norm` and `foreach_mul_` (PyTorch's
`_foreach_norm` and `_foreach_mul_`, behind `clip_grad_norm_`): one C call covers every
tensor of the list, one pass over each.

float32 runs in C, the sums of a norm in float64 (a norm of a million float32 squares
keeps its float32 digits); other dtypes run the per-tensor formulas in ember ops.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import ember
from ember import Tensor
from ember.plugins import ops

__all__ = ["KERNELS"]

SOURCE = r"""
#include <math.h>
#include <stdint.h>

/* Below this many elements in all a thread team costs more than it saves. */
#define EM_FUSED_GRAIN 32768

/* out[t] = the ord-norm of tensor t (ord 1, 2, or 0 standing for inf). */
void foreach_norm_f32(float *out, const int64_t *data, const int64_t *sizes, int64_t count,
                      int64_t total, int ord) {
    #pragma omp parallel for schedule(dynamic, 1) if (total >= EM_FUSED_GRAIN)
    for (int64_t t = 0; t < count; t++) {
        const float *x = (const float *)(intptr_t)data[t];
        const int64_t n = sizes[t];
        if (ord == 0) {
            float peak = 0.0f;
            int nan = 0;
            #pragma omp simd reduction(max : peak) reduction(| : nan)
            for (int64_t i = 0; i < n; i++) {
                const float a = fabsf(x[i]);
                peak = a > peak ? a : peak;
                nan |= x[i] != x[i];
            }
            out[t] = nan ? NAN : peak;
        } else if (ord == 1) {
            double sum = 0.0;
            #pragma omp simd reduction(+ : sum)
            for (int64_t i = 0; i < n; i++) sum += fabsf(x[i]);
            out[t] = (float)sum;
        } else {
            double sum = 0.0;
            #pragma omp simd reduction(+ : sum)
            for (int64_t i = 0; i < n; i++) sum += (double)x[i] * (double)x[i];
            out[t] = (float)sqrt(sum);
        }
    }
}

/* Every tensor times *scalar, in place. */
void foreach_mul_f32(const int64_t *data, const int64_t *sizes, int64_t count, int64_t total,
                     const float *scalar) {
    const float s = *scalar;
    #pragma omp parallel for schedule(dynamic, 1) if (total >= EM_FUSED_GRAIN)
    for (int64_t t = 0; t < count; t++) {
        float *x = (float *)(intptr_t)data[t];
        const int64_t n = sizes[t];
        #pragma omp simd
        for (int64_t i = 0; i < n; i++) x[i] *= s;
    }
}
"""

_FUNCTIONS = ("foreach_norm_f32", "foreach_mul_f32")
# The C's code for each order.
_ORDS = {1.0: 1, 2.0: 2, math.inf: 0}


@functools.cache
def _library() -> Any:
    import ember_cpu  # the cpu device's compiler; only needed once a cpu kernel runs

    return ember_cpu.load_inline(SOURCE, functions=_FUNCTIONS, name="ember_fused_foreach")


def _dense_f32(tensors: Sequence[Tensor]) -> bool:
    return all(t.dtype == ember.float32 and t.is_contiguous() for t in tensors)


def _lists(lib: Any, tensors: Sequence[Tensor]) -> tuple[Any, Any, int]:
    sizes = [t.numel() for t in tensors]
    ffi = lib.ffi
    return (
        ffi.new("int64_t[]", [t.data_ptr() for t in tensors]),
        ffi.new("int64_t[]", sizes),
        sum(sizes),
    )


def foreach_norm(out: Tensor, tensors: Sequence[Tensor], ord: float) -> None:
    """The `foreach_norm` kernel: out[i] = the ord-norm of tensors[i]."""
    code = _ORDS.get(float(ord))
    if code is not None and out.dtype == ember.float32 and _dense_f32(tensors):
        lib = _library()
        data, sizes, total = _lists(lib, tensors)
        lib.foreach_norm_f32(lib.ptr(out), data, sizes, len(tensors), total, code)
        return
    with ember.no_grad():
        for i, t in enumerate(tensors):
            out[i] = ember.linalg.vector_norm(t, ord).to(out.dtype)


def foreach_mul_(tensors: Sequence[Tensor], scalar: Tensor) -> None:
    """The `foreach_mul_` kernel: every tensor multiplied by the one-element scalar."""
    if scalar.dtype == ember.float32 and _dense_f32(tensors):
        lib = _library()
        data, sizes, total = _lists(lib, tensors)
        lib.foreach_mul_f32(data, sizes, len(tensors), total, lib.ptr(scalar))
        return
    with ember.no_grad():
        for t in tensors:
            t.mul_(scalar.reshape(()).to(t.dtype))


#: (op, kernel, priority) for the cpu device
KERNELS: tuple[tuple[str, Callable[..., None], int], ...] = (
    (ops.FOREACH_NORM, foreach_norm, 0),
    (ops.FOREACH_MUL_, foreach_mul_, 0),
)
