"""Weight initialisation (PyTorch's torch.nn.init): in place, without recording the graph.

Random fills draw from the tensor's device generator (or `generator=`), so
`ember.manual_seed` makes a model's initial weights reproducible on every device.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from ember._ops import conversion, random, unary
from ember._ops import elementwise as ew
from ember._tensor import Tensor, make_view
from ember.autograd._mode import no_grad
from ember.nn._init_structured import deprecated_alias, dirac_, orthogonal_, sparse_

__all__ = [
    "calculate_gain",
    "constant_",
    "eye_",
    "kaiming_normal_",
    "kaiming_uniform_",
    "normal_",
    "ones_",
    "trunc_normal_",
    "uniform_",
    "xavier_normal_",
    "xavier_uniform_",
    "zeros_",
]
__all__ += ["dirac_", "orthogonal_", "sparse_"]
__all__ += ["constant", "dirac", "eye", "kaiming_normal", "kaiming_uniform", "normal"]
__all__ += ["orthogonal", "sparse", "uniform", "xavier_normal", "xavier_uniform"]

_LINEAR = frozenset(
    {"linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
     "conv_transpose3d", "sigmoid"}
)  # fmt: skip


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (PyTorch's table)."""
    if nonlinearity in _LINEAR:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out): input and output feature maps times the receptive field size."""
    if tensor.ndim < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = 1
    for size in tensor._shape[2:]:
        receptive *= size
    return tensor._shape[1] * receptive, tensor._shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _is_empty(tensor: Tensor) -> bool:
    if 0 in tensor._shape:
        warnings.warn("Initializing zero-element tensors is a no-op", UserWarning, stacklevel=3)
        return True
    return False


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with values uniform in [a, b)."""
    with no_grad():
        return random.uniform_(tensor, a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with normal samples N(mean, std²)."""
    with no_grad():
        return random.normal_(tensor, mean, std, generator=generator)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with `val`."""
    with no_grad():
        return conversion.fill_(tensor, val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones."""
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros."""
    return constant_(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity matrix."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        conversion.fill_(tensor, 0.0)
        rows, columns = tensor._shape
        step = tensor._strides[0] + tensor._strides[1]
        diagonal = make_view(tensor, tensor._offset, (min(rows, columns),), (step,))
        conversion.fill_(diagonal, 1.0)
        return tensor


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot normal: N(0, std²) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """He uniform: U(-b, b) with b = gain * sqrt(3 / fan)."""
    if _is_empty(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """He normal: N(0, std²) with std = gain / sqrt(fan)."""
    if _is_empty(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)


def _erfinv(y: Tensor) -> Tensor:
    """Inverse error function: Giles' single-precision approximation, then Newton steps."""
    w = unary.neg(unary.log(ew.mul(ew.sub(1.0, y), ew.add(1.0, y))))
    central = ew.sub(w, 2.5)
    tail = ew.sub(unary.sqrt(w), 3.0)
    p_central = _polynomial(
        central,
        (
            2.81022636e-08,
            3.43273939e-07,
            -3.5233877e-06,
            -4.39150654e-06,
            0.00021858087,
            -0.00125372503,
            -0.00417768164,
            0.246640727,
            1.50140941,
        ),
    )
    p_tail = _polynomial(tail, (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
        0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682))  # fmt: skip
    x = ew.mul(unary.where(ew.lt(w, 5.0), p_central, p_tail), y)
    for _ in range(2):
        # x -= (erf(x) - y) / erf'(x), with erf'(x) = 2 / sqrt(pi) * exp(-x²)
        slope = ew.mul(unary.exp(unary.neg(ew.mul(x, x))), 2.0 / math.sqrt(math.pi))
        x = ew.sub(x, ew.div(ew.sub(unary.erf(x), y), slope))
    return x


def _polynomial(x: Tensor, coefficients: tuple[float, ...]) -> Tensor:
    result = ew.add(ew.mul(x, coefficients[0]), coefficients[1])
    for c in coefficients[2:]:
        result = ew.add(ew.mul(result, x), c)
    return result


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Any = None,
) -> Tensor:
    """Normal samples N(mean, std²) restricted to [a, b] (inverse-CDF sampling)."""

    def cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of "
            "values may be incorrect.",
            UserWarning,
            stacklevel=2,
        )
    with no_grad():
        low, high = cdf((a - mean) / std), cdf((b - mean) / std)
        random.uniform_(tensor, 2 * low - 1, 2 * high - 1, generator=generator)
        values = ew.add(ew.mul(_erfinv(tensor), std * math.sqrt(2.0)), mean)
        conversion.copy_(tensor, unary.clamp(values, a, b))
        return tensor


# The deprecated names PyTorch still exports (each warns with a FutureWarning).
uniform = deprecated_alias(uniform_)
normal = deprecated_alias(normal_)
constant = deprecated_alias(constant_)
eye = deprecated_alias(eye_)
dirac = deprecated_alias(dirac_)
xavier_uniform = deprecated_alias(xavier_uniform_)
xavier_normal = deprecated_alias(xavier_normal_)
kaiming_uniform = deprecated_alias(kaiming_uniform_)
kaiming_normal = deprecated_alias(kaiming_normal_)
orthogonal = deprecated_alias(orthogonal_)
sparse = deprecated_alias(sparse_)
