"""The fused ops: their composites (what every device without a kernel runs), fakes and
backwards. Each backward is an op of its own, so that it has fused kernels too."""

from __future__ import annotations

import math

import ember
from ember import Tensor, library

__all__ = ["bias_gelu", "bias_gelu_backward", "rms_norm", "rms_norm_backward"]


def _check_vector(op: str, x: Tensor, vector: Tensor, what: str) -> None:
    if vector.ndim != 1 or x.ndim == 0 or vector.shape[0] != x.shape[-1]:
        raise RuntimeError(
            f"{op}: {what} of shape {list(vector.shape)} does not match the last dim of the "
            f"input of shape {list(x.shape)}"
        )
    if vector.dtype != x.dtype:
        raise RuntimeError(f"{op}: {what} is {vector.dtype}, the input {x.dtype}")


def _rows(t: Tensor) -> Tensor:
    return t.reshape(-1, t.shape[-1])


# -- RMSNorm ------------------------------------------------------------------------------


@library.custom_op("fused::rms_norm", mutates_args=())
def rms_norm(x: Tensor, weight: Tensor, eps: float = 1e-6) -> Tensor:
    rstd = ember.rsqrt((x * x).mean(-1, keepdim=True) + eps)
    return x * rstd * weight


@rms_norm.register_fake
def _(x: Tensor, weight: Tensor, eps: float = 1e-6) -> Tensor:
    _check_vector("fused::rms_norm", x, weight, "weight")
    return ember.empty_like(x)


@library.custom_op("fused::rms_norm_backward", mutates_args=())
def rms_norm_backward(grad: Tensor, x: Tensor, weight: Tensor, eps: float) -> tuple[Tensor, Tensor]:
    rstd = ember.rsqrt((x * x).mean(-1, keepdim=True) + eps)
    scaled = grad * weight
    grad_x = rstd * scaled - x * rstd**3 * (scaled * x).mean(-1, keepdim=True)
    grad_weight = _rows(grad * x * rstd).sum(0)
    return grad_x, grad_weight


@rms_norm_backward.register_fake
def _(grad: Tensor, x: Tensor, weight: Tensor, eps: float) -> tuple[Tensor, Tensor]:
    return ember.empty_like(x), ember.empty_like(weight)


def _save_rms_norm(ctx: object, inputs: tuple[object, ...], output: object) -> None:
    x, weight, eps = inputs
    ctx.save_for_backward(x, weight)  # type: ignore[attr-defined]
    ctx.eps = eps  # type: ignore[attr-defined]


def _rms_norm_grad(ctx: object, grad: Tensor) -> tuple[Tensor, Tensor, None]:
    x, weight = ctx.saved_tensors  # type: ignore[attr-defined]
    grad_x, grad_weight = rms_norm_backward(grad.contiguous(), x, weight, ctx.eps)  # type: ignore[attr-defined]
    return grad_x, grad_weight, None


rms_norm.register_autograd(_rms_norm_grad, setup_context=_save_rms_norm)


# -- bias + GELU --------------------------------------------------------------------------

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


@library.custom_op("fused::bias_gelu", mutates_args=())
def bias_gelu(x: Tensor, bias: Tensor) -> Tensor:
    return ember.nn.functional.gelu(x + bias)


@bias_gelu.register_fake
def _(x: Tensor, bias: Tensor) -> Tensor:
    _check_vector("fused::bias_gelu", x, bias, "bias")
    return ember.empty_like(x)


@library.custom_op("fused::bias_gelu_backward", mutates_args=())
def bias_gelu_backward(grad: Tensor, x: Tensor, bias: Tensor) -> tuple[Tensor, Tensor]:
    u = x + bias
    cdf = 0.5 * (1.0 + ember.erf(u * _SQRT_HALF))
    pdf = ember.exp(-0.5 * u * u) * _INV_SQRT_2PI
    grad_x = grad * (cdf + u * pdf)
    return grad_x, _rows(grad_x).sum(0)


@bias_gelu_backward.register_fake
def _(grad: Tensor, x: Tensor, bias: Tensor) -> tuple[Tensor, Tensor]:
    return ember.empty_like(x), ember.empty_like(bias)


def _save_bias_gelu(ctx: object, inputs: tuple[object, ...], output: object) -> None:
    ctx.save_for_backward(*inputs)  # type: ignore[attr-defined]


def _bias_gelu_grad(ctx: object, grad: Tensor) -> tuple[Tensor, Tensor]:
    x, bias = ctx.saved_tensors  # type: ignore[attr-defined]
    return bias_gelu_backward(grad.contiguous(), x, bias)


bias_gelu.register_autograd(_bias_gelu_grad, setup_context=_save_bias_gelu)
