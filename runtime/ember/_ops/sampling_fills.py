"""In-place fills from the classic distributions (`exponential_`, `geometric_`,
`log_normal_`, `cauchy_`) by inverting their CDFs on the uniform stream, and
`randint_like`; composites, so every device draws the same numbers for a seed."""

from __future__ import annotations

import math

from ember import _dtype
from ember._device import DeviceLike
from ember._ops import conversion as conv
from ember._ops import random as rnd
from ember._ops import unary
from ember._ops.creation import _requiring_grad, resolve_device
from ember._ops.sampling import _name
from ember._tensor import Tensor, empty_tensor

__all__ = ["cauchy_", "exponential_", "geometric_", "log_normal_", "randint_like"]


def _open_uniform(t: Tensor, generator: rnd.Generator | None) -> Tensor:
    """U(0, 1] in float64 with `t`'s shape (1 - U[0, 1): its log is finite)."""
    u = rnd.rand(*t._shape, generator=generator, dtype=_dtype.float64, device=t._device)
    return 1.0 - u


def _fill(t: Tensor, values: Tensor) -> Tensor:
    conv.copy_(t, values)
    return t


def _require_float(t: Tensor, what: str) -> None:
    if not t._dtype.is_floating_point:
        raise RuntimeError(
            f"{what} is a continuous probability distribution. dtype must be a floating "
            f"point but you specified {_name(t)}"
        )


def exponential_(
    t: Tensor, lambd: float = 1.0, *, generator: rnd.Generator | None = None
) -> Tensor:
    """Fill `t` with Exponential(lambd) samples: -log(u) / lambd."""
    _require_float(t, "Exponential distribution")
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return _fill(t, unary.log(_open_uniform(t, generator)) * (-1.0 / lambd))


def geometric_(t: Tensor, p: float, *, generator: rnd.Generator | None = None) -> Tensor:
    """Fill `t` with the trial index of the first success (1, 2, ...) at probability p."""
    if not 0.0 < p < 1.0:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    trials = unary.ceil(unary.log(_open_uniform(t, generator)) / math.log1p(-p))
    return _fill(t, unary.clamp(trials, min=1.0))


def log_normal_(
    t: Tensor, mean: float = 1.0, std: float = 2.0, *, generator: rnd.Generator | None = None
) -> Tensor:
    """Fill `t` with exp(N(mean, std²)) samples."""
    _require_float(t, "LogNormal distribution")
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    z = rnd.randn(*t._shape, generator=generator, dtype=_dtype.float64, device=t._device)
    return _fill(t, unary.exp(z * std + mean))


def cauchy_(
    t: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator: rnd.Generator | None = None
) -> Tensor:
    """Fill `t` with Cauchy(median, sigma) samples: median + sigma tan(pi (u - 1/2))."""
    _require_float(t, "Cauchy distribution")
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    angle = (_open_uniform(t, generator) - 0.5) * math.pi
    return _fill(t, unary.sin(angle) / unary.cos(angle) * sigma + median)


def randint_like(
    input: Tensor,
    low: int = 0,
    high: int | None = None,
    *,
    generator: rnd.Generator | None = None,
    dtype: _dtype.dtype | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """Integers in [low, high) with `input`'s shape (randint_like(x, high) means [0, high))."""
    if high is None:
        low, high = 0, low
    dev = input._device if device is None else resolve_device(device)
    out = empty_tensor(input._shape, dtype or input._dtype, dev)
    return _requiring_grad(
        rnd.random_(out, int(low), int(high), generator=generator), requires_grad
    )
