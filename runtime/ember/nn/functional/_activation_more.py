"""More activations: CELU, SELU, GLU, the shrinks, hard sigmoid/swish, Mish, PReLU, RReLU,
threshold and Gumbel-softmax, composites of elementwise ops (autograd through their parts).

Where PyTorch's derivative at a kink differs from what a clamp would give (hardsigmoid,
hardswish, the shrinks, threshold), the forward is written with `where` on the same strict
comparisons as PyTorch's backward, so the gradients agree at the kinks too.
"""

from __future__ import annotations

from typing import Final

from ember._dtype_info import finfo
from ember._ops import elementwise as ew
from ember._ops import random as random_ops
from ember._ops import reduction, unary
from ember._ops import shape as shape_ops
from ember._ops._meta import wrap_dim
from ember._tensor import Tensor, empty_tensor
from ember.nn.functional._activation import _in_place, elu, hardtanh, softmax

__all__ = [
    "celu", "celu_", "elu_", "glu", "gumbel_softmax", "hardshrink", "hardsigmoid", "hardswish",
    "hardtanh_", "mish", "prelu", "rrelu", "rrelu_", "selu", "selu_", "softshrink", "softsign",
    "tanhshrink", "threshold", "threshold_",
]  # fmt: skip

SELU_ALPHA: Final = 1.6732632423543772848170429916717
SELU_SCALE: Final = 1.0507009873554804934193349852946

_TORCH_DTYPE_NAMES: Final = {"float16": "Half", "float32": "Float", "float64": "Double"}


def _negative_exponential(x: Tensor, alpha: float, inner_scale: float) -> Tensor:
    """alpha * (exp(x * inner_scale) - 1) where x < 0, x elsewhere (exp of min(x, 0) only)."""
    negative = ew.mul(unary.expm1(ew.mul(unary.clamp(x, max=0.0), inner_scale)), alpha)
    return unary.where(ew.gt(x, 0), x, negative)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")

    def compute(x: Tensor) -> Tensor:
        return _negative_exponential(x, alpha, 1.0 / alpha)

    return _in_place(input, compute) if inplace else compute(input)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place celu."""
    return celu(input, alpha, inplace=True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * (max(0, x) + min(0, alpha * (exp(x) - 1))) with the self-normalising constants."""

    def compute(x: Tensor) -> Tensor:
        return ew.mul(_negative_exponential(x, SELU_ALPHA, 1.0), SELU_SCALE)

    return _in_place(input, compute) if inplace else compute(input)


def selu_(input: Tensor) -> Tensor:
    """In-place selu."""
    return selu(input, inplace=True)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place elu."""
    return elu(input, alpha, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place hardtanh."""
    return hardtanh(input, min_val, max_val, inplace=True)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), where a and b are the two halves of `input` along `dim`."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, input.ndim, "glu")
    size = input._shape[d]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {size}")
    half = size // 2
    first = shape_ops.narrow(input, d, 0, half)
    second = shape_ops.narrow(input, d, half, half)
    return ew.mul(first, unary.sigmoid(second))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, 0 elsewhere."""
    return unary.where(ew.gt(unary.abs(input), lambd), input, 0.0)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""
    if lambd < 0:
        dtype_name = _TORCH_DTYPE_NAMES.get(input._dtype.name, input._dtype.name)
        top = finfo(input._dtype).max if input._dtype.is_floating_point else 0
        raise RuntimeError(
            f"lambda must be in range [0, {top:g}] for input dtype {dtype_name}, but found "
            f"{lambd:g}"
        )
    shrunk = ew.sub(input, ew.mul(unary.sign(input), lambd))
    return unary.where(ew.gt(unary.abs(input), lambd), shrunk, 0.0)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """0 below -3, 1 above 3, x / 6 + 1/2 between."""

    def compute(x: Tensor) -> Tensor:
        ramp = ew.add(ew.div(x, 6.0), 0.5)
        return unary.where(ew.le(x, -3.0), 0.0, unary.where(ew.ge(x, 3.0), 1.0, ramp))

    return _in_place(input, compute) if inplace else compute(input)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * hardsigmoid(x): 0 below -3, x above 3, x (x + 3) / 6 between."""

    def compute(x: Tensor) -> Tensor:
        middle = ew.div(ew.mul(x, ew.add(x, 3.0)), 6.0)
        return unary.where(ew.le(x, -3.0), 0.0, unary.where(ew.ge(x, 3.0), x, middle))

    return _in_place(input, compute) if inplace else compute(input)


def _softplus(x: Tensor) -> Tensor:
    # log1p(exp(x)), linear above 20 as PyTorch's softplus (keeps exp() in range).
    soft = unary.log1p(unary.exp(unary.clamp(x, max=20.0)))
    return unary.where(ew.gt(x, 20.0), x, soft)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""

    def compute(x: Tensor) -> Tensor:
        return ew.mul(x, unary.tanh(_softplus(x)))

    return _in_place(input, compute) if inplace else compute(input)


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    return ew.div(input, ew.add(unary.abs(input), 1.0))


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    return ew.sub(input, unary.tanh(input))


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, value elsewhere."""

    def compute(x: Tensor) -> Tensor:
        return unary.where(ew.gt(x, threshold), x, value)

    return _in_place(input, compute) if inplace else compute(input)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place threshold."""
    return _in_place(input, lambda x: unary.where(ew.gt(x, threshold), x, value))


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """x where positive, weight * x elsewhere; weight has 1 element or one per channel (dim 1)."""
    if weight.ndim > 1:
        raise RuntimeError(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}"
        )
    count = weight.numel()
    if count != 1:
        channels = input._shape[1] if input.ndim >= 2 else 1
        if count != channels:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers "
                f"= {count} and channel size = {channels}."
            )
        weight = shape_ops.reshape(weight, (1, count, *([1] * (input.ndim - 2))))
    elif input.ndim >= 1:
        weight = shape_ops.reshape(weight, (1,) * input.ndim)
    else:
        weight = shape_ops.reshape(weight, ())
    return unary.where(ew.gt(input, 0), input, ew.mul(weight, input))


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """Leaky ReLU whose negative slope is drawn uniformly from [lower, upper] per element in
    training, and is their mean in evaluation."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        slope: Tensor | float = (lower + upper) / 2
    else:
        slope = random_ops.uniform_(
            empty_tensor(input._shape, input._dtype, input._device), lower, upper
        )

    def compute(x: Tensor) -> Tensor:
        return unary.where(ew.gt(x, 0), x, ew.mul(x, slope))

    return _in_place(input, compute) if inplace else compute(input)


def rrelu_(
    input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False
) -> Tensor:
    """In-place rrelu."""
    return rrelu(input, lower, upper, training, inplace=True)


def gumbel_softmax(
    logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """softmax((logits + g) / tau) with g Gumbel(0, 1) noise; with hard=True the one-hot of its
    argmax, differentiated as the soft sample (the straight-through estimator)."""
    del eps  # deprecated in PyTorch and unused there too
    uniform = random_ops.uniform_(empty_tensor(logits._shape, logits._dtype, logits._device))
    # -log(E) with E = -log(1 - U) exponential; the clamp keeps E = 0 (U = 0) finite.
    tiny = finfo(logits._dtype).tiny
    exponential = unary.clamp(unary.neg(unary.log1p(unary.neg(uniform))), min=tiny)
    gumbels = unary.neg(unary.log(exponential))
    soft = softmax(ew.div(ew.add(logits, gumbels), tau), dim)
    if not hard:
        return soft
    d = wrap_dim(dim, logits.ndim, "gumbel_softmax")
    index = reduction.argmax(soft, d, keepdim=True)
    one_hot = soft.detach().mul(0.0).scatter(d, index, 1.0)
    return ew.add(ew.sub(one_hot, soft.detach()), soft)
