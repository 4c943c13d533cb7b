"""Every op, defined once, from the names in `ember.plugins.ops`; primitives and composites.

A *primitive* needs a kernel on every device; a *composite* is written once in ember ops
and runs on any device that has the primitives (a device may register a fused kernel
under its name, and dispatch prefers it).

Kernel signatures are per family (`ember.plugins.sdk` has them as typed Protocols):

* planned families (memory, elementwise, reductions, scans, matrix products) get
  `(outputs..., inputs..., plan)`: each operand a `Storage` or a converted Python scalar,
  the plan an `ElementwisePlan`, `ReductionPlan` or `MatmulPlan` with the call's whole
  geometry. The runtime never calls them on zero elements and raises every semantic
  error itself.
* tensor-level families (convolution, pooling, indexing, random, fused composites) get
  `ember.Tensor`s, as documented beside each op below. Inputs may be strided unless
  stated; outputs allocated by the runtime are contiguous; inputs already have the op's
  computation dtype; a Python scalar argument is already converted.
"""

from __future__ import annotations

from ember._dispatch import Op, define
from ember.plugins import ops
from ember.plugins.ops import (
    BINARY_ARITHMETIC,
    BINARY_COMPARISON,
    UNARY_COMPOSITES,
    UNARY_PRIMITIVES,
)

# --- memory ------------------------------------------------------------------------------
#: copy_(dst, src, plan): CopyKernel, converting plan.dtypes[1] to plan.dtypes[0].
COPY: Op = define(ops.COPY)
#: fill_(dst, value, plan): FillKernel.
FILL: Op = define(ops.FILL)
#: arange_(out: Tensor, start, step): out[i] = start + i * step; out is 1-d contiguous.
ARANGE: Op = define(ops.ARANGE)

# --- elementwise: UnaryKernel(out, a, plan), out's dtype is a's -----------------------------
UNARY: dict[str, Op] = {name: define(name) for name in UNARY_PRIMITIVES}
UNARY.update({name: define(name, composite=True) for name in UNARY_COMPOSITES})

# --- elementwise binary: BinaryKernel(out, a, b, plan) -------------------------------------
# One of a and b may be a Python scalar. Arithmetic: out's dtype is the computation dtype.
# Comparisons and logical ops: out is bool and a, b share the computation dtype.
BINARY: dict[str, Op] = {name: define(name) for name in BINARY_ARITHMETIC + BINARY_COMPARISON}
#: where(out, condition, a, b, plan): WhereKernel; condition bool, a and b of out's dtype.
WHERE: Op = define(ops.WHERE)

# --- reductions and scans: ReductionKernel(out, a, plan) ---------------------------------
# sum/prod: out's dtype is the accumulation result (int64 for integer and bool inputs);
# amax/amin: out's dtype is a's (bool too), NaN propagates; any/all: out is bool, composites
# (amax/amin of a != 0).
REDUCTIONS: dict[str, Op] = {
    name: define(name, composite=name in ("any", "all")) for name in ops.REDUCTIONS
}
#: argmax/argmin: out int64, the first index of the extreme along the one reduced dim; NaN
#: wins.
ARGMAX: Op = define(ops.ARGMAX)
ARGMIN: Op = define(ops.ARGMIN)
#: cumsum: one reduced dim; out of the accumulation dtype (a is cast by the kernel).
CUMSUM: Op = define(ops.CUMSUM)

# --- linear algebra --------------------------------------------------------------------------
# Matrix products are planned: kernel(out, a, b, plan), storages and a MatmulPlan.
#: mm: a (M, K), b (K, N), out (M, N) contiguous; a and b arbitrary strides. A composite:
#: bmm's kernel runs the same plan, a batch of one.
MM: Op = define(ops.MM, composite=True)
#: bmm: a (B, M, K), b (B, K, N), out (B, M, N) contiguous; a and b arbitrary strides,
#: batch strides 0 included.
BMM: Op = define(ops.BMM)

# --- LAPACK-level linear algebra (ember.linalg's decompositions and solvers) ---------------
# Tensor-level composites: the runtime has a generic default in ember ops
# (_ops/linalg_generic.py); a device registers its native kernel under the name. Operands
# are float32 or float64 batches of matrices, each matrix column-major (shape (B, m, n),
# strides (m*n, 1, m)), allocated by the runtime; `info` is int32 (B,), LAPACK's status per
# matrix; the kernels never raise on numerically bad input (the runtime reads info).
#: lu_factor_(a, pivots, info): getrf: a overwritten with L (unit, below) and U; pivots
#: int32 (B, min(m, n)), 1-based rows swapped with; info > 0: U[info-1, info-1] == 0.
LU_FACTOR: Op = define(ops.LU_FACTOR, composite=True)
#: cholesky_(a, info): potrf: the lower factor into a's lower triangle (the strict upper
#: triangle is unspecified); info > 0: the leading minor of that order is not positive.
CHOLESKY: Op = define(ops.CHOLESKY, composite=True)
#: householder_qr_(a, tau): geqrf: R in the upper triangle, the reflectors v (v[0] = 1
#: implied) below it; tau (B, min(m, n)); LAPACK's sign convention (beta = -sign(alpha)|x|).
HOUSEHOLDER_QR: Op = define(ops.HOUSEHOLDER_QR, composite=True)
#: householder_product_(a, tau): orgqr: a (B, m, n), m >= n, holds k = tau.shape[-1] <= n
#: reflectors in its columns and is overwritten with the first n columns of H1 H2 ... Hk.
HOUSEHOLDER_PRODUCT: Op = define(ops.HOUSEHOLDER_PRODUCT, composite=True)
#: eigh_(a, w, info): syevd: a (B, n, n) symmetric, its lower triangle read, overwritten
#: with orthonormal eigenvectors (columns); w (B, n) ascending; info > 0: no convergence.
EIGH: Op = define(ops.EIGH, composite=True)
#: svd_(a, u, s, vh, info, full_matrices): gesdd: a (B, m, n) is destroyed; s (B, k)
#: descending, k = min(m, n); u (B, m, m or k), vh (B, n or k, n); info > 0: no convergence.
SVD: Op = define(ops.SVD, composite=True)
#: triangular_solve_(a, b, upper, unitriangular): trsm: b (B, n, k) overwritten with
#: A^-1 b, A the upper or lower triangle of a (B, n, n), its diagonal taken as ones when
#: unitriangular; a singular A gives infinities and NaNs, as in PyTorch.
TRIANGULAR_SOLVE: Op = define(ops.TRIANGULAR_SOLVE, composite=True)

# --- indexing --------------------------------------------------------------------------------
# index_select, scatter_, scatter_add_ and take are composites (on gather and index_put_).
#: index_select(out, a, dim, index): index int64 1-d, already range-checked and wrapped.
INDEX_SELECT: Op = define(ops.INDEX_SELECT, composite=True)
#: gather(out, a, dim, index): index int64 of out's shape (any strides, zero included),
#: already range-checked.
GATHER: Op = define(ops.GATHER)
#: scatter_(target, dim, index, src) and scatter_add_: index and src int64 / target dtype.
SCATTER: Op = define(ops.SCATTER, composite=True)
SCATTER_ADD: Op = define(ops.SCATTER_ADD, composite=True)
#: take(out, a, index): out[i] = a.flatten()[index[i]]; index int64, range-checked.
TAKE: Op = define(ops.TAKE, composite=True)
#: index_put_(target, index, values, accumulate): target.flatten()[index[i]] (+)= values[i];
#: index and values are 1-d contiguous of equal length; target may be a strided view.
INDEX_PUT: Op = define(ops.INDEX_PUT)
#: nonzero(a) -> int64 tensor (n, a.ndim) of the indices of non-zero elements (returns).
NONZERO: Op = define(ops.NONZERO)

# --- random (counter-based Philox4x32-10; identical streams on every device) ----------------
#: uniform_(t, low, high, seed, offset), normal_(t, mean, std, seed, offset),
#: random_(t, low, high, seed, offset) for integers in [low, high), randperm_(out, seed, offset).
UNIFORM: Op = define(ops.UNIFORM)
NORMAL: Op = define(ops.NORMAL)
RANDOM: Op = define(ops.RANDOM)
RANDPERM: Op = define(ops.RANDPERM)

# --- convolution and pooling (ember.nn.functional) -----------------------------------------
#: im2col(cols, x, stride, padding, dilation): x (N, C, H, W) contiguous; cols a
#: (N, C, kh, kw, Ho, Wo) view whose (Ho, Wo) block is contiguous (strides Wo, 1) and whose
#: other strides are free (zero too: col2im reads cols repeated by zero strides);
#: cols[n, c, i, j, y, x] = x[n, c, y*sh - ph + i*dh, x*sw - pw + j*dw], 0 where that lies
#: outside x. stride, padding (top, left) and dilation are (h, w) int
#: pairs; the window count (Ho, Wo) is cols' shape, so any bottom/right padding is implied.
#: Every dtype (it only moves elements).
IM2COL: Op = define(ops.IM2COL)
#: col2im(x, cols, stride, padding, dilation): the adjoint of im2col: x (N, C, H, W)
#: contiguous is overwritten with, at each pixel, the sum of the cols elements im2col would
#: read from it; elements that fall outside x are dropped. Floating and integer dtypes
#: (float16 is computed in float32 by the runtime).
COL2IM: Op = define(ops.COL2IM)
# Pooling kernels take contiguous NCHW tensors; kernel_size, stride, padding (symmetric)
# and dilation are (h, w) int pairs; the output size is the output's shape (the runtime has
# applied ceil_mode). float16, float32, float64 unless stated. All six are composites
# (ember.nn.functional._pool_composites: im2col/col2im, reductions, gather, index_put_,
# matrix products).
#: max_pool2d(out, indices, x, kernel_size, stride, padding, dilation): indices (int64, out's
#: shape) hold the flat position y * W + x of each maximum within its plane; NaN wins (the
#: last NaN of a window); also uint8, int8, int32, int64.
MAX_POOL2D: Op = define(ops.MAX_POOL2D, composite=True)
#: max_pool2d_backward(grad_input, grad_out, indices): grad_input = 0, then every grad_out
#: element is added at its index within the plane.
MAX_POOL2D_BACKWARD: Op = define(ops.MAX_POOL2D_BACKWARD, composite=True)
#: avg_pool2d(out, x, kernel_size, stride, padding, count_include_pad, divisor_override):
#: windows clipped to the padded input; divisor: divisor_override (an int or None), else
#: the clipped window's size with count_include_pad, else its count of real pixels; also
#: int64 (summed in int64, divided truncating).
AVG_POOL2D: Op = define(ops.AVG_POOL2D, composite=True)
#: avg_pool2d_backward(grad_input, grad_out, kernel_size, stride, padding, count_include_pad,
#: divisor_override): grad_input = 0, then each grad_out / divisor spread over its window.
AVG_POOL2D_BACKWARD: Op = define(ops.AVG_POOL2D_BACKWARD, composite=True)
#: adaptive_avg_pool2d(out, x): output (i, j) averages rows [floor(i*H/Ho), ceil((i+1)*H/Ho))
#: and the columns likewise.
ADAPTIVE_AVG_POOL2D: Op = define(ops.ADAPTIVE_AVG_POOL2D, composite=True)
#: adaptive_avg_pool2d_backward(grad_input, grad_out): the adjoint of adaptive_avg_pool2d.
ADAPTIVE_AVG_POOL2D_BACKWARD: Op = define(ops.ADAPTIVE_AVG_POOL2D_BACKWARD, composite=True)

# --- composites a device may fuse (tensor-level kernels) -----------------------------------
#: softmax(out, a, dim) and log_softmax(out, a, dim): a floating, out contiguous of a's shape.
SOFTMAX: Op = define(ops.SOFTMAX, composite=True)
LOG_SOFTMAX: Op = define(ops.LOG_SOFTMAX, composite=True)
#: mean(out, a, dims): a floating; out in keepdim form, a's dtype.
MEAN: Op = define(ops.MEAN, composite=True)
#: var(out, a, dims, correction) and std(...): a floating; out in keepdim form, a's dtype.
VAR: Op = define(ops.VAR, composite=True)
STD: Op = define(ops.STD, composite=True)
#: logsumexp(out, a, dims): a floating; out in keepdim form, a's dtype.
LOGSUMEXP: Op = define(ops.LOGSUMEXP, composite=True)
#: max_dim(values, indices, a, dim) and min_dim: keepdim form; indices int64, first extreme.
MAX_DIM: Op = define(ops.MAX_DIM, composite=True)
MIN_DIM: Op = define(ops.MIN_DIM, composite=True)
#: layer_norm(out, mean, rstd, x, weight, bias, eps): x contiguous (rows, cols) floating,
#: weight and bias (cols,) of x's dtype or None; out x's shape, mean and rstd (rows,):
#: out = (x - mean) * rstd * weight + bias with rstd = 1 / sqrt(biased var + eps).
LAYER_NORM: Op = define(ops.LAYER_NORM, composite=True)
#: layer_norm_backward(grad_x, grad_weight, grad_bias, grad, x, mean, rstd, weight): grad and
#: x contiguous (rows, cols); grad_weight, grad_bias (cols,) or None (not wanted); weight
#: (cols,) or None. Every output is overwritten.
LAYER_NORM_BACKWARD: Op = define(ops.LAYER_NORM_BACKWARD, composite=True)
#: gelu_backward(grad_x, grad, x): every operand contiguous, floating, of one shape:
#: grad_x = grad * (Phi(x) + x * phi(x)), the exact (erf) GELU's derivative.
GELU_BACKWARD: Op = define(ops.GELU_BACKWARD, composite=True)
#: attention(out, lse, q, k, v, scale, is_causal): q (B, H, L, E), k (B, H, S, E),
#: v (B, H, S, Ev), one floating dtype, each with unit stride along its last dim and any
#: other strides (heads may be interleaved in a (B, L, H * E) projection); out
#: (B, H, L, Ev), strided likewise, = softmax(q kᵀ · scale) v, where causal lets query i
#: see keys j <= i; lse (B, H, L) contiguous, each row's log-sum-exp of the scaled scores.
ATTENTION: Op = define(ops.ATTENTION, composite=True)
#: attention_backward(grad_q, grad_k, grad_v, grad_out, q, k, v, out, lse, scale, is_causal):
#: the gradients of `attention`, operands laid out as attention's (the gradients may be
#: views of one buffer); each output overwritten.
ATTENTION_BACKWARD: Op = define(ops.ATTENTION_BACKWARD, composite=True)
#: cross_entropy(losses, lse, x, target): x (N, C) contiguous floating, target (N,) int64
#: with every entry in [0, C); lse[r] = log-sum-exp of row r, losses[r] = lse[r] - x[r, target[r]].
CROSS_ENTROPY: Op = define(ops.CROSS_ENTROPY, composite=True)
#: cross_entropy_backward(grad_x, x, target, lse, grad_rows, scale): grad_x (N, C) =
#: (exp(x - lse) - one_hot(target)) * grad_rows[:, None] * scale, grad_rows (N,) or (1,)
#: (one gradient for every row); every operand contiguous.
CROSS_ENTROPY_BACKWARD: Op = define(ops.CROSS_ENTROPY_BACKWARD, composite=True)
#: adam_step(params, grads, exp_avgs, exp_avg_sqs, step_sizes, bias_correction2_sqrts, lr,
#: beta1, beta2, eps, weight_decay, decoupled): lists of dense tensors of one dtype, one
#: float per parameter; PyTorch's Adam (decoupled: AdamW) update of each, in place, in the
#: order adam.py computes it (the multi-tensor, `foreach`, path).
ADAM_STEP: Op = define(ops.ADAM_STEP, composite=True)
#: foreach_norm(out, tensors, ord): tensors a list of dense (contiguous) tensors of one
#: floating dtype; out (len(tensors),) of that dtype, contiguous: out[i] = the `ord`-norm
#: (1, 2 or inf) of all of tensors[i]'s elements (PyTorch's `_foreach_norm`).
FOREACH_NORM: Op = define(ops.FOREACH_NORM, composite=True)
#: foreach_mul_(tensors, scalar): tensors as foreach_norm's, scalar a one-element tensor
#: of their dtype and device: every tensor multiplied by it in place (`_foreach_mul_`).
FOREACH_MUL_: Op = define(ops.FOREACH_MUL_, composite=True)
