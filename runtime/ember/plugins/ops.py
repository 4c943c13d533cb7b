"""The names of the ops a device implements, by kernel family (the registry's keys).

One source of truth: `ember._ops.names` defines the ops from these names, and a plugin
registers kernels under them (`registry.register(ops.COPY, "mydevice", kernel)`). The
signature of each family is in `ember.plugins.sdk` (`CopyKernel`, `BinaryKernel`, ...).
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ADAPTIVE_AVG_POOL2D", "ADAPTIVE_AVG_POOL2D_BACKWARD", "ARANGE", "ARGMAX", "ARGMIN",
    "AVG_POOL2D", "AVG_POOL2D_BACKWARD", "BINARY", "BINARY_ARITHMETIC", "BINARY_COMPARISON",
    "BMM", "COL2IM", "COPY", "CUMSUM", "FILL", "GATHER", "IM2COL", "INDEX_PUT", "INDEX_SELECT",
    "LOGSUMEXP", "LOG_SOFTMAX", "MAX_DIM", "MAX_POOL2D", "MAX_POOL2D_BACKWARD", "MEAN", "MIN_DIM",
    "MM", "NONZERO", "NORMAL", "RANDOM", "RANDPERM", "REDUCTIONS", "SCATTER", "SCATTER_ADD",
    "SOFTMAX", "STD", "TAKE", "UNARY", "UNARY_COMPOSITES", "UNARY_PRIMITIVES", "UNIFORM", "VAR",
    "WHERE",
]  # fmt: skip
__all__ += [
    "CHOLESKY", "EIGH", "HOUSEHOLDER_PRODUCT", "HOUSEHOLDER_QR", "LU_FACTOR", "SVD",
    "TRIANGULAR_SOLVE",
]  # fmt: skip

# -- memory: CopyKernel, FillKernel; arange_(out: Tensor, start, step) -------------------
COPY: Final = "copy_"
FILL: Final = "fill_"
ARANGE: Final = "arange_"

# -- elementwise: UnaryKernel, BinaryKernel, WhereKernel --------------------------------
UNARY_PRIMITIVES: Final = (
    "neg", "abs", "exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tanh", "erf",
    "floor", "ceil", "round", "trunc",
    "acos", "asin", "atan", "sinh", "cosh", "tan", "asinh", "acosh", "atanh", "log2", "log10",
    "exp2",
    "lgamma", "digamma", "erfinv",
    "erfc", "erfcx", "ndtri", "i0", "i0e", "i1", "i1e", "bessel_j0", "bessel_j1", "bessel_y0",
    "bessel_y1", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1", "airy_ai", "spherical_bessel_j0",
)  # fmt: skip
#: composites with a generic formula; a device may register a fused UnaryKernel.
UNARY_COMPOSITES: Final = ("sign", "rsqrt", "reciprocal", "sigmoid", "relu", "gelu")
UNARY: Final = UNARY_PRIMITIVES + UNARY_COMPOSITES
BINARY_ARITHMETIC: Final = (
    "add", "sub", "mul", "div", "floor_divide", "trunc_divide", "remainder", "fmod", "pow",
    "maximum", "minimum", "bitwise_and", "bitwise_or", "bitwise_xor",
    "atan2", "hypot", "copysign", "nextafter", "fmax", "fmin", "bitwise_left_shift",
    "bitwise_right_shift",
    "zeta", "igamma", "igammac",
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
    "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
)  # fmt: skip
BINARY_COMPARISON: Final = (
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
)  # fmt: skip
BINARY: Final = BINARY_ARITHMETIC + BINARY_COMPARISON
WHERE: Final = "where"

# -- reductions and scans: ReductionKernel ----------------------------------------------
REDUCTIONS: Final = ("sum", "prod", "amax", "amin", "any", "all")
ARGMAX: Final = "argmax"
ARGMIN: Final = "argmin"
CUMSUM: Final = "cumsum"

# -- matrix products: MatmulKernel ------------------------------------------------------
MM: Final = "mm"
BMM: Final = "bmm"

# -- LAPACK-level linear algebra: tensor-level, column-major batches (see _ops/names.py) --
LU_FACTOR: Final = "lu_factor_"
CHOLESKY: Final = "cholesky_"
HOUSEHOLDER_QR: Final = "householder_qr_"
HOUSEHOLDER_PRODUCT: Final = "householder_product_"
EIGH: Final = "eigh_"
SVD: Final = "svd_"
TRIANGULAR_SOLVE: Final = "triangular_solve_"

# -- tensor-level families (see ember._ops.names for each signature) --------------------
INDEX_SELECT: Final = "index_select"
GATHER: Final = "gather"
SCATTER: Final = "scatter_"
SCATTER_ADD: Final = "scatter_add_"
TAKE: Final = "take"
INDEX_PUT: Final = "index_put_"
NONZERO: Final = "nonzero"
UNIFORM: Final = "uniform_"
NORMAL: Final = "normal_"
RANDOM: Final = "random_"
RANDPERM: Final = "randperm_"
IM2COL: Final = "im2col"
COL2IM: Final = "col2im"
MAX_POOL2D: Final = "max_pool2d"
MAX_POOL2D_BACKWARD: Final = "max_pool2d_backward"
AVG_POOL2D: Final = "avg_pool2d"
AVG_POOL2D_BACKWARD: Final = "avg_pool2d_backward"
ADAPTIVE_AVG_POOL2D: Final = "adaptive_avg_pool2d"
ADAPTIVE_AVG_POOL2D_BACKWARD: Final = "adaptive_avg_pool2d_backward"

# -- composites a device may override with a fused, tensor-level kernel -----------------
SOFTMAX: Final = "softmax"
LOG_SOFTMAX: Final = "log_softmax"
MEAN: Final = "mean"
VAR: Final = "var"
STD: Final = "std"
LOGSUMEXP: Final = "logsumexp"
MAX_DIM: Final = "max_dim"
MIN_DIM: Final = "min_dim"
# Fused training composites (layer norm, GELU's derivative, causal attention): tensor-level
# kernels a device or a kernel plugin may register; the composites run everywhere else.
LAYER_NORM: Final = "layer_norm"
LAYER_NORM_BACKWARD: Final = "layer_norm_backward"
GELU_BACKWARD: Final = "gelu_backward"
ATTENTION: Final = "attention"
ATTENTION_BACKWARD: Final = "attention_backward"
CROSS_ENTROPY: Final = "cross_entropy"
CROSS_ENTROPY_BACKWARD: Final = "cross_entropy_backward"
ADAM_STEP: Final = "adam_step"
# Multi-tensor (PyTorch's `_foreach_*`) kernels behind clip_grad_norm_: one call per list.
FOREACH_NORM: Final = "foreach_norm"
FOREACH_MUL_: Final = "foreach_mul_"
__all__ += [
    "ATTENTION",
    "ATTENTION_BACKWARD",
    "CROSS_ENTROPY",
    "CROSS_ENTROPY_BACKWARD",
    "FOREACH_MUL_",
    "FOREACH_NORM",
    "GELU_BACKWARD",
    "LAYER_NORM",
    "LAYER_NORM_BACKWARD",
]
