"""The torch-namespace forms of layers (torch.conv2d, torch.batch_norm, torch.embedding, ...).

PyTorch exposes the ATen ops behind torch.nn.functional at the top level, some with their
own argument order (batch_norm takes weight and bias before the running stats; embedding
takes the weight first; stride=[] means "the kernel size"). These forward to the
functional implementations with PyTorch's top-level signatures.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember._tensor import Tensor
from ember.nn.functional import _adaptive_pool, _pool3d
from ember.nn.functional._conv import conv1d, conv2d, conv_transpose2d
from ember.nn.functional._conv3d import conv3d, conv_tbc, conv_transpose3d
from ember.nn.functional._conv_transpose import conv_transpose1d
from ember.nn.functional._embedding import embedding as _embedding
from ember.nn.functional._embedding_bag import embedding_bag_with_aux as embedding_bag
from ember.nn.functional._normalization import batch_norm as _batch_norm
from ember.nn.functional._normalization import group_norm as _group_norm
from ember.nn.functional._normalization import layer_norm as _layer_norm
from ember.nn.functional._normalization_extra import instance_norm as _instance_norm
from ember.nn.functional._normalization_extra import rms_norm
from ember.nn.functional._pool import max_pool2d as _max_pool2d

__all__ = [
    "adaptive_avg_pool1d", "adaptive_max_pool1d", "avg_pool1d", "batch_norm", "conv1d",
    "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "embedding", "embedding_bag", "group_norm", "instance_norm", "layer_norm", "max_pool1d",
    "max_pool1d_with_indices", "max_pool2d", "max_pool3d", "rms_norm",
]  # fmt: skip

IntArg = int | Sequence[int]


def batch_norm(
    input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
    running_var: Tensor | None, training: bool, momentum: float, eps: float,
    cudnn_enabled: bool = True,
) -> Tensor:  # fmt: skip
    """torch.batch_norm: F.batch_norm with weight and bias before the running stats."""
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(
    input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
    running_var: Tensor | None, use_input_stats: bool, momentum: float, eps: float,
    cudnn_enabled: bool = True,
) -> Tensor:  # fmt: skip
    """torch.instance_norm: F.instance_norm with weight and bias before the running stats."""
    return _instance_norm(
        input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps
    )


def group_norm(
    input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
    eps: float = 1e-5, cudnn_enabled: bool = True,
) -> Tensor:  # fmt: skip
    """torch.group_norm (cudnn_enabled is accepted and ignored)."""
    return _group_norm(input, num_groups, weight, bias, eps)


def layer_norm(
    input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
    bias: Tensor | None = None, eps: float = 1e-5, cudnn_enable: bool = True,
) -> Tensor:  # fmt: skip
    """torch.layer_norm (cudnn_enable is accepted and ignored)."""
    return _layer_norm(input, normalized_shape, weight, bias, eps)


def embedding(
    weight: Tensor, input: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:  # fmt: skip
    """torch.embedding: the weight comes first; padding_idx=-1 means none."""
    padding = None if padding_idx == -1 else padding_idx
    return _embedding(input, weight, padding, None, 2.0, scale_grad_by_freq, sparse)


def _stride(stride: Any) -> Any:
    """PyTorch's top-level pools default stride to [] (the kernel size)."""
    return None if stride is None or (not isinstance(stride, int) and len(stride) == 0) else stride


def max_pool1d(
    input: Tensor, kernel_size: IntArg, stride: IntArg = (), padding: IntArg = 0,
    dilation: IntArg = 1, ceil_mode: bool = False,
) -> Tensor:  # fmt: skip
    """torch.max_pool1d: the maxima only."""
    values, _ = _pool3d.max_pool1d_with_indices(
        input, kernel_size, _stride(stride), padding, dilation, ceil_mode
    )
    return values


def max_pool1d_with_indices(
    input: Tensor, kernel_size: IntArg, stride: IntArg = (), padding: IntArg = 0,
    dilation: IntArg = 1, ceil_mode: bool = False,
) -> tuple[Tensor, Tensor]:  # fmt: skip
    """torch.max_pool1d_with_indices: (maxima, their indices along L)."""
    return _pool3d.max_pool1d_with_indices(
        input, kernel_size, _stride(stride), padding, dilation, ceil_mode
    )


def max_pool2d(
    input: Tensor, kernel_size: IntArg, stride: IntArg = (), padding: IntArg = 0,
    dilation: IntArg = 1, ceil_mode: bool = False,
) -> Tensor:  # fmt: skip
    """torch.max_pool2d: the maxima only."""
    result: Tensor = _max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)
    return result


def max_pool3d(
    input: Tensor, kernel_size: IntArg, stride: IntArg = (), padding: IntArg = 0,
    dilation: IntArg = 1, ceil_mode: bool = False,
) -> Tensor:  # fmt: skip
    """torch.max_pool3d: the maxima only."""
    values, _ = _pool3d.max_pool3d_with_indices(
        input, kernel_size, _stride(stride), padding, dilation, ceil_mode
    )
    return values


def avg_pool1d(
    input: Tensor, kernel_size: IntArg, stride: IntArg = (), padding: IntArg = 0,
    ceil_mode: bool = False, count_include_pad: bool = True,
) -> Tensor:  # fmt: skip
    """torch.avg_pool1d."""
    return _pool3d.avg_pool1d(
        input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad
    )


def adaptive_avg_pool1d(input: Tensor, output_size: IntArg) -> Tensor:
    """torch.adaptive_avg_pool1d."""
    return _adaptive_pool.adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input: Tensor, output_size: IntArg) -> tuple[Tensor, Tensor]:
    """torch.adaptive_max_pool1d: (maxima, their indices), as PyTorch's top-level op."""
    return _adaptive_pool.adaptive_max_pool1d_with_indices(input, output_size)
