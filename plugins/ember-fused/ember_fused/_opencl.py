"""The opencl kernels: OpenCL C built by `ember_opencl.load_inline` at the first call on
each device (the device's program cache keeps the binary on disk), launched on the
current stream.

Rows run one work-item each, column sums one work-item per column: simple, and on a
device with many cores the row count (thousands at transformer shapes) fills it. Like
the cpu kernels, they take the float32, contiguous case and leave the rest to the
composite.
"""

from __future__ import annotations

from typing import Any

import ember
from ember import Tensor
from ember_fused import ops
from ember_fused._layout import fast, rows_cols

__all__ = ["KERNELS"]

SOURCE = r"""
__kernel void rms_norm_f32(__global float *y, __global const float *x,
                           __global const float *w, long rows, long cols, float eps) {
    const long r = get_global_id(0);
    if (r >= rows) return;
    __global const float *xr = x + r * cols;
    __global float *yr = y + r * cols;
    float squares = 0.0f;
    for (long c = 0; c < cols; c++) squares += xr[c] * xr[c];
    const float rstd = 1.0f / sqrt(squares / (float)cols + eps);
    for (long c = 0; c < cols; c++) yr[c] = xr[c] * rstd * w[c];
}

__kernel void rms_norm_backward_rows_f32(__global float *gx, __global float *rstd,
                                         __global const float *g, __global const float *x,
                                         __global const float *w, long rows, long cols,
                                         float eps) {
    const long r = get_global_id(0);
    if (r >= rows) return;
    __global const float *xr = x + r * cols;
    __global const float *gr = g + r * cols;
    float squares = 0.0f, dot = 0.0f;
    for (long c = 0; c < cols; c++) {
        squares += xr[c] * xr[c];
        dot += gr[c] * w[c] * xr[c];
    }
    const float s = 1.0f / sqrt(squares / (float)cols + eps);
    const float k = s * s * s * dot / (float)cols;
    rstd[r] = s;
    __global float *gxr = gx + r * cols;
    for (long c = 0; c < cols; c++) gxr[c] = s * gr[c] * w[c] - xr[c] * k;
}

__kernel void rms_norm_backward_weight_f32(__global float *gw, __global const float *rstd,
                                           __global const float *g, __global const float *x,
                                           long rows, long cols) {
    const long c = get_global_id(0);
    if (c >= cols) return;
    float total = 0.0f;
    for (long r = 0; r < rows; r++) total += g[r * cols + c] * x[r * cols + c] * rstd[r];
    gw[c] = total;
}

__kernel void bias_gelu_f32(__global float *y, __global const float *x,
                            __global const float *b, long count, long cols) {
    const long i = get_global_id(0);
    if (i >= count) return;
    const float u = x[i] + b[i % cols];
    y[i] = 0.5f * u * (1.0f + erf(u * 0.70710678118654752f));
}

__kernel void bias_gelu_backward_f32(__global float *gx, __global const float *g,
                                     __global const float *x, __global const float *b,
                                     long count, long cols) {
    const long i = get_global_id(0);
    if (i >= count) return;
    const float u = x[i] + b[i % cols];
    const float cdf = 0.5f * (1.0f + erf(u * 0.70710678118654752f));
    const float pdf = exp(-0.5f * u * u) * 0.39894228040143268f;
    gx[i] = g[i] * (cdf + u * pdf);
}

__kernel void column_sums_f32(__global float *out, __global const float *a, long rows,
                              long cols) {
    const long c = get_global_id(0);
    if (c >= cols) return;
    float total = 0.0f;
    for (long r = 0; r < rows; r++) total += a[r * cols + c];
    out[c] = total;
}
"""

_KERNEL_NAMES = (
    "rms_norm_f32", "rms_norm_backward_rows_f32", "rms_norm_backward_weight_f32",
    "bias_gelu_f32", "bias_gelu_backward_f32", "column_sums_f32",
)  # fmt: skip

_programs: dict[ember.device, Any] = {}


def _program(dev: ember.device) -> Any:
    program = _programs.get(dev)
    if program is None:
        import ember_opencl  # the opencl device's compiler; only needed once a kernel runs

        program = _programs[dev] = ember_opencl.load_inline(
            SOURCE, kernels=_KERNEL_NAMES, name="ember_fused", device=dev
        )
    return program


def rms_norm(x: Tensor, weight: Tensor, eps: float = 1e-6) -> Tensor:
    if not fast(x, weight):
        return ops.rms_norm.__wrapped__(x, weight, eps)
    y = ember.empty_like(x)
    rows, cols = rows_cols(x)
    if rows and cols:
        _program(x.device).rms_norm_f32(rows, y, x, weight, rows, cols, eps)
    return y


def rms_norm_backward(grad: Tensor, x: Tensor, weight: Tensor, eps: float) -> tuple[Tensor, Tensor]:
    if not fast(grad, x, weight):
        return ops.rms_norm_backward.__wrapped__(grad, x, weight, eps)
    grad_x, grad_weight = ember.empty_like(x), ember.zeros_like(weight)
    rows, cols = rows_cols(x)
    if rows and cols:
        program = _program(x.device)
        rstd = ember.empty(rows, device=x.device)
        program.rms_norm_backward_rows_f32(rows, grad_x, rstd, grad, x, weight, rows, cols, eps)
        program.rms_norm_backward_weight_f32(cols, grad_weight, rstd, grad, x, rows, cols)
    return grad_x, grad_weight


def bias_gelu(x: Tensor, bias: Tensor) -> Tensor:
    if not fast(x, bias):
        return ops.bias_gelu.__wrapped__(x, bias)
    y = ember.empty_like(x)
    if x.numel():
        _program(x.device).bias_gelu_f32(x.numel(), y, x, bias, x.numel(), x.shape[-1])
    return y


def bias_gelu_backward(grad: Tensor, x: Tensor, bias: Tensor) -> tuple[Tensor, Tensor]:
    if not fast(grad, x, bias):
        return ops.bias_gelu_backward.__wrapped__(grad, x, bias)
    grad_x, grad_bias = ember.empty_like(x), ember.zeros_like(bias)
    rows, cols = rows_cols(x)
    if rows and cols:
        program = _program(x.device)
        program.bias_gelu_backward_f32(x.numel(), grad_x, grad, x, bias, x.numel(), cols)
        program.column_sums_f32(cols, grad_bias, grad_x, rows, cols)
    return grad_x, grad_bias


#: (op, kernel, priority) for the opencl device
KERNELS = (
    ("fused::rms_norm", rms_norm, 0),
    ("fused::rms_norm_backward", rms_norm_backward, 0),
    ("fused::bias_gelu", bias_gelu, 0),
    ("fused::bias_gelu_backward", bias_gelu_backward, 0),
)
