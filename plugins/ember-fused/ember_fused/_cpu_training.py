"""cpu kernels for the training composites Ember lets a plugin fuse: layer_norm (forward and
backward), the GELU derivative and cross-entropy over class indices (forward and
backward), registered under `ember.plugins.ops`' names.

float32 runs one C pass per row (OpenMP across rows); other dtypes compute the same
formulas in ember ops and write the kernel's outputs, so every input stays correct.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import ember
from ember import Tensor
from ember.plugins import ops

__all__ = ["KERNELS"]

SOURCE = r"""
#include <math.h>
#include <stdint.h>
#include "elementwise_math.h"

/* Below this many elements a thread team costs more than it saves (the cpu device's
   EM_PARALLEL_GRAIN): small rows run on the calling thread. */
#define EM_FUSED_GRAIN 32768

/* Per row: mean, rstd = 1/sqrt(biased var + eps) (two passes over the row, as the
   composite's mean-then-var), y = (x - mean) * rstd * w + b; w and b may be NULL. */
void layer_norm_f32(float *y, float *mean, float *rstd, const float *x, const float *w,
                    const float *b, int64_t rows, int64_t cols, float eps) {
    #pragma omp parallel for schedule(static) if (rows * cols >= EM_FUSED_GRAIN)
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        float total = 0.0f;
        #pragma omp simd reduction(+ : total)
        for (int64_t c = 0; c < cols; c++) total += xr[c];
        const float m = total / (float)cols;
        float squares = 0.0f;
        #pragma omp simd reduction(+ : squares)
        for (int64_t c = 0; c < cols; c++) squares += (xr[c] - m) * (xr[c] - m);
        const float s = 1.0f / sqrtf(squares / (float)cols + eps);
        mean[r] = m;
        rstd[r] = s;
        if (w && b) {
            #pragma omp simd
            for (int64_t c = 0; c < cols; c++) yr[c] = (xr[c] - m) * s * w[c] + b[c];
        } else if (w) {
            #pragma omp simd
            for (int64_t c = 0; c < cols; c++) yr[c] = (xr[c] - m) * s * w[c];
        } else {
            #pragma omp simd
            for (int64_t c = 0; c < cols; c++) yr[c] = (xr[c] - m) * s + (b ? b[c] : 0.0f);
        }
    }
}

/* gx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)), gw = g * w, per row;
   gwt = sum over rows of g * xhat, gb = sum of g (either may be NULL). */
void layer_norm_backward_f32(float *gx, float *gwt, float *gb, const float *g, const float *x,
                             const float *mean, const float *rstd, const float *w,
                             int64_t rows, int64_t cols) {
    #pragma omp parallel for schedule(static) if (rows * cols >= EM_FUSED_GRAIN)
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols, *gr = g + r * cols;
        const float m = mean[r], s = rstd[r];
        float sum_gw = 0.0f, sum_gwx = 0.0f;
        #pragma omp simd reduction(+ : sum_gw, sum_gwx)
        for (int64_t c = 0; c < cols; c++) {
            const float gw = w ? gr[c] * w[c] : gr[c];
            sum_gw += gw;
            sum_gwx += gw * (xr[c] - m) * s;
        }
        const float a = sum_gw / (float)cols, k = sum_gwx / (float)cols;
        float *gxr = gx + r * cols;
        #pragma omp simd
        for (int64_t c = 0; c < cols; c++) {
            const float gw = w ? gr[c] * w[c] : gr[c];
            gxr[c] = s * (gw - a - (xr[c] - m) * s * k);
        }
    }
    if (!gwt && !gb) return;
    /* Columns in blocks, rows in order: each block's sums stay in registers and cache. */
    #pragma omp parallel for schedule(static) if (rows * cols >= EM_FUSED_GRAIN)
    for (int64_t c0 = 0; c0 < cols; c0 += 64) {
        const int64_t c1 = c0 + 64 < cols ? c0 + 64 : cols;
        float sw[64] = {0}, sb[64] = {0};
        for (int64_t r = 0; r < rows; r++) {
            const float *xr = x + r * cols, *gr = g + r * cols;
            const float m = mean[r], s = rstd[r];
            #pragma omp simd
            for (int64_t c = c0; c < c1; c++) {
                sw[c - c0] += gr[c] * (xr[c] - m) * s;
                sb[c - c0] += gr[c];
            }
        }
        for (int64_t c = c0; c < c1; c++) {
            if (gwt) gwt[c] = sw[c - c0];
            if (gb) gb[c] = sb[c - c0];
        }
    }
}

/* gx = g * (Phi(x) + x phi(x)), the exact GELU's derivative. */
#ifdef EM_HAVE_WIDE_VECTORS /* compute-bound math: 512-bit vectors (elementwise_math.h) */
#pragma GCC push_options
#pragma GCC target("prefer-vector-width=512")
#endif
void gelu_backward_f32(float *gx, const float *g, const float *x, int64_t n) {
    /* Blocks across threads, a simd loop within each (int counter: vectorises cleanly). */
    #pragma omp parallel for schedule(static) if (n >= EM_FUSED_GRAIN)
    for (int64_t start = 0; start < n; start += 4096) {
        const int count = (int)(n - start < 4096 ? n - start : 4096);
        const float *xs = x + start, *gs = g + start;
        float *out = gx + start;
        #pragma omp simd
        for (int i = 0; i < count; i++) {
            const float u = xs[i];
            float pdf;
            const float cdf = em_normal_cdf_pdf(u, &pdf);
            out[i] = gs[i] * (cdf + u * pdf);
        }
    }
}
#ifdef EM_HAVE_WIDE_VECTORS
#pragma GCC pop_options
#endif

/* Per row: lse = log(sum(exp(x))) (max-shifted), loss = lse - x[target]. */
void cross_entropy_f32(float *loss, float *lse, const float *x, const int64_t *target,
                       int64_t rows, int64_t cols) {
    #pragma omp parallel for schedule(static) if (rows * cols >= EM_FUSED_GRAIN)
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float peak = -INFINITY;
        #pragma omp simd reduction(max : peak)
        for (int64_t c = 0; c < cols; c++) peak = xr[c] > peak ? xr[c] : peak;
        if (isinf(peak)) peak = 0.0f;
        float total = 0.0f;
        #pragma omp simd reduction(+ : total)
        for (int64_t c = 0; c < cols; c++) total += em_expf(xr[c] - peak);
        lse[r] = logf(total) + peak;
        loss[r] = lse[r] - xr[target[r]];
    }
}

/* gx = (exp(x - lse) - onehot(target)) * grad_rows[r * step] * scale, per row. */
void cross_entropy_backward_f32(float *gx, const float *x, const int64_t *target,
                                const float *lse, const float *grad_rows, int64_t step,
                                float scale, int64_t rows, int64_t cols) {
    #pragma omp parallel for schedule(static) if (rows * cols >= EM_FUSED_GRAIN)
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *gr = gx + r * cols;
        const float l = lse[r], g = grad_rows[r * step] * scale;
        #pragma omp simd
        for (int64_t c = 0; c < cols; c++) gr[c] = em_expf(xr[c] - l) * g;
        gr[target[r]] -= g;
    }
}
"""

_FUNCTIONS = (
    "layer_norm_f32", "layer_norm_backward_f32", "gelu_backward_f32", "cross_entropy_f32",
    "cross_entropy_backward_f32",
)  # fmt: skip


@functools.cache
def _library() -> Any:
    import ember_cpu  # the cpu device's compiler; only needed once a cpu kernel runs

    return ember_cpu.load_inline(SOURCE, functions=_FUNCTIONS, name="ember_fused_training")


def _f32(*tensors: Tensor | None) -> bool:
    """float32 and dense from the storage's start (None passes: an absent operand)."""
    return all(
        t is None or (t.dtype == ember.float32 and t.is_contiguous() and t.storage_offset() == 0)
        for t in tensors
    )


def _ptr(lib: Any, t: Tensor | None) -> Any:
    return lib.ffi.NULL if t is None else lib.ptr(t)


def layer_norm(
    out: Tensor, mean: Tensor, rstd: Tensor, x: Tensor, weight: Tensor | None,
    bias: Tensor | None, eps: float,
) -> None:  # fmt: skip
    """The `layer_norm` kernel: x (rows, cols) contiguous; out, mean, rstd written."""
    rows, cols = x.shape
    if _f32(out, mean, rstd, x, weight, bias):
        lib = _library()
        lib.layer_norm_f32(
            lib.ptr(out), lib.ptr(mean), lib.ptr(rstd), lib.ptr(x), _ptr(lib, weight),
            _ptr(lib, bias), rows, cols, eps,
        )  # fmt: skip
        return
    row_mean = x.mean(-1, keepdim=True)
    row_rstd = ember.rsqrt(x.var(-1, correction=0, keepdim=True) + eps)
    y = (x - row_mean) * row_rstd
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    out.copy_(y)
    mean.copy_(row_mean.reshape(rows))
    rstd.copy_(row_rstd.reshape(rows))


def layer_norm_backward(
    grad_x: Tensor, grad_weight: Tensor | None, grad_bias: Tensor | None, grad: Tensor,
    x: Tensor, mean: Tensor, rstd: Tensor, weight: Tensor | None,
) -> None:  # fmt: skip
    """The `layer_norm_backward` kernel: every output it is given is overwritten."""
    rows, cols = x.shape
    if _f32(grad_x, grad_weight, grad_bias, grad, x, mean, rstd, weight):
        lib = _library()
        lib.layer_norm_backward_f32(
            lib.ptr(grad_x), _ptr(lib, grad_weight), _ptr(lib, grad_bias), lib.ptr(grad),
            lib.ptr(x), lib.ptr(mean), lib.ptr(rstd), _ptr(lib, weight), rows, cols,
        )  # fmt: skip
        return
    s = rstd.reshape(rows, 1)
    xhat = (x - mean.reshape(rows, 1)) * s
    gw = grad if weight is None else grad * weight
    centred = gw - gw.mean(-1, keepdim=True)
    grad_x.copy_((centred - xhat * (gw * xhat).mean(-1, keepdim=True)) * s)
    if grad_weight is not None:
        grad_weight.copy_((grad * xhat).sum(0))
    if grad_bias is not None:
        grad_bias.copy_(grad.sum(0))


_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def gelu_backward(grad_x: Tensor, grad: Tensor, x: Tensor) -> None:
    """The `gelu_backward` kernel: grad_x = grad * (Phi(x) + x phi(x))."""
    if _f32(grad_x, grad, x):
        if x.numel():
            lib = _library()
            lib.gelu_backward_f32(lib.ptr(grad_x), lib.ptr(grad), lib.ptr(x), x.numel())
        return
    cdf = 0.5 * (1.0 + ember.erf(x * _SQRT_HALF))
    pdf = ember.exp(-0.5 * x * x) * _INV_SQRT_2PI
    grad_x.copy_(grad * (cdf + x * pdf))


def cross_entropy(losses: Tensor, lse: Tensor, x: Tensor, target: Tensor) -> None:
    """The `cross_entropy` kernel: each row's loss and log-sum-exp."""
    rows, cols = x.shape
    if _f32(losses, lse, x) and target.is_contiguous() and target.storage_offset() == 0:
        lib = _library()
        lib.cross_entropy_f32(
            lib.ptr(losses), lib.ptr(lse), lib.ptr(x), lib.ptr(target), rows, cols
        )
        return
    row_lse = x.logsumexp(1)
    lse.copy_(row_lse)
    losses.copy_(row_lse - x.gather(1, target.unsqueeze(1)).squeeze(1))


def cross_entropy_backward(
    grad_x: Tensor, x: Tensor, target: Tensor, lse: Tensor, grad_rows: Tensor, scale: float
) -> None:
    """The `cross_entropy_backward` kernel: (softmax - one-hot) times each row's gradient."""
    rows, cols = x.shape
    dense = target.is_contiguous() and target.storage_offset() == 0
    if _f32(grad_x, x, lse, grad_rows) and dense:
        lib = _library()
        lib.cross_entropy_backward_f32(
            lib.ptr(grad_x), lib.ptr(x), lib.ptr(target), lib.ptr(lse), lib.ptr(grad_rows),
            1 if grad_rows.numel() == rows else 0, scale, rows, cols,
        )  # fmt: skip
        return
    probabilities = (x - lse.unsqueeze(1)).exp()
    one_hot = ember.zeros_like(x).scatter_(1, target.unsqueeze(1), 1.0)
    grad_x.copy_((probabilities - one_hot) * (grad_rows.unsqueeze(1) * scale))


#: (op, kernel, priority) for the cpu device
KERNELS: tuple[tuple[str, Callable[..., None], int], ...] = (
    (ops.LAYER_NORM, layer_norm, 0),
    (ops.LAYER_NORM_BACKWARD, layer_norm_backward, 0),
    (ops.GELU_BACKWARD, gelu_backward, 0),
    (ops.CROSS_ENTROPY, cross_entropy, 0),
    (ops.CROSS_ENTROPY_BACKWARD, cross_entropy_backward, 0),
)
