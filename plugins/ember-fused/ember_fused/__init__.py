"""ember-fused: fused kernels for Ember, packaged as a third party would package them.

The ops are `ember.ops.fused.rms_norm` and `ember.ops.fused.bias_gelu` (differentiable,
with fused backward kernels), defined when Ember loads this plugin; the functions below
call them. Importing this package has no side effects: Ember discovers the plugin through
its entry point (`ember_fused.plugin`), which defines the ops and registers their kernels
for cpu and opencl, and a faster cpu `logsumexp`. Kernels compile at their first call.
"""

from __future__ import annotations

import ember

__all__ = ["bias_gelu", "rms_norm"]


def rms_norm(x: ember.Tensor, weight: ember.Tensor, eps: float = 1e-6) -> ember.Tensor:
    """x / sqrt(mean(x², last dim) + eps) * weight (as torch.nn.functional.rms_norm over
    the last dim)."""
    return ember.ops.fused.rms_norm(x, weight, eps)


def bias_gelu(x: ember.Tensor, bias: ember.Tensor) -> ember.Tensor:
    """gelu(x + bias), the exact (erf) GELU, bias along the last dim."""
    return ember.ops.fused.bias_gelu(x, bias)
