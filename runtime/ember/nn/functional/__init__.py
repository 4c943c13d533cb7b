"""Functional forms of the layers, activations and losses (PyTorch's torch.nn.functional)."""

from __future__ import annotations

from ember.nn.functional._activation import (
    elu,
    gelu,
    hardtanh,
    leaky_relu,
    leaky_relu_,
    log_softmax,
    logsigmoid,
    relu,
    relu6,
    relu_,
    sigmoid,
    silu,
    softmax,
    softmin,
    softplus,
    tanh,
)
from ember.nn.functional._attention import (
    multi_head_attention_forward,
    scaled_dot_product_attention,
)
from ember.nn.functional._conv import conv1d, conv2d, conv_transpose2d
from ember.nn.functional._conv3d import conv3d, conv_tbc, conv_transpose3d
from ember.nn.functional._cross_entropy import cross_entropy, nll_loss
from ember.nn.functional._dropout import dropout, dropout1d, dropout2d, dropout3d
from ember.nn.functional._embedding import embedding, one_hot
from ember.nn.functional._embedding_bag import embedding_bag
from ember.nn.functional._fold import fold, unfold
from ember.nn.functional._linear import bilinear, linear
from ember.nn.functional._loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    huber_loss,
    l1_loss,
    mse_loss,
    smooth_l1_loss,
)
from ember.nn.functional._normalization import batch_norm, group_norm, layer_norm, normalize
from ember.nn.functional._normalization_extra import (
    instance_norm,
    local_response_norm,
    rms_norm,
)
from ember.nn.functional._padding import pad
from ember.nn.functional._pool import adaptive_avg_pool2d, avg_pool2d, max_pool2d
from ember.nn.functional._pool3d import (
    avg_pool1d,
    avg_pool3d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d_with_indices,
    max_pool3d,
    max_pool3d_with_indices,
)
from ember.nn.functional._pool_extra import (
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)

__all__ = [
    "adaptive_avg_pool2d",
    "avg_pool2d",
    "batch_norm",
    "bilinear",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "conv1d",
    "conv2d",
    "conv_transpose2d",
    "cross_entropy",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "elu",
    "embedding",
    "gelu",
    "group_norm",
    "hardtanh",
    "huber_loss",
    "l1_loss",
    "layer_norm",
    "leaky_relu",
    "leaky_relu_",
    "linear",
    "log_softmax",
    "logsigmoid",
    "max_pool2d",
    "mse_loss",
    "multi_head_attention_forward",
    "nll_loss",
    "normalize",
    "one_hot",
    "pad",
    "relu",
    "relu6",
    "relu_",
    "scaled_dot_product_attention",
    "sigmoid",
    "silu",
    "smooth_l1_loss",
    "softmax",
    "softmin",
    "softplus",
    "tanh",
]

# Resampling, shuffle, transposed-convolution, adaptive-pool and padding layers.
from ember.nn.functional._adaptive_pool import (
    adaptive_avg_pool1d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
)
from ember.nn.functional._conv_transpose import conv_transpose1d
from ember.nn.functional._interpolate import (
    interpolate,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)
from ember.nn.functional._pixel_shuffle import (
    channel_shuffle,
    native_channel_shuffle,
    pixel_shuffle,
    pixel_unshuffle,
)

__all__ += [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices",
    "channel_shuffle",
    "conv_transpose1d",
    "interpolate",
    "native_channel_shuffle",
    "pixel_shuffle",
    "pixel_unshuffle",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]

# 3-d and time-major convolutions, fold/unfold.
__all__ += [
    "conv3d",
    "conv_tbc",
    "conv_transpose3d",
    "fold",
    "unfold",
]

# 1-d and 3-d pooling, power-average, unpooling and fractional max pooling.
__all__ += [
    "avg_pool1d",
    "avg_pool3d",
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "max_pool3d",
    "max_pool3d_with_indices",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
]

# Instance, RMS and local-response normalization; embedding bags.
__all__ += [
    "embedding_bag",
    "instance_norm",
    "local_response_norm",
    "rms_norm",
]
