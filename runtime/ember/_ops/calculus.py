"""Numerical integration and differentiation of sampled values: trapezoid (trapz),
cumulative_trapezoid and gradient, composites over narrow, diff-like slices and cumsum.

gradient uses second-order central differences inside and first- or second-order one-sided
differences at the edges (`edge_order`), for uniform spacing or sample coordinates alike:
each point's estimate is a weighted sum of its two neighbours and itself, the weights made
from the spacings on either side (equal spacings give (f[i+1] - f[i-1]) / 2h).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember import _dtype
from ember._ops import conversion as conv
from ember._ops import creation, reduction, unary
from ember._ops import elementwise as ew
from ember._ops import shape as shape_ops
from ember._ops._meta import wrap_dim
from ember._tensor import Tensor

__all__ = ["cumulative_trapezoid", "gradient", "trapezoid", "trapz"]


def trapezoid(
    y: Tensor, x: Tensor | None = None, *, dx: float | None = None, dim: int = -1
) -> Tensor:
    """The trapezoidal rule's integral of `y` along `dim`, at coordinates `x` or spacing `dx`."""
    d = wrap_dim(dim, y.ndim, "trapezoid")
    return reduction.sum(_areas(y, x, dx, d, "trapezoid"), d)


def trapz(y: Tensor, x: Tensor | None = None, *, dx: float | None = None, dim: int = -1) -> Tensor:
    """trapezoid, by its older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(
    y: Tensor, x: Tensor | None = None, *, dx: float | None = None, dim: int = -1
) -> Tensor:
    """The running trapezoidal integral of `y` along `dim` (one element fewer there)."""
    d = wrap_dim(dim, y.ndim, "cumulative_trapezoid")
    return reduction.cumsum(_areas(y, x, dx, d, "cumulative_trapezoid"), d)


def _areas(y: Tensor, x: Tensor | None, dx: float | None, d: int, name: str) -> Tensor:
    """The trapezoids' areas between consecutive samples along `d`."""
    if x is not None and dx is not None:
        raise RuntimeError(f"{name}: received both x and dx; only one may be specified")
    source = y if y._dtype.is_floating_point else conv.cast(y, _dtype.get_default_dtype())
    n = source._shape[d]
    if n == 0:
        shape = tuple(0 if j == d else s for j, s in enumerate(source._shape))
        return creation.zeros(shape, dtype=source._dtype, device=y._device)
    means = ew.mul(ew.add(source.narrow(d, 1, n - 1), source.narrow(d, 0, n - 1)), 0.5)
    if x is None:
        return ew.mul(means, 1.0 if dx is None else float(dx))
    if x.ndim == 1:
        if x._shape[0] != n:
            raise RuntimeError(
                f"{name}: There must be one `x` value for each sample point, but got "
                f"{x._shape[0]} and {n} along dimension {d}"
            )
        gaps = ew.sub(x.narrow(0, 1, n - 1), x.narrow(0, 0, n - 1))
        spacing = _along(gaps, source.ndim, d)
    else:
        xd = d - source.ndim + x.ndim if x.ndim < source.ndim else d
        m = x._shape[xd]
        spacing = ew.sub(x.narrow(xd, 1, m - 1), x.narrow(xd, 0, m - 1))
    return ew.mul(means, spacing)


def gradient(
    input: Tensor, *, spacing: Any = 1, dim: int | Sequence[int] | None = None, edge_order: int = 1
) -> tuple[Tensor, ...]:
    """The derivative estimated along each of `dim` (every dim by default), one tensor per dim.

    `spacing` is one number for all dims, one number per dim, or per dim a 1-d tensor of
    the sample coordinates.
    """
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if dim is None:
        dims = list(range(input.ndim))
    elif isinstance(dim, int):
        dims = [wrap_dim(dim, input.ndim, "gradient")]
    else:
        dims = [wrap_dim(d, input.ndim, "gradient") for d in dim]
    spacings = _spacings(spacing, len(dims))
    source = (
        input if input._dtype.is_floating_point else conv.cast(input, _dtype.get_default_dtype())
    )
    results = []
    for d, step in zip(dims, spacings, strict=True):
        if source._shape[d] < edge_order + 1:
            raise RuntimeError(
                "torch.gradient expected each dimension size to be at least edge_order+1"
            )
        results.append(_derivative(source, d, step, edge_order))
    return tuple(results)


def _spacings(spacing: Any, count: int) -> list[Any]:
    if isinstance(spacing, (int, float)):
        return [float(spacing)] * count
    if isinstance(spacing, Tensor) and spacing.ndim == 0:
        return [float(spacing.item())] * count
    items = list(spacing)
    if len(items) == 1 and count != 1 and not isinstance(items[0], Tensor):
        items = items * count
    if len(items) != count:
        raise RuntimeError(
            f"torch.gradient expected spacing to be unspecified, a scalar or a list of length "
            f"equal to 'self.dim() = {count}', since dim argument was not given, but got a "
            f"list of length {len(items)}"
        )
    return [float(s.item()) if isinstance(s, Tensor) and s.ndim == 0 else s for s in items]


def _derivative(f: Tensor, d: int, step: Any, edge_order: int) -> Tensor:
    n = f._shape[d]
    if isinstance(step, Tensor):
        coordinates = conv.cast(step, f._dtype)
        if coordinates.ndim != 1 or coordinates._shape[0] != n:
            raise RuntimeError(
                "torch.gradient expected each tensor to be on the same device and to have the "
                "size of the dimension it differentiates"
            )
    else:
        coordinates = ew.mul(creation.arange(n, dtype=f._dtype, device=f._device), step)
    gaps = ew.sub(coordinates.narrow(0, 1, n - 1), coordinates.narrow(0, 0, n - 1))
    parts = [_edge(f, d, gaps, edge_order, first=True)]
    if n > 2:
        left, right = gaps.narrow(0, 0, n - 2), gaps.narrow(0, 1, n - 2)
        total = ew.add(left, right)
        before = unary.neg(ew.div(right, ew.mul(left, total)))
        here = ew.div(ew.sub(right, left), ew.mul(left, right))
        after = ew.div(left, ew.mul(right, total))
        parts.append(_weighted(f, d, 0, n - 2, (before, here, after)))
    parts.append(_edge(f, d, gaps, edge_order, first=False))
    return shape_ops.cat(parts, d)


def _edge(f: Tensor, d: int, gaps: Tensor, edge_order: int, first: bool) -> Tensor:
    n = f._shape[d]
    if edge_order == 1:
        start, gap = (0, gaps.narrow(0, 0, 1)) if first else (n - 2, gaps.narrow(0, n - 2, 1))
        step = ew.sub(f.narrow(d, start + 1, 1), f.narrow(d, start, 1))
        return ew.div(step, _along(gap, f.ndim, d))
    if first:
        h1, h2 = gaps.narrow(0, 0, 1), gaps.narrow(0, 1, 1)
        total = ew.add(h1, h2)
        weights = (
            unary.neg(ew.div(ew.add(ew.mul(h1, 2.0), h2), ew.mul(h1, total))),
            ew.div(total, ew.mul(h1, h2)),
            unary.neg(ew.div(h1, ew.mul(h2, total))),
        )
        return _weighted(f, d, 0, 1, weights)
    h1, h2 = gaps.narrow(0, n - 3, 1), gaps.narrow(0, n - 2, 1)
    total = ew.add(h1, h2)
    weights = (
        ew.div(h2, ew.mul(h1, total)),
        unary.neg(ew.div(total, ew.mul(h1, h2))),
        ew.div(ew.add(ew.mul(h2, 2.0), h1), ew.mul(h2, total)),
    )
    return _weighted(f, d, n - 3, 1, weights)


def _weighted(f: Tensor, d: int, start: int, length: int, weights: tuple[Tensor, ...]) -> Tensor:
    """sum_k weights[k] * f[start + k : start + k + length] along `d`."""
    total: Tensor | None = None
    for k, w in enumerate(weights):
        term = ew.mul(f.narrow(d, start + k, length), _along(w, f.ndim, d))
        total = term if total is None else ew.add(total, term)
    assert total is not None
    return total


def _along(v: Tensor, ndim: int, d: int) -> Tensor:
    shape = [1] * ndim
    shape[d] = v._shape[0]
    return shape_ops.reshape(v, *shape)
