"""Activations, softmax and log-softmax.

Softmax and log-softmax are composite ops (a device may register a fused kernel under
their names) with their own derivative formulas, so that autograd records one node for
each instead of the five or six that their composition would record.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Final

from ember import _dtype
from ember._autocast import autocast_op
from ember._errors import DTypeError
from ember._ops import elementwise as ew
from ember._ops import names, reduction, unary
from ember._ops._meta import wrap_dim
from ember._ops.conversion import cast
from ember._tensor import Tensor, empty_tensor
from ember.autograd._graph import needs_grad, record
from ember.autograd._node import FormulaNode

__all__ = [
    "elu", "gelu", "hardtanh", "leaky_relu", "leaky_relu_", "log_softmax", "logsigmoid", "relu",
    "relu6", "relu_", "sigmoid", "silu", "softmax", "softmin", "softplus", "tanh",
]  # fmt: skip

SOFTMAX: Final = names.SOFTMAX
LOG_SOFTMAX: Final = names.LOG_SOFTMAX

_SQRT_2_OVER_PI: Final = math.sqrt(2.0 / math.pi)


def _in_place(input: Tensor, compute: Callable[[Tensor], Tensor]) -> Tensor:
    """Write compute(input) into input.

    In a graph the composite runs on a clone, because its ops may save their operand and
    PyTorch's in-place activations must not invalidate them; copy_ records the write, so
    `input` continues the graph from the result.
    """
    source = input.clone() if needs_grad(input) else input
    return input.copy_(compute(source))


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(input, 0)."""
    if not inplace:
        return unary.relu(input)
    return _in_place(input, unary.relu) if needs_grad(input) else unary.relu_(input)


def relu_(input: Tensor) -> Tensor:
    """In-place relu."""
    return relu(input, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(input, 0), 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """input clamped to [min_val, max_val]."""
    if inplace and not needs_grad(input):
        return unary.clamp_(input, min_val, max_val)

    def compute(x: Tensor) -> Tensor:
        return unary.clamp(x, min_val, max_val)

    return _in_place(input, compute) if inplace else compute(input)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """input where positive, negative_slope * input elsewhere."""

    def compute(x: Tensor) -> Tensor:
        return unary.where(ew.gt(x, 0), x, ew.mul(x, negative_slope))

    return _in_place(input, compute) if inplace else compute(input)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place leaky_relu."""
    return leaky_relu(input, negative_slope, inplace=True)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """input where positive, alpha * (exp(input) - 1) elsewhere."""

    def compute(x: Tensor) -> Tensor:
        negative = ew.mul(unary.expm1(unary.clamp(x, max=0.0)), alpha)
        return unary.where(ew.gt(x, 0), x, negative)

    return _in_place(input, compute) if inplace else compute(input)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit: exact (erf) or its tanh approximation."""
    if approximate == "none":
        return unary.gelu(input)
    if approximate != "tanh":
        raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate}")
    cube = ew.mul(ew.mul(input, input), input)
    inner = ew.mul(ew.add(input, ew.mul(cube, 0.044715)), _SQRT_2_OVER_PI)
    return ew.mul(ew.mul(input, 0.5), ew.add(unary.tanh(inner), 1.0))


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """input * sigmoid(input) (also called swish)."""

    def compute(x: Tensor) -> Tensor:
        return ew.mul(x, unary.sigmoid(x))

    return _in_place(input, compute) if inplace else compute(input)


def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + exp(-input))."""
    return unary.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent."""
    return unary.tanh(input)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta * x)) / beta, linear where beta * x > threshold."""
    scaled = ew.mul(input, beta) if beta != 1 else input
    # The linear branch also keeps exp() from overflowing in the branch that is discarded.
    soft = unary.log1p(unary.exp(unary.clamp(scaled, max=threshold)))
    if beta != 1:
        soft = ew.div(soft, beta)
    return unary.where(ew.gt(scaled, threshold), input, soft)


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)), computed as min(x, 0) - log1p(exp(-|x|)) so it never overflows."""
    return ew.sub(unary.clamp(input, max=0.0), unary.log1p(unary.exp(unary.neg(unary.abs(input)))))


# -- softmax family -------------------------------------------------------------------------


def _implicit_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
        "dim=X as an argument.",
        UserWarning,
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def _prepare(
    name: str, input: Tensor, dim: int | None, dtype: _dtype.dtype | None, stacklevel: int
) -> tuple[Tensor, int]:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if dim is None:
        dim = _implicit_dim(name, input.ndim, stacklevel + 1)
    if dtype is not None:
        input = cast(input, dtype)
    if not input._dtype.is_floating_point:
        raise DTypeError(f"\"{name}\" not implemented for '{input._dtype.name}'")
    return input, wrap_dim(dim, input.ndim, name)


def _shifted(x: Tensor, dim: int) -> Tensor:
    # Subtracting the maximum keeps exp() in range; it cancels out of the result.
    return ew.sub(x, reduction.amax(x, dim, keepdim=True))


def _softmax_values(x: Tensor, dim: int) -> Tensor:
    fused = SOFTMAX.kernels.get(x._device.type)
    if fused is not None:
        out = empty_tensor(x._shape, x._dtype, x._device)
        fused(out, x, dim)
        return out
    if x.numel() == 0:
        return x.clone()
    exps = unary.exp(_shifted(x, dim))
    return ew.div(exps, reduction.sum(exps, dim, keepdim=True))


def _log_softmax_values(x: Tensor, dim: int) -> Tensor:
    fused = LOG_SOFTMAX.kernels.get(x._device.type)
    if fused is not None:
        out = empty_tensor(x._shape, x._dtype, x._device)
        fused(out, x, dim)
        return out
    if x.numel() == 0:
        return x.clone()
    shifted = _shifted(x, dim)
    return ew.sub(shifted, unary.log(reduction.sum(unary.exp(shifted), dim, keepdim=True)))


def _softmax_backward(node: FormulaNode, grad: Tensor) -> tuple[Tensor]:
    (y,) = node.saved
    inner = reduction.sum(ew.mul(grad, y), node.ctx, keepdim=True)
    return (ew.mul(y, ew.sub(grad, inner)),)


def _log_softmax_backward(node: FormulaNode, grad: Tensor) -> tuple[Tensor]:
    (y,) = node.saved
    total = reduction.sum(grad, node.ctx, keepdim=True)
    return (ew.sub(grad, ew.mul(unary.exp(y), total)),)


@autocast_op("softmax")
def softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: _dtype.dtype | None = None
) -> Tensor:
    """exp(x) / sum(exp(x)) along `dim`, computed stably (the maximum is subtracted first)."""
    x, d = _prepare("softmax", input, dim, dtype, _stacklevel)
    if not needs_grad(x):
        return _softmax_values(x, d)
    out = _softmax_values(x.detach(), d)
    return record("SoftmaxBackward0", _softmax_backward, (x,), out, save_output=True, ctx=d)


@autocast_op("log_softmax")
def log_softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: _dtype.dtype | None = None
) -> Tensor:
    """x - logsumexp(x) along `dim`."""
    x, d = _prepare("log_softmax", input, dim, dtype, _stacklevel)
    if not needs_grad(x):
        return _log_softmax_values(x, d)
    out = _log_softmax_values(x.detach(), d)
    return record("LogSoftmaxBackward0", _log_softmax_backward, (x,), out, save_output=True, ctx=d)


def softmin(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: _dtype.dtype | None = None
) -> Tensor:
    """softmax(-x) along `dim`."""
    if dim is None:
        dim = _implicit_dim("softmin", input.ndim, _stacklevel)
    if dtype is not None:
        input = cast(input, dtype)
    return softmax(unary.neg(input), dim)
