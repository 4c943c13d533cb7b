"""Power-average, unpooling and fractional max pooling, as composites.

lp_pool* follow PyTorch's formula on avg_pool* (sign(out) * relu(|out|) * window)^(1/p);
max_unpool* scatter each value to its saved flat index in a zero plane; fractional max
pooling gathers each plane's pseudo-random windows (PyTorch's interval rule from the
per-plane samples) and takes their max. Autograd comes from the parts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember import _dtype
from ember._ops import creation, indexing, random, reduction, unary
from ember._tensor import Tensor
from ember.nn.functional._pool import avg_pool2d, max_pool2d
from ember.nn.functional._pool3d import avg_pool1d, avg_pool3d, max_pool1d, max_pool3d

__all__ = [
    "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d",
    "max_unpool1d", "max_unpool2d", "max_unpool3d",
]  # fmt: skip

IntArg = int | Sequence[int]


def _ntuple(value: Any, n: int) -> tuple[Any, ...]:
    if isinstance(value, (int, float)):
        return (value,) * n
    values = tuple(value)
    return values * n if len(values) == 1 else values


# -- power-average pooling -----------------------------------------------------------------------


def _lp_finish(out: Tensor, norm_type: float, window: int) -> Tensor:
    return (unary.sign(out) * unary.relu(unary.abs(out))).mul(window).pow(1.0 / norm_type)


def lp_pool1d(
    input: Tensor, norm_type: float, kernel_size: int, stride: IntArg | None = None,
    ceil_mode: bool = False,
) -> Tensor:  # fmt: skip
    """(sum of x^p over each window)^(1/p) of (N, C, L) input."""
    if norm_type == math.inf:
        return max_pool1d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return -max_pool1d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_finish(out, norm_type, _ntuple(kernel_size, 1)[0])


def lp_pool2d(
    input: Tensor, norm_type: float, kernel_size: IntArg, stride: IntArg | None = None,
    ceil_mode: bool = False,
) -> Tensor:  # fmt: skip
    """(sum of x^p over each window)^(1/p) of (N, C, H, W) input."""
    if norm_type == math.inf:
        return max_pool2d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return -max_pool2d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_finish(out, norm_type, math.prod(_ntuple(kernel_size, 2)))


def lp_pool3d(
    input: Tensor, norm_type: float, kernel_size: IntArg, stride: IntArg | None = None,
    ceil_mode: bool = False,
) -> Tensor:  # fmt: skip
    """(sum of x^p over each window)^(1/p) of (N, C, D, H, W) input."""
    if norm_type == math.inf:
        return max_pool3d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return -max_pool3d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_finish(out, norm_type, math.prod(_ntuple(kernel_size, 3)))


# -- unpooling -------------------------------------------------------------------------------------


def _unpool_output_size(
    input: Tensor, kernel: tuple[int, ...], stride: tuple[int, ...], padding: tuple[int, ...],
    output_size: Sequence[int] | None,
) -> list[int]:  # fmt: skip
    """PyTorch's _unpool_output_size: the default size, or a checked requested one."""
    n = len(kernel)
    default = [(input.shape[-n + d] - 1) * stride[d] + kernel[d] - 2 * padding[d] for d in range(n)]
    if output_size is None:
        result = default
    else:
        size = list(output_size)
        if len(size) == n + 2:
            size = size[2:]
        if len(size) != n:
            raise ValueError(
                f"output_size should be a sequence containing {n} or {n + 2} elements, but it "
                f"has a length of '{len(size)}'"
            )
        for d in range(n):
            low, high = default[d] - stride[d], default[d] + stride[d]
            if not low < size[d] < high:
                raise ValueError(
                    f'invalid output_size "{size}" (dim {d} must be between {low} and {high})'
                )
        result = size
    for d in range(n):
        if result[d] < 0:
            raise ValueError(
                "max_unpooling: output_size must contain non-negative spatial dimensions, but "
                f"got output_size[{d}]={result[d]}"
            )
    return result


def _max_unpool(
    name: str, spatial: int, input: Tensor, indices: Tensor, kernel_size: IntArg,
    stride: IntArg | None, padding: IntArg, output_size: Sequence[int] | None,
) -> Tensor:  # fmt: skip
    if indices._dtype is not _dtype.int64:
        raise RuntimeError(f"{name}(): elements in indices should be type int64 but got: "
                           f"{indices._dtype.name}")  # fmt: skip
    if tuple(input.shape) != tuple(indices.shape):
        raise RuntimeError(
            "Expected shape of indices to be same as that of the input tensor "
            f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}"
        )
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(
            f"{name}(): Expected {spatial + 1}D or {spatial + 2}D tensor, but got "
            f"{list(input.shape)}"
        )
    kernel = _ntuple(kernel_size, spatial)
    strides = kernel if stride is None else _ntuple(stride, spatial)
    size = _unpool_output_size(input, kernel, strides, _ntuple(padding, spatial), output_size)
    lead = input.shape[:-spatial]
    flat_in = input.reshape(*lead, -1)
    plane = math.prod(size)
    flat_index = indices.reshape(*lead, -1)
    if flat_index.numel():
        low, high = int(flat_index.min().item()), int(flat_index.max().item())
        if low < 0 or high >= plane:
            host = flat_index.numpy(force=True).ravel()
            bad = host[(host < 0) | (host >= plane)][0]
            shown = [*size, 1] if spatial == 1 else size  # 1-d runs as a width-1 image there
            raise RuntimeError(
                f"Found an invalid max index: {bad} (output volumes are of size "
                f"{'x'.join(map(str, shown))})"
            )
    zeros = creation.zeros((*lead, plane), dtype=input._dtype, device=input._device)
    return indexing.scatter(zeros, -1, flat_index, flat_in).reshape(*lead, *size)


def max_unpool1d(
    input: Tensor, indices: Tensor, kernel_size: IntArg, stride: IntArg | None = None,
    padding: IntArg = 0, output_size: Sequence[int] | None = None,
) -> Tensor:  # fmt: skip
    """The partial inverse of max_pool1d: values at their indices, zeros elsewhere."""
    return _max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(
    input: Tensor, indices: Tensor, kernel_size: IntArg, stride: IntArg | None = None,
    padding: IntArg = 0, output_size: Sequence[int] | None = None,
) -> Tensor:  # fmt: skip
    """The partial inverse of max_pool2d: values at their indices, zeros elsewhere."""
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(
    input: Tensor, indices: Tensor, kernel_size: IntArg, stride: IntArg | None = None,
    padding: IntArg = 0, output_size: Sequence[int] | None = None,
) -> Tensor:  # fmt: skip
    """The partial inverse of max_pool3d: values at their indices, zeros elsewhere."""
    return _max_unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding, output_size)


# -- fractional max pooling ----------------------------------------------------------------------


def _intervals(samples: np.ndarray, size: int, out: int, pool: int) -> np.ndarray:
    """PyTorch's generate_intervals for every plane: (planes, out) window starts.

    Computed in the samples' floating dtype, as PyTorch's scalar_t arithmetic is."""
    starts = np.empty((samples.shape[0], out), dtype=np.int64)
    if out > 1:
        ftype = samples.dtype.type
        alpha = ftype(size - pool) / ftype(out - 1)
        i = np.arange(out - 1, dtype=samples.dtype)[None, :]
        s = samples[:, None]
        starts[:, :-1] = ((i + s) * alpha).astype(np.int64) - (s * alpha).astype(np.int64)
    if out > 0:
        starts[:, -1] = size - pool
    return starts


def _fractional(
    name: str, spatial: int, input: Tensor, kernel_size: IntArg, output_size: Any,
    output_ratio: Any, samples: Tensor | None,
) -> tuple[Tensor, Tensor]:  # fmt: skip
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(
            f"{name}(): Expected {spatial + 1}D or {spatial + 2}D tensor, but got "
            f"{list(input.shape)}"
        )
    dims = list(input.shape[-spatial:])
    if output_size is None:
        ratio = _ntuple(output_ratio, spatial)
        out = [int(dims[d] * ratio[d]) for d in range(spatial)]
    else:
        out = list(_ntuple(output_size, spatial))
    kernel = _ntuple(kernel_size, spatial)
    for d in range(spatial):
        if out[d] + kernel[d] - 1 > dims[d]:
            raise RuntimeError(
                f"{name}(): pool size {kernel[d]} too large relative to input size "
                f"{dims[d]} and output size {out[d]} at dim {d}"
            )
    batched = input.ndim == spatial + 2
    x = input if batched else input.unsqueeze(0)
    n, c = x.shape[:2]
    if samples is None:
        samples = random.rand(n, c, spatial, dtype=input._dtype, device=input._device)
    if tuple(samples.shape) != (n, c, spatial):
        raise RuntimeError(
            f"{name}(): expected _random_samples of shape {[n, c, spatial]}, got "
            f"{list(samples.shape)}"
        )
    host = samples.numpy(force=True).reshape(n * c, spatial)
    # PyTorch's sample order: (W, H) in 2-d, (T, H, W) in 3-d.
    order = [1, 0] if spatial == 2 else [0, 1, 2]
    starts = [_intervals(host[:, order[d]], dims[d], out[d], kernel[d]) for d in range(spatial)]
    # Flat input positions of every window element: (planes, *out, *kernel).
    flat = np.zeros((n * c, *out, *kernel), dtype=np.int64)
    stride = math.prod(dims)
    for d in range(spatial):
        stride //= dims[d]
        shape = [n * c] + [1] * (2 * spatial)
        shape[1 + d] = out[d]
        offsets_shape = [1] * (1 + 2 * spatial)
        offsets_shape[1 + spatial + d] = kernel[d]
        positions = starts[d].reshape(shape) + np.arange(kernel[d]).reshape(offsets_shape)
        flat = flat + positions * stride
    window = math.prod(kernel)
    table = creation.tensor(flat.reshape(n, c, -1), dtype=_dtype.int64, device=input._device)
    picked = indexing.gather(x.reshape(n, c, -1), -1, table).reshape(n, c, *out, window)
    values, local = reduction.max(picked, -1)
    indices = indexing.gather(table.reshape(n, c, *out, window), -1, local.unsqueeze(-1))
    indices = indices.squeeze(-1)
    if not batched:
        return values.squeeze(0), indices.squeeze(0)
    return values, indices


def fractional_max_pool2d_with_indices(
    input: Tensor, kernel_size: IntArg, output_size: IntArg | None = None,
    output_ratio: float | Sequence[float] | None = None, return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> tuple[Tensor, Tensor]:  # fmt: skip
    """(max, flat index) over pseudo-random windows that tile the input to output_size."""
    return _fractional(
        "fractional_max_pool2d", 2, input, kernel_size, output_size, output_ratio,
        _random_samples,
    )  # fmt: skip


def fractional_max_pool2d(
    input: Tensor, kernel_size: IntArg, output_size: IntArg | None = None,
    output_ratio: float | Sequence[float] | None = None, return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> Any:  # fmt: skip
    """Fractional max pooling (Graham, 2014) over (N, C, H, W) or (C, H, W) input."""
    values, indices = fractional_max_pool2d_with_indices(
        input, kernel_size, output_size, output_ratio, False, _random_samples
    )
    return (values, indices) if return_indices else values


def fractional_max_pool3d_with_indices(
    input: Tensor, kernel_size: IntArg, output_size: IntArg | None = None,
    output_ratio: float | Sequence[float] | None = None, return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> tuple[Tensor, Tensor]:  # fmt: skip
    """(max, flat index) over pseudo-random windows of (N, C, T, H, W) input."""
    return _fractional(
        "fractional_max_pool3d", 3, input, kernel_size, output_size, output_ratio,
        _random_samples,
    )  # fmt: skip


def fractional_max_pool3d(
    input: Tensor, kernel_size: IntArg, output_size: IntArg | None = None,
    output_ratio: float | Sequence[float] | None = None, return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> Any:  # fmt: skip
    """Fractional max pooling over (N, C, T, H, W) or (C, T, H, W) input."""
    values, indices = fractional_max_pool3d_with_indices(
        input, kernel_size, output_size, output_ratio, False, _random_samples
    )
    return (values, indices) if return_indices else values
