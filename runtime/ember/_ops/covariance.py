"""cov and corrcoef: the (weighted) covariance and correlation matrices of variables in
rows, observations in columns, composites over the reductions and matmul, as numpy.cov."""

from __future__ import annotations

from ember import _dtype
from ember._ops import conversion as conv
from ember._ops import elementwise as ew
from ember._ops import linalg, reduction, triangle, unary
from ember._ops import shape as shape_ops
from ember._tensor import Tensor

__all__ = ["corrcoef", "cov"]


def cov(
    input: Tensor,
    *,
    correction: int = 1,
    fweights: Tensor | None = None,
    aweights: Tensor | None = None,
) -> Tensor:
    """The covariance matrix of the rows of `input` (a 0-d variance for a 1-d input), with
    integer frequency weights `fweights` and observation weights `aweights`."""
    if input.ndim > 2:
        raise RuntimeError(
            "cov(): expected input to have two or fewer dimensions but got an input with "
            f"{input.ndim} dimensions"
        )
    rows = input if input.ndim == 2 else shape_ops.reshape(input, 1, -1)
    if not rows._dtype.is_floating_point:
        rows = conv.cast(rows, _dtype.get_default_dtype())
    observations = rows._shape[1]
    weights = _weights(fweights, aweights, observations, rows)
    if weights is None:
        mean = reduction.mean(rows, 1, keepdim=True)
        scale: float | Tensor = float(observations) - correction
    else:
        sum_weights = reduction.sum(weights)
        mean = ew.div(reduction.sum(ew.mul(rows, weights), 1, keepdim=True), sum_weights)
        if aweights is None:
            scale = ew.sub(sum_weights, correction)
        else:
            second = ew.div(
                reduction.sum(ew.mul(weights, conv.cast(aweights, rows._dtype))), sum_weights
            )
            scale = ew.sub(sum_weights, ew.mul(second, correction))
    centered = ew.sub(rows, mean)
    weighted = centered if weights is None else ew.mul(centered, weights)
    products = linalg.matmul(centered, weighted.transpose(0, 1))
    scale = unary.clamp(scale, 0.0) if isinstance(scale, Tensor) else max(scale, 0.0)
    result = ew.div(products, scale)
    # One variable gives a 0-d variance, as in PyTorch (and numpy.cov).
    return shape_ops.reshape(result, ()) if rows._shape[0] == 1 else result


def corrcoef(input: Tensor) -> Tensor:
    """The Pearson correlation coefficients of the rows of `input`, clipped to [-1, 1]."""
    covariance = cov(input)
    if covariance.ndim == 0:
        return ew.div(covariance, covariance)
    spread = unary.sqrt(triangle.diagonal(covariance))
    scaled = ew.div(
        ew.div(covariance, shape_ops.reshape(spread, -1, 1)), shape_ops.reshape(spread, 1, -1)
    )
    return unary.clamp(scaled, -1.0, 1.0)


def _weights(
    fweights: Tensor | None, aweights: Tensor | None, observations: int, rows: Tensor
) -> Tensor | None:
    """The product of the given weights as one row (1, observations), after their checks."""
    weights: Tensor | None = None
    for w, name in ((fweights, "fweights"), (aweights, "aweights")):
        if w is None:
            continue
        if w.ndim > 1:
            raise RuntimeError(
                f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                f"{w.ndim} dimensions"
            )
        if w.numel() != observations:
            raise RuntimeError(
                f"cov(): expected {name} to have the same numel as there are observations in "
                f"the input but got {w.numel()} != {observations}"
            )
        if name == "fweights" and w._dtype.is_floating_point:
            raise RuntimeError(
                "cov(): expected fweights to have integral dtype but got fweights with "
                f"{w._dtype.name.capitalize()} dtype"
            )
        if w.numel() and float(reduction.amin(w).item()) < 0:
            raise RuntimeError(f"cov(): {name} cannot be negative")
        row = shape_ops.reshape(conv.cast(w, rows._dtype), 1, -1)
        weights = row if weights is None else ew.mul(weights, row)
    return weights
