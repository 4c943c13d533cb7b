"""The fused updates PyTorch's optimizers use (lerp_, addcmul_, addcdiv_), composed of ember ops.

Temporaries are updated in place, so no step allocates more than it must. Each follows the
operation order of PyTorch's CPU kernels (`self + value * a / b` is `self + (value * a) / b`),
so results agree to the last bits that fused multiply-adds change.
"""

from __future__ import annotations

from ember._ops import div, mul, sub
from ember._tensor import Tensor

__all__ = ["addcdiv_", "addcmul_", "lerp_"]


def lerp_(start: Tensor, end: Tensor, weight: float) -> Tensor:
    """start += weight * (end - start), computed from the nearer end as PyTorch's kernel does."""
    if abs(weight) < 0.5:
        return start.add_(sub(end, start).mul_(weight))
    # end - (end - start) * (1 - weight), written into start
    return start.copy_(sub(end, sub(end, start).mul_(1.0 - weight)))


def addcmul_(t: Tensor, a: Tensor, b: Tensor, value: float = 1.0) -> Tensor:
    """t += value * a * b."""
    return t.add_(mul(a, value).mul_(b) if value != 1 else mul(a, b))


def addcdiv_(t: Tensor, a: Tensor, b: Tensor, value: float = 1.0) -> Tensor:
    """t += value * a / b."""
    return t.add_(mul(a, value).div_(b) if value != 1 else div(a, b))
