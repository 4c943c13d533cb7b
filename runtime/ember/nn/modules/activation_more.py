"""More activation layers (CELU ... Threshold, PReLU with its learnt slopes) and the alpha
dropout layers of self-normalising networks."""

from __future__ import annotations

from typing import Any

from ember._ops import creation
from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn import init
from ember.nn.modules.dropout import _DropoutNd
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = [
    "CELU",
    "GLU",
    "SELU",
    "AlphaDropout",
    "FeatureAlphaDropout",
    "Hardshrink",
    "Hardsigmoid",
    "Hardswish",
    "Mish",
    "PReLU",
    "RReLU",
    "Softmax2d",
    "Softshrink",
    "Softsign",
    "Tanhshrink",
    "Threshold",
]  # fmt: skip


def _inplace_suffix(inplace: bool) -> str:
    return ", inplace=True" if inplace else ""


class CELU(Module):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"


class SELU(Module):
    """Scaled ELU with the self-normalising constants."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.selu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class GLU(Module):
    """First half of `dim` times the sigmoid of the second half."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Hardshrink(Module):
    """x where |x| > lambd, 0 elsewhere."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """x shrunk toward 0 by lambd (0 within lambd)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class _InplaceActivation(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Hardsigmoid(_InplaceActivation):
    """Piecewise-linear sigmoid: clamp(x / 6 + 1/2, 0, 1)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.hardsigmoid(input, self.inplace)


class Hardswish(_InplaceActivation):
    """x * hardsigmoid(x)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.hardswish(input, self.inplace)


class Mish(_InplaceActivation):
    """x * tanh(softplus(x))."""

    def forward(self, input: Tensor) -> Tensor:
        return F.mish(input, self.inplace)


class Softsign(Module):
    """x / (1 + |x|)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softsign(input)


class Tanhshrink(Module):
    """x - tanh(x)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.tanhshrink(input)


class Threshold(Module):
    """x where x > threshold, value elsewhere."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        suffix = _inplace_suffix(self.inplace)
        return f"threshold={self.threshold}, value={self.value}{suffix}"


class PReLU(Module):
    """Leaky ReLU with a learnt negative slope: one shared, or one per channel (dim 1)."""

    def __init__(
        self, num_parameters: int = 1, init: float = 0.25, device: Any = None, dtype: Any = None
    ) -> None:
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(creation.empty((num_parameters,), device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Leaky ReLU with a random slope in [lower, upper] in training, their mean in eval."""

    def __init__(
        self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False
    ) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace_suffix(self.inplace)}"


class Softmax2d(Module):
    """Softmax over the channels at every spatial location of (N, C, H, W) or (C, H, W)."""

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, -3, _stacklevel=5)


class AlphaDropout(_DropoutNd):
    """Alpha dropout in training (keeps a SELU network's mean and variance), identity in eval."""

    def forward(self, input: Tensor) -> Tensor:
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels in training, identity in eval."""

    def forward(self, input: Tensor) -> Tensor:
        return F.feature_alpha_dropout(input, self.p, self.training)
