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

# Activations, losses, distances and sampling grids beyond the first set.
# torch.nn.functional.Tensor is torch.Tensor (scripts annotate with it).
from ember._tensor import Tensor as Tensor  # noqa: E402
from ember.nn.functional._activation_more import (  # noqa: E402
    celu,
    celu_,
    elu_,
    glu,
    gumbel_softmax,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh_,
    mish,
    prelu,
    rrelu,
    rrelu_,
    selu,
    selu_,
    softshrink,
    softsign,
    tanhshrink,
    threshold,
    threshold_,
)
from ember.nn.functional._distance import cosine_similarity, pairwise_distance  # noqa: E402
from ember.nn.functional._dropout import alpha_dropout, feature_alpha_dropout  # noqa: E402
from ember.nn.functional._grid_sample import affine_grid, grid_sample  # noqa: E402
from ember.nn.functional._linear_cross_entropy import linear_cross_entropy  # noqa: E402
from ember.nn.functional._loss_ctc import ctc_loss  # noqa: E402
from ember.nn.functional._loss_likelihood import (  # noqa: E402
    gaussian_nll_loss,
    kl_div,
    poisson_nll_loss,
)
from ember.nn.functional._loss_margin import (  # noqa: E402
    cosine_embedding_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)

__all__ += [
    "affine_grid",
    "alpha_dropout",
    "celu",
    "celu_",
    "cosine_embedding_loss",
    "cosine_similarity",
    "ctc_loss",
    "elu_",
    "feature_alpha_dropout",
    "gaussian_nll_loss",
    "glu",
    "grid_sample",
    "gumbel_softmax",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh_",
    "hinge_embedding_loss",
    "kl_div",
    "linear_cross_entropy",
    "margin_ranking_loss",
    "mish",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "pairwise_distance",
    "poisson_nll_loss",
    "prelu",
    "rrelu",
    "rrelu_",
    "selu",
    "selu_",
    "soft_margin_loss",
    "softshrink",
    "softsign",
    "tanhshrink",
    "threshold",
    "threshold_",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
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

# Pairwise distances within one set of rows: the same function as ember.pdist.
from ember._ops.distances import pdist  # noqa: E402

__all__ += ["pdist"]
