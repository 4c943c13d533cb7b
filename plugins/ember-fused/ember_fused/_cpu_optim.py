"""A multi-tensor cpu kernel for Ember's fusable `adam_step` (Adam and AdamW, PyTorch's
`foreach` path): one C call updates every parameter of a group, one pass over each.

It follows the order of operations of Ember's per-tensor loop (optim/adam.py), with the
same float32 roundings of the Python scalars and no fused multiply-adds, so both paths
give the same bits. Other dtypes run that loop's formulas in ember ops.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import ember
from ember import Tensor
from ember.plugins import ops

__all__ = ["KERNELS"]

SOURCE = r"""
#include <math.h>
#include <stdint.h>

/* Pointers come as integers (one array per operand), scalars as the loop's float32s. */
__attribute__((optimize("fp-contract=off")))
void adam_step_f32(const int64_t *params, const int64_t *grads, const int64_t *avgs,
                   const int64_t *squares, const int64_t *sizes, const float *step_sizes,
                   const float *corrections, int64_t count, float decay, float weight_decay,
                   int decoupled, float lerp_weight, int lerp_from_end, float beta2,
                   float one_minus_beta2, float eps) {
    #pragma omp parallel for schedule(dynamic, 1)
    for (int64_t t = 0; t < count; t++) {
        float *p = (float *)(intptr_t)params[t], *m = (float *)(intptr_t)avgs[t];
        float *v = (float *)(intptr_t)squares[t];
        const float *g = (const float *)(intptr_t)grads[t];
        const float step = -step_sizes[t], correction = corrections[t];
        const int64_t n = sizes[t];
        #pragma omp simd
        for (int64_t i = 0; i < n; i++) {
            float grad = g[i], x = p[i];
            if (weight_decay != 0.0f) {
                if (decoupled) x = x * decay;
                else grad = grad + x * weight_decay;
            }
            const float avg = lerp_from_end ? grad - (grad - m[i]) * lerp_weight
                                            : m[i] + (grad - m[i]) * lerp_weight;
            const float square = v[i] * beta2 + (grad * one_minus_beta2) * grad;
            const float denom = sqrtf(square) / correction + eps;
            m[i] = avg;
            v[i] = square;
            p[i] = x + (avg * step) / denom;
        }
    }
}
"""


@functools.cache
def _library() -> Any:
    import ember_cpu  # the cpu device's compiler; only needed once a cpu kernel runs

    return ember_cpu.load_inline(SOURCE, functions="adam_step_f32", name="ember_fused_optim")


def adam_step(
    params: Sequence[Tensor], grads: Sequence[Tensor], exp_avgs: Sequence[Tensor],
    exp_avg_sqs: Sequence[Tensor], step_sizes: Sequence[float],
    corrections: Sequence[float], lr: float, beta1: float, beta2: float, eps: float,
    weight_decay: float, decoupled: bool,
) -> None:  # fmt: skip
    """The `adam_step` kernel: every parameter and its two averages updated in place."""
    if params[0].dtype != ember.float32:
        _adam_step_composite(
            params, grads, exp_avgs, exp_avg_sqs, step_sizes, corrections, lr, beta1, beta2,
            eps, weight_decay, decoupled,
        )  # fmt: skip
        return
    lib = _library()
    ffi = lib.ffi

    def addresses(tensors: Sequence[Tensor]) -> Any:
        return ffi.new("int64_t[]", [t.data_ptr() for t in tensors])

    weight = 1 - beta1
    lib.adam_step_f32(
        addresses(params), addresses(grads), addresses(exp_avgs), addresses(exp_avg_sqs),
        ffi.new("int64_t[]", [p.numel() for p in params]), ffi.new("float[]", step_sizes),
        ffi.new("float[]", corrections), len(params), 1 - lr * weight_decay, weight_decay,
        int(decoupled), weight if abs(weight) < 0.5 else 1.0 - weight, int(abs(weight) >= 0.5),
        beta2, 1 - beta2, eps,
    )  # fmt: skip


def _adam_step_composite(
    params: Sequence[Tensor], grads: Sequence[Tensor], exp_avgs: Sequence[Tensor],
    exp_avg_sqs: Sequence[Tensor], step_sizes: Sequence[float],
    corrections: Sequence[float], lr: float, beta1: float, beta2: float, eps: float,
    weight_decay: float, decoupled: bool,
) -> None:  # fmt: skip
    """adam.py's per-tensor formulas, for dtypes the C does not take."""
    with ember.no_grad():
        for p, grad, avg, square, step_size, correction in zip(
            params, grads, exp_avgs, exp_avg_sqs, step_sizes, corrections, strict=True
        ):
            if weight_decay != 0:
                if decoupled:
                    p.mul_(1 - lr * weight_decay)
                else:
                    grad = grad + p * weight_decay
            weight = 1 - beta1
            if abs(weight) < 0.5:  # lerp from the nearer end, as adam.py (and PyTorch)
                avg.add_((grad - avg).mul_(weight))
            else:
                avg.copy_(grad - (grad - avg).mul_(1.0 - weight))
            square.mul_(beta2).add_((grad * (1 - beta2)).mul_(grad))
            denom = square.sqrt().div_(correction).add_(eps)
            p.add_((avg * -step_size).div_(denom))


#: (op, kernel, priority) for the cpu device
KERNELS: tuple[tuple[str, Callable[..., None], int], ...] = ((ops.ADAM_STEP, adam_step, 0),)
