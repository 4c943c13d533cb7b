"""cumprod, cummax, cummin and logcumsumexp as composite scans.

Each is a Hillis-Steele scan written in ember ops: ceil(log2 n) passes, pass k combining
every element with the running result 2**k places before it (narrows and one cat per
pass). That is O(n log n) work instead of a scan kernel's O(n), but it is correct where
shortcuts are not: cumprod is not exp(cumsum(log |x|)) (wrong for zeros and signs), and
logcumsumexp combines pairs through logsumexp (stable for any range, -inf included).
Autograd follows the parts, so cumprod's gradient is right with zeros in the input, and
cummax/cummin send each gradient to the element whose value was chosen (as PyTorch's
scatter to `indices` does).
"""

from __future__ import annotations

from collections.abc import Callable

from ember import _dtype
from ember._errors import DTypeError
from ember._ops import conversion as conv
from ember._ops import elementwise as ew
from ember._ops import shape as shape_ops
from ember._ops import unary
from ember._ops._meta import wrap_dim
from ember._ops.creation import arange
from ember._ops.reduction import ValuesIndices
from ember._ops.statistics import logsumexp
from ember._tensor import Tensor

__all__ = ["cummax", "cummin", "cumprod", "logcumsumexp"]

Combine = Callable[[Tensor, Tensor], Tensor]


def _scan(t: Tensor, d: int, combine: Combine) -> Tensor:
    """Inclusive scan of `t` along `d`: combine(earlier, later) must be associative."""
    n = t._shape[d] if t._shape else 1  # a 0-d tensor scans as one element
    result = t
    step = 1
    while step < n:
        head = shape_ops.narrow(result, d, 0, step)
        combined = combine(
            shape_ops.narrow(result, d, 0, n - step), shape_ops.narrow(result, d, step, n - step)
        )
        result = shape_ops.cat([head, combined], d)
        step *= 2
    return conv.clone(result) if result is t else result


def cumprod(input: Tensor, dim: int, *, dtype: _dtype.dtype | None = None) -> Tensor:
    """Cumulative product along `dim`; integers and bool accumulate in int64 (as cumsum)."""
    d = wrap_dim(dim, len(input._shape), "cumprod")
    if dtype is None:
        dtype = input._dtype if input._dtype.is_floating_point else _dtype.int64
    return _scan(conv.to(input, dtype), d, ew.mul)


def cumprod_(input: Tensor, dim: int, *, dtype: _dtype.dtype | None = None) -> Tensor:
    """In-place cumprod (the result cast back to `input`'s dtype)."""
    return conv.copy_(input, cumprod(input, dim, dtype=dtype))


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """log(cumsum(exp(input))) along `dim`, computed stably."""
    if not input._dtype.is_floating_point:
        raise DTypeError(f"logcumsumexp(): expected floating point input, got {input._dtype.name}")
    d = wrap_dim(dim, len(input._shape), "logcumsumexp")

    def combine(earlier: Tensor, later: Tensor) -> Tensor:
        return logsumexp(shape_ops.stack([earlier, later], 0), 0)

    return _scan(input, d, combine)


def cummax(input: Tensor, dim: int) -> ValuesIndices:
    """Running maximum along `dim` and the index where it was (the last of ties; NaN wins)."""
    return _running_extreme(input, dim, "cummax", ew.ge)


def cummin(input: Tensor, dim: int) -> ValuesIndices:
    """Running minimum along `dim` and the index where it was (the last of ties; NaN wins)."""
    return _running_extreme(input, dim, "cummin", ew.le)


def _running_extreme(
    t: Tensor, dim: int, op: str, later_wins: Callable[[Tensor, Tensor], Tensor]
) -> ValuesIndices:
    rank = len(t._shape)
    d = wrap_dim(dim, rank, op)
    if rank == 0:
        return ValuesIndices(conv.clone(t), conv.to(ew.mul(t, 0), _dtype.int64))
    n = t._shape[d]
    positions = arange(n, dtype=_dtype.int64, device=t._device)
    positions = shape_ops.view(positions, *[n if i == d else 1 for i in range(rank)])
    values = t
    indices = shape_ops.expand(positions, *t._shape)
    step = 1
    while step < n:
        early_v = shape_ops.narrow(values, d, 0, n - step)
        late_v = shape_ops.narrow(values, d, step, n - step)
        # PyTorch's sequential rule `x >= best or isnan(x)` over two segments: the later
        # segment's result wins when it is NaN or at least the earlier one.
        take_late = ew.logical_or(later_wins(late_v, early_v), ew.ne(late_v, late_v))
        early_i = shape_ops.narrow(indices, d, 0, n - step)
        late_i = shape_ops.narrow(indices, d, step, n - step)
        values = shape_ops.cat(
            [shape_ops.narrow(values, d, 0, step), unary.where(take_late, late_v, early_v)], d
        )
        indices = shape_ops.cat(
            [shape_ops.narrow(indices, d, 0, step), unary.where(take_late, late_i, early_i)], d
        )
        step *= 2
    if values is t:
        values, indices = conv.clone(t), conv.clone(indices)
    return ValuesIndices(values, indices)
