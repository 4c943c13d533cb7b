"""The cpu kernels: C compiled by `ember_cpu.load_inline` at the first call, cached on disk.

Each kernel takes the float32, contiguous case (rows of the last dim, OpenMP across rows)
and hands anything else to the op's composite, so that every input stays correct.
"""

from __future__ import annotations

import functools
from typing import Any

import ember
from ember import Tensor
from ember_fused import ops
from ember_fused._layout import fast, rows_cols

__all__ = ["KERNELS"]

# elementwise_math.h is the cpu device's vectorisable float32 math (libm's expf and erff
# keep a loop scalar); load_inline puts it on the include path.
SOURCE = r"""
#include <math.h>
#include <stdint.h>
#include "elementwise_math.h"

/* Below this many elements a thread team costs more than it saves (the cpu device's
   EM_PARALLEL_GRAIN): small rows run on the calling thread. */
#define EM_FUSED_GRAIN 32768

/* y = x * rstd * w per row; rstd = 1 / sqrt(mean(x^2) + eps). */
void rms_norm_f32(float *y, const float *x, const float *w, int64_t rows, int64_t cols,
                  float eps) {
    #pragma omp parallel for schedule(static) if (rows * cols >= EM_FUSED_GRAIN)
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        float squares = 0.0f;
        #pragma omp simd reduction(+ : squares)
        for (int64_t c = 0; c < cols; c++) squares += xr[c] * xr[c];
        const float rstd = 1.0f / sqrtf(squares / (float)cols + eps);
        #pragma omp simd
        for (int64_t c = 0; c < cols; c++) yr[c] = xr[c] * rstd * w[c];
    }
}

/* gx = rstd * g*w - x * rstd^3 * mean(g*w*x) per row; gw = sum over rows of g * x * rstd.
   rstd is a caller's scratch row of `rows` floats. */
void rms_norm_backward_f32(float *gx, float *gw, float *rstd, const float *g, const float *x,
                           const float *w, int64_t rows, int64_t cols, float eps) {
    #pragma omp parallel for schedule(static) if (rows * cols >= EM_FUSED_GRAIN)
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols, *gr = g + r * cols;
        float squares = 0.0f, dot = 0.0f;
        #pragma omp simd reduction(+ : squares, dot)
        for (int64_t c = 0; c < cols; c++) {
            squares += xr[c] * xr[c];
            dot += gr[c] * w[c] * xr[c];
        }
        const float s = 1.0f / sqrtf(squares / (float)cols + eps);
        const float k = s * s * s * dot / (float)cols;
        rstd[r] = s;
        float *gxr = gx + r * cols;
        #pragma omp simd
        for (int64_t c = 0; c < cols; c++) gxr[c] = s * gr[c] * w[c] - xr[c] * k;
    }
    /* Columns in blocks, rows in order: each block's sums stay in registers and cache. */
    #pragma omp parallel for schedule(static) if (rows * cols >= EM_FUSED_GRAIN)
    for (int64_t c0 = 0; c0 < cols; c0 += 64) {
        const int64_t c1 = c0 + 64 < cols ? c0 + 64 : cols;
        float sums[64] = {0};
        for (int64_t r = 0; r < rows; r++) {
            const float *xr = x + r * cols, *gr = g + r * cols;
            const float s = rstd[r];
            #pragma omp simd
            for (int64_t c = c0; c < c1; c++) sums[c - c0] += gr[c] * xr[c] * s;
        }
        for (int64_t c = c0; c < c1; c++) gw[c] = sums[c - c0];
    }
}

/* The exact GELU of u = x + b: 0.5 u (1 + erf(u / sqrt 2)). */
#ifdef EM_HAVE_WIDE_VECTORS /* compute-bound math: 512-bit vectors (elementwise_math.h) */
#pragma GCC push_options
#pragma GCC target("prefer-vector-width=512")
#endif
void bias_gelu_f32(float *y, const float *x, const float *b, int64_t rows, int64_t cols) {
    #pragma omp parallel for schedule(static) if (rows * cols >= EM_FUSED_GRAIN)
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        #pragma omp simd
        for (int64_t c = 0; c < cols; c++) {
            const float u = xr[c] + b[c];
            yr[c] = u * em_normal_cdf(u);
        }
    }
}
#ifdef EM_HAVE_WIDE_VECTORS
#pragma GCC pop_options
#endif

/* gx = g * (Phi(u) + u phi(u)); gb = sum over rows of gx. */
#ifdef EM_HAVE_WIDE_VECTORS /* compute-bound math: 512-bit vectors (elementwise_math.h) */
#pragma GCC push_options
#pragma GCC target("prefer-vector-width=512")
#endif
void bias_gelu_backward_f32(float *gx, float *gb, const float *g, const float *x,
                            const float *b, int64_t rows, int64_t cols) {
    #pragma omp parallel for schedule(static) if (rows * cols >= EM_FUSED_GRAIN)
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols, *gr = g + r * cols;
        float *gxr = gx + r * cols;
        #pragma omp simd
        for (int64_t c = 0; c < cols; c++) {
            const float u = xr[c] + b[c];
            float pdf;
            const float cdf = em_normal_cdf_pdf(u, &pdf);
            gxr[c] = gr[c] * (cdf + u * pdf);
        }
    }
    #pragma omp parallel for schedule(static) if (rows * cols >= EM_FUSED_GRAIN)
    for (int64_t c0 = 0; c0 < cols; c0 += 64) {
        const int64_t c1 = c0 + 64 < cols ? c0 + 64 : cols;
        float sums[64] = {0};
        for (int64_t r = 0; r < rows; r++) {
            const float *gxr = gx + r * cols;
            #pragma omp simd
            for (int64_t c = c0; c < c1; c++) sums[c - c0] += gxr[c];
        }
        for (int64_t c = c0; c < c1; c++) gb[c] = sums[c - c0];
    }
}
#ifdef EM_HAVE_WIDE_VECTORS
#pragma GCC pop_options
#endif

/* log(sum(exp(x))) per row in two passes (the maximum, then the shifted sum) instead of
   the composite's six ops; an infinite maximum shifts by 0, as the composite does. */
void logsumexp_f32(float *out, const float *x, int64_t rows, int64_t cols) {
    #pragma omp parallel for schedule(static) if (rows * cols >= EM_FUSED_GRAIN)
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float peak = -INFINITY;
        int nan = 0;
        #pragma omp simd reduction(| : nan) reduction(max : peak)
        for (int64_t c = 0; c < cols; c++) {
            nan |= xr[c] != xr[c];
            peak = xr[c] > peak ? xr[c] : peak;
        }
        if (nan) {
            out[r] = NAN;
            continue;
        }
        if (isinf(peak)) peak = 0.0f;
        float total = 0.0f;
        #pragma omp simd reduction(+ : total)
        for (int64_t c = 0; c < cols; c++) total += em_expf(xr[c] - peak);
        out[r] = logf(total) + peak;
    }
}
"""

_FUNCTIONS = (
    "rms_norm_f32", "rms_norm_backward_f32", "bias_gelu_f32", "bias_gelu_backward_f32",
    "logsumexp_f32",
)  # fmt: skip


@functools.cache
def _library() -> Any:
    import ember_cpu  # the cpu device's compiler; only needed once a cpu kernel runs

    return ember_cpu.load_inline(SOURCE, functions=_FUNCTIONS, name="ember_fused")


def rms_norm(x: Tensor, weight: Tensor, eps: float = 1e-6) -> Tensor:
    if not fast(x, weight):
        return ops.rms_norm.__wrapped__(x, weight, eps)
    lib, y = _library(), ember.empty_like(x)
    rows, cols = rows_cols(x)
    if rows and cols:
        lib.rms_norm_f32(lib.ptr(y), lib.ptr(x), lib.ptr(weight), rows, cols, eps)
    return y


def rms_norm_backward(grad: Tensor, x: Tensor, weight: Tensor, eps: float) -> tuple[Tensor, Tensor]:
    if not fast(grad, x, weight):
        return ops.rms_norm_backward.__wrapped__(grad, x, weight, eps)
    lib, (rows, cols) = _library(), rows_cols(x)
    grad_x, grad_weight = ember.empty_like(x), ember.zeros_like(weight)
    rstd = ember.empty(max(rows, 1))
    if rows and cols:
        lib.rms_norm_backward_f32(
            lib.ptr(grad_x), lib.ptr(grad_weight), lib.ptr(rstd), lib.ptr(grad), lib.ptr(x),
            lib.ptr(weight), rows, cols, eps,
        )  # fmt: skip
    return grad_x, grad_weight


def bias_gelu(x: Tensor, bias: Tensor) -> Tensor:
    if not fast(x, bias):
        return ops.bias_gelu.__wrapped__(x, bias)
    lib, y = _library(), ember.empty_like(x)
    rows, cols = rows_cols(x)
    if rows and cols:
        lib.bias_gelu_f32(lib.ptr(y), lib.ptr(x), lib.ptr(bias), rows, cols)
    return y


def bias_gelu_backward(grad: Tensor, x: Tensor, bias: Tensor) -> tuple[Tensor, Tensor]:
    if not fast(grad, x, bias):
        return ops.bias_gelu_backward.__wrapped__(grad, x, bias)
    lib = _library()
    grad_x, grad_bias = ember.empty_like(x), ember.zeros_like(bias)
    rows, cols = rows_cols(x)
    if rows and cols:
        lib.bias_gelu_backward_f32(
            lib.ptr(grad_x), lib.ptr(grad_bias), lib.ptr(grad), lib.ptr(x), lib.ptr(bias),
            rows, cols,
        )  # fmt: skip
    return grad_x, grad_bias


def logsumexp(out: Tensor, a: Tensor, dims: tuple[int, ...]) -> None:
    """The cpu `logsumexp` kernel (out in keepdim form): fused over the last dim of a
    float32 tensor, the composite's formula in ember ops otherwise."""
    if a.numel() == 0:  # sums over nothing: log(0)
        out.fill_(float("-inf"))
        return
    if fast(a, out) and a.ndim and tuple(dims) == (a.ndim - 1,):
        lib = _library()
        rows, cols = rows_cols(a)
        if rows and cols:
            lib.logsumexp_f32(lib.ptr(out), lib.ptr(a), rows, cols)
            return
    peak = a.amax(dims, keepdim=True)
    peak = ember.where(peak.abs() == float("inf"), 0.0, peak)
    out.copy_((a - peak).exp().sum(dims, keepdim=True).log() + peak)


#: (op, kernel, priority) for the cpu device
KERNELS = (
    ("fused::rms_norm", rms_norm, 0),
    ("fused::rms_norm_backward", rms_norm_backward, 0),
    ("fused::bias_gelu", bias_gelu, 0),
    ("fused::bias_gelu_backward", bias_gelu_backward, 0),
    # Above the composite cpu runs otherwise: an explicit override, not a conflict.
    ("logsumexp", logsumexp, 1),
)
