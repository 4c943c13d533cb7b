"""Statistics as composite ops over the reductions: var, std and logsumexp.

Each is defined in names.py as a composite, so a device may override it with a fused
kernel (taken outside autograd, like every fused composite); otherwise it is written in
ember ops, which record the graph.
"""

from __future__ import annotations

import builtins
import math

from ember import _dtype
from ember._dispatch import Kernel, Op
from ember._errors import DTypeError
from ember._ops import conversion as conv
from ember._ops import elementwise as ew
from ember._ops import names, unary
from ember._ops import shape as shape_ops
from ember._ops.reduction import (
    _TORCH_NAMES,
    DimArg,
    Dims,
    _count,
    _dims,
    _fused,
    _run,
    amax,
    mean,
    sum,
)
from ember._tensor import Tensor

__all__ = ["logsumexp", "std", "var"]

VAR, STD, LOGSUMEXP = names.VAR, names.STD, names.LOGSUMEXP


def var(
    input: Tensor,
    dim: DimArg = None,
    *,
    correction: float | None = 1,
    keepdim: bool = False,
    unbiased: bool | None = None,
) -> Tensor:
    """Variance over `dim` with Bessel's `correction`; nan where too few elements."""
    if unbiased is not None:  # the older spelling of correction=1 / correction=0
        correction = 1 if unbiased else 0
    t, dims, fused = _statistic(VAR, input, dim, "var")
    correction = 1 if correction is None else correction
    if fused is not None:
        return _run(fused, t, dims, keepdim, t._dtype, correction)
    # Two passes (mean, then squared deviations) to avoid the cancellation of E[x²] - E[x]².
    centered = ew.sub(t, mean(t, dims, keepdim=True))
    squares = sum(ew.mul(centered, centered), dims, keepdim)
    return ew.div(squares, float(builtins.max(0, _count(t._shape, dims) - correction)))


def std(
    input: Tensor,
    dim: DimArg = None,
    *,
    correction: float | None = 1,
    keepdim: bool = False,
    unbiased: bool | None = None,
) -> Tensor:
    """Standard deviation over `dim` with Bessel's `correction`."""
    if unbiased is not None:  # the older spelling of correction=1 / correction=0
        correction = 1 if unbiased else 0
    t, dims, fused = _statistic(STD, input, dim, "std")
    if fused is not None:
        return _run(fused, t, dims, keepdim, t._dtype, 1 if correction is None else correction)
    return unary.sqrt(var(t, dims, correction=correction, keepdim=keepdim))


def _statistic(op: Op, t: Tensor, dim: DimArg, name: str) -> tuple[Tensor, Dims, Kernel | None]:
    if not t._dtype.is_floating_point:
        raise DTypeError(
            f"{name}(): std and var only support floating point and complex dtypes, "
            f"got {_TORCH_NAMES[t._dtype.name]}"
        )
    return t, _dims(t, dim, name), _fused(op, t)


def logsumexp(input: Tensor, dim: DimArg, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) over `dim`, without overflow; integers compute in the default float."""
    t = input
    if not t._dtype.is_floating_point:
        t = conv.cast(t, _dtype.get_default_dtype())
    dims = _dims(t, dim, "logsumexp")
    fused = _fused(LOGSUMEXP, t)
    if fused is not None:
        return _run(fused, t, dims, keepdim, t._dtype)
    if t.numel() == 0:
        return unary.log(sum(unary.exp(t), dims, keepdim))
    # Shift by the maximum so exp() cannot overflow; an infinite maximum would turn the
    # shifted values into nan (inf - inf), so it shifts by 0 instead. The shift cancels
    # out of the gradient, hence the detach.
    peak = amax(t.detach(), dims, keepdim=True)
    peak = unary.where(ew.eq(unary.abs(peak), math.inf), 0.0, peak)
    total = sum(unary.exp(ew.sub(t, peak)), dims, keepdim)
    if not keepdim:
        peak = shape_ops.reshape(peak, total._shape)
    return ew.add(unary.log(total), peak)
