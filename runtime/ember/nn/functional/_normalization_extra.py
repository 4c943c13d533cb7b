"""instance_norm, rms_norm, local_response_norm and the legacy cross-map LRN, as composites.

instance_norm normalises each (sample, channel) over its spatial dims; with running stats
it updates them as PyTorch does (the batch average of the per-instance mean and unbiased
variance). local_response_norm follows PyTorch's formula on pad + avg_pool; the cross-map
LRN reproduces the legacy module's running-window sum (including its window quirk) as a
fixed channel-mixing matrix. Autograd comes from the parts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember import _dtype
from ember._dtype_info import finfo
from ember._ops import creation, reduction, statistics
from ember._tensor import Tensor
from ember.autograd._graph import needs_grad, record
from ember.autograd._mode import no_grad
from ember.nn.functional._normalization import _affine, _channel_shape, _standardize
from ember.nn.functional._padding import pad
from ember.nn.functional._pool import avg_pool2d
from ember.nn.functional._pool3d import avg_pool3d

__all__ = ["cross_map_lrn2d", "instance_norm", "local_response_norm", "rms_norm"]


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each channel of each sample of (N, C, *) input over its spatial dims."""
    if input.ndim < 2:
        raise ValueError(f"instance_norm: expected at least 2D input (got {input.ndim}D input)")
    shape = _channel_shape(input)
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise RuntimeError(
                "Expected running_mean and running_var to be defined when use_input_stats is false"
            )
        mean = running_mean.reshape(shape)
        var = running_var.reshape(shape)
        return _affine(_standardize(input, mean, var, eps), weight, bias, shape)
    spatial = 1
    for size in input.shape[2:]:
        spatial *= size
    if spatial <= 1:
        raise ValueError(
            "Expected more than 1 spatial element when training, got input size "
            f"{list(input.shape)}"
        )
    dims = tuple(range(2, input.ndim))
    mean = reduction.mean(input, dims, keepdim=True)
    var = statistics.var(input, dims, correction=0, keepdim=True)
    with no_grad():
        for running, value, factor in (
            (running_mean, mean, 1.0),
            (running_var, var, spatial / (spatial - 1)),
        ):
            if running is not None:
                batch = reduction.mean(value.detach().reshape(input.shape[:2]), 0) * factor
                running.mul_(1.0 - momentum).add_(batch * momentum)
    return _affine(_standardize(input, mean, var, eps), weight, bias, shape)


def rms_norm(
    input: Tensor,
    normalized_shape: int | Sequence[int],
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """x / sqrt(mean(x^2) + eps) over the trailing `normalized_shape` dims, times weight."""
    normalized = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
    normalized = tuple(normalized)
    k = len(normalized)
    if k == 0 or input.ndim < k or tuple(input.shape[input.ndim - k :]) != normalized:
        raise RuntimeError(
            f"Given normalized_shape={list(normalized)}, expected input with shape "
            f"[*, {', '.join(str(s) for s in normalized)}], but got input of size"
            f"{list(input.shape)}"
        )
    if weight is not None and tuple(weight.shape) != normalized:
        raise RuntimeError(
            f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
            f"{list(weight.shape)} and normalized_shape = {list(normalized)}"
        )
    if eps is None:
        eps = finfo(input._dtype).eps if input._dtype.is_floating_point else 0.0
    dims = tuple(range(input.ndim - k, input.ndim))
    compute = input if input._dtype is not _dtype.float16 else input.float()
    scale = (reduction.mean(compute * compute, dims, keepdim=True) + eps).rsqrt()
    out = (compute * scale).to(input._dtype)
    return out if weight is None else out * weight


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta."""
    dim = input.ndim
    if dim < 3:
        raise ValueError(
            f"Expected 3D or higher dimensionality                          input (got {dim} "
            "dimensions)"
        )
    if input.numel() == 0:
        return input
    div = input * input
    if dim == 3:
        div = pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        div = div.reshape(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).reshape(sizes)
    return input / (div * alpha + k).pow(beta)


def _cross_map_window(channels: int, size: int) -> list[list[float]]:
    """Which squared channels the legacy running sum adds into each channel's scale.

    Channel 0 sums the first pre_pad channels; each next channel adds the channel pre_pad - 1
    ahead and (only past pre_pad) drops the one pre_pad behind, so channel 0 is never dropped.
    """
    pre_pad = int((size - 1) / 2 + 1)
    rows = [[1.0 if j < min(pre_pad, channels) else 0.0 for j in range(channels)]]
    for c in range(1, channels):
        row = list(rows[-1])
        if c < channels - pre_pad + 1:
            row[c + pre_pad - 1] += 1.0
        if c > pre_pad:
            row[c - pre_pad] -= 1.0
        rows.append(row)
    return rows


def _backward_window(channels: int, size: int) -> list[list[float]]:
    """The legacy backward's window: channel c gathers ratios c - p .. c - p + size - 1,
    p = size - (size - 1) / 2 (not the transpose of the forward's window)."""
    start = int(size - (size - 1) / 2)
    return [
        [1.0 if c - start <= i <= c - start + size - 1 else 0.0 for i in range(channels)]
        for c in range(channels)
    ]


def cross_map_lrn2d(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """The legacy CrossMapLRN2d: x * (k + alpha / size * windowed sum of x^2)^-beta.

    Its gradient is the legacy module's own backward formula (which PyTorch keeps although
    it is not the exact derivative of this forward), so training matches PyTorch's."""
    if input.ndim != 4:
        raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.ndim}D instead.")
    n, c, h, w = input.shape
    x = input.detach()
    window = creation.tensor(_cross_map_window(c, size), dtype=x._dtype, device=x._device)
    squares = (x * x).reshape(n, c, h * w)
    scale = (window @ squares).reshape(n, c, h, w) * (alpha / size) + k
    out = x * scale.pow(-beta)
    if not needs_grad(input):
        return out
    ctx = (size, alpha, beta)
    return record("CrossMapLRN2dBackward", _cross_map_formula, (input,), out, (x, scale, out),
                  ctx=ctx)  # fmt: skip


def _cross_map_formula(node: Any, g: Tensor) -> Sequence[Tensor | None]:
    x, scale, out = node.saved
    size, alpha, beta = node.ctx
    n, c, h, w = x.shape
    window = creation.tensor(_backward_window(c, size), dtype=g._dtype, device=g._device)
    ratio = (g * out / scale).reshape(n, c, h * w)
    accumulated = (window @ ratio).reshape(n, c, h, w)
    return (scale.pow(-beta) * g - x * accumulated * (2 * alpha * beta / size),)
