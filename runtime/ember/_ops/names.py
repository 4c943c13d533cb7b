"""Every op's name, defined in one place, with the kernel signature each device implements.

Conventions for every kernel (see docs/architecture.md, "The kernel contract"):

* Kernels receive tensors the runtime has already checked and allocated; outputs come
  first and are written in place. Nothing is returned unless stated.
* Shapes and strides are in elements. Inputs may be non-contiguous, have zero strides
  (broadcast), size-0 dimensions, or be 0-d. Outputs allocated by the runtime are
  contiguous, but `out=` arguments and in-place targets may be strided views.
* Unless stated, inputs already have the op's computation dtype (the runtime casts).
* A Python scalar argument is an int, float or bool already converted to the computation
  dtype's Python type.
"""

from __future__ import annotations

from ember._dispatch import Op, define

# --- memory ------------------------------------------------------------------------------
#: copy_(dst, src): dst[...] = src[...] with dtype conversion; same shape, same device.
COPY: Op = define("copy_")
#: fill_(dst, value): every element of the (possibly strided) dst becomes the scalar.
FILL: Op = define("fill_")
#: arange_(out, start, step): out[i] = start + i * step; out is 1-d contiguous.
ARANGE: Op = define("arange_")

# --- elementwise: kernel(out, a) with out.dtype == a.dtype --------------------------------
UNARY_PRIMITIVES = (
    "neg", "abs", "exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tanh", "erf",
    "floor", "ceil", "round", "trunc",
)  # fmt: skip
#: composites with a generic formula; a device may register a fused kernel(out, a).
UNARY_COMPOSITES = ("sign", "rsqrt", "reciprocal", "sigmoid", "relu", "gelu")
UNARY: dict[str, Op] = {name: define(name) for name in UNARY_PRIMITIVES}
UNARY.update({name: define(name, composite=True) for name in UNARY_COMPOSITES})

# --- elementwise binary: kernel(out, a, b) -------------------------------------------------
# a and b are broadcast to out.shape (zero strides); one of them may be a Python scalar.
# Arithmetic: out.dtype == computation dtype. Comparisons and logical ops: out is bool
# and a, b share the computation dtype.
BINARY_ARITHMETIC = (
    "add", "sub", "mul", "div", "floor_divide", "trunc_divide", "remainder", "fmod", "pow",
    "maximum", "minimum", "bitwise_and", "bitwise_or", "bitwise_xor",
)  # fmt: skip
BINARY_COMPARISON = ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor")
BINARY: dict[str, Op] = {name: define(name) for name in BINARY_ARITHMETIC + BINARY_COMPARISON}
#: where(out, condition, a, b): condition bool; a, b tensors of out.dtype, all broadcast.
WHERE: Op = define("where")

# --- reductions ------------------------------------------------------------------------------
# kernel(out, a, dims): out has a's ndim with the reduced dims of size 1 (keepdim form).
# sum/prod: out.dtype is the accumulation result (int64 for integer and bool inputs);
# amax/amin: out.dtype == a.dtype, NaN propagates; any/all: out is bool.
REDUCTIONS: dict[str, Op] = {
    name: define(name) for name in ("sum", "prod", "amax", "amin", "any", "all")
}
#: argmax/argmin(out_int64, a, dim): out keepdim form; first index of the extreme; NaN wins.
ARGMAX: Op = define("argmax")
ARGMIN: Op = define("argmin")
#: cumsum(out, a, dim): out.dtype is the accumulation dtype; a is cast by the kernel.
CUMSUM: Op = define("cumsum")

# --- linear algebra --------------------------------------------------------------------------
#: mm(out, a, b): a (M, K), b (K, N), out (M, N) contiguous; a and b arbitrary strides.
MM: Op = define("mm")
#: bmm(out, a, b): a (B, M, K), b (B, K, N), out (B, M, N) contiguous.
BMM: Op = define("bmm")

# --- indexing --------------------------------------------------------------------------------
#: index_select(out, a, dim, index): index int64 1-d, already range-checked and wrapped.
INDEX_SELECT: Op = define("index_select")
#: gather(out, a, dim, index): index int64 of out's shape, already range-checked.
GATHER: Op = define("gather")
#: scatter_(target, dim, index, src) and scatter_add_: index and src int64 / target dtype.
SCATTER: Op = define("scatter_")
SCATTER_ADD: Op = define("scatter_add_")
#: take(out, a, index): out[i] = a.flatten()[index[i]]; index int64, range-checked.
TAKE: Op = define("take")
#: index_put_(target, index, values, accumulate): target.flatten()[index[i]] (+)= values[i];
#: index and values are 1-d contiguous of equal length; target may be a strided view.
INDEX_PUT: Op = define("index_put_")
#: nonzero(a) -> int64 tensor (n, a.ndim) of the indices of non-zero elements (returns).
NONZERO: Op = define("nonzero")

# --- random (counter-based Philox4x32-10; identical streams on every device) ----------------
#: uniform_(t, low, high, seed, offset), normal_(t, mean, std, seed, offset),
#: random_(t, low, high, seed, offset) for integers in [low, high), randperm_(out, seed, offset).
UNIFORM: Op = define("uniform_")
NORMAL: Op = define("normal_")
RANDOM: Op = define("random_")
RANDPERM: Op = define("randperm_")
