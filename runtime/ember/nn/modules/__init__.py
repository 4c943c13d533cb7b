"""The module classes of `ember.nn`: the `Module` base, containers and layers."""

from __future__ import annotations

from ember.nn.modules.activation import (
    ELU,
    GELU,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    MultiheadAttention,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Tanh,
)
from ember.nn.modules.container import ModuleDict, ModuleList, Sequential
from ember.nn.modules.container_params import ParameterDict, ParameterList
from ember.nn.modules.conv import Conv1d, Conv2d, ConvTranspose2d
from ember.nn.modules.conv3d import Conv3d, ConvTranspose3d
from ember.nn.modules.dropout import Dropout, Dropout1d, Dropout2d, Dropout3d
from ember.nn.modules.embedding_bag import EmbeddingBag
from ember.nn.modules.flatten import Flatten, Identity, Unflatten
from ember.nn.modules.fold import Fold, Unfold
from ember.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from ember.nn.modules.lazy import (
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyBatchNorm3d,
    LazyConv1d,
    LazyConv2d,
    LazyConv3d,
    LazyConvTranspose1d,
    LazyConvTranspose2d,
    LazyConvTranspose3d,
    LazyInstanceNorm1d,
    LazyInstanceNorm2d,
    LazyInstanceNorm3d,
    LazyLinear,
)
from ember.nn.modules.linear import Bilinear, Linear
from ember.nn.modules.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from ember.nn.modules.module import Module
from ember.nn.modules.normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    GroupNorm,
    LayerNorm,
)
from ember.nn.modules.normalization_extra import (
    CrossMapLRN2d,
    LocalResponseNorm,
    RMSNorm,
    SyncBatchNorm,
)
from ember.nn.modules.pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from ember.nn.modules.pooling_extra import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    AvgPool1d,
    AvgPool3d,
    FractionalMaxPool2d,
    FractionalMaxPool3d,
    LPPool1d,
    LPPool2d,
    LPPool3d,
    MaxPool1d,
    MaxPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
)
from ember.nn.modules.rnn import GRU, LSTM, RNN, RNNBase
from ember.nn.modules.rnn_cell import GRUCell, LSTMCell, RNNCell, RNNCellBase
from ember.nn.modules.sparse import Embedding
from ember.nn.modules.transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = [
    "ELU",
    "GELU",
    "GRU",
    "LSTM",
    "RNN",
    "AdaptiveAvgPool2d",
    "AvgPool2d",
    "BCELoss",
    "BCEWithLogitsLoss",
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "Bilinear",
    "Conv1d",
    "Conv2d",
    "ConvTranspose2d",
    "CrossEntropyLoss",
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "Embedding",
    "Flatten",
    "GRUCell",
    "GroupNorm",
    "Hardtanh",
    "HuberLoss",
    "Identity",
    "L1Loss",
    "LSTMCell",
    "LayerNorm",
    "LeakyReLU",
    "Linear",
    "LogSigmoid",
    "LogSoftmax",
    "MSELoss",
    "MaxPool2d",
    "Module",
    "ModuleDict",
    "ModuleList",
    "MultiheadAttention",
    "NLLLoss",
    "RNNBase",
    "RNNCell",
    "RNNCellBase",
    "ReLU",
    "ReLU6",
    "Sequential",
    "SiLU",
    "Sigmoid",
    "SmoothL1Loss",
    "Softmax",
    "Softmin",
    "Softplus",
    "Tanh",
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
    "Unflatten",
]

# Resampling, shuffle, transposed-convolution, adaptive-pool and padding layers.
from ember.nn.modules.conv_transpose import ConvTranspose1d
from ember.nn.modules.padding import (
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from ember.nn.modules.pixelshuffle import ChannelShuffle, PixelShuffle, PixelUnshuffle
from ember.nn.modules.upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ += [
    "ChannelShuffle",
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ConvTranspose1d",
    "PixelShuffle",
    "PixelUnshuffle",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "Upsample",
    "UpsamplingBilinear2d",
    "UpsamplingNearest2d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]

# Activations, losses and distances beyond the first set.
from ember.nn.modules.activation_more import (  # noqa: E402
    CELU,
    GLU,
    SELU,
    AlphaDropout,
    FeatureAlphaDropout,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Mish,
    PReLU,
    RReLU,
    Softmax2d,
    Softshrink,
    Softsign,
    Tanhshrink,
    Threshold,
)
from ember.nn.modules.adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: E402
from ember.nn.modules.distance import CosineSimilarity, PairwiseDistance  # noqa: E402
from ember.nn.modules.linear_cross_entropy import (  # noqa: E402
    LinearCrossEntropyLoss,
    LinearCrossEntropyOptions,
)
from ember.nn.modules.loss_more import (  # noqa: E402
    CosineEmbeddingLoss,
    CTCLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    KLDivLoss,
    MarginRankingLoss,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    PoissonNLLLoss,
    SoftMarginLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)

__all__ += [
    "CELU",
    "GLU",
    "SELU",
    "AdaptiveLogSoftmaxWithLoss",
    "AlphaDropout",
    "CTCLoss",
    "CosineEmbeddingLoss",
    "CosineSimilarity",
    "FeatureAlphaDropout",
    "GaussianNLLLoss",
    "Hardshrink",
    "Hardsigmoid",
    "Hardswish",
    "HingeEmbeddingLoss",
    "KLDivLoss",
    "LinearCrossEntropyLoss",
    "LinearCrossEntropyOptions",
    "MarginRankingLoss",
    "Mish",
    "MultiLabelMarginLoss",
    "MultiLabelSoftMarginLoss",
    "MultiMarginLoss",
    "PReLU",
    "PairwiseDistance",
    "PoissonNLLLoss",
    "RReLU",
    "SoftMarginLoss",
    "Softmax2d",
    "Softshrink",
    "Softsign",
    "Tanhshrink",
    "Threshold",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
]
# 3-d convolutions.
__all__ += [
    "Conv3d",
    "ConvTranspose3d",
    "Fold",
    "Unfold",
]

# 1-d and 3-d, adaptive, power-average, unpooling and fractional pooling layers.
__all__ += [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "AvgPool1d",
    "AvgPool3d",
    "FractionalMaxPool2d",
    "FractionalMaxPool3d",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
    "MaxPool1d",
    "MaxPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
]

# Instance/RMS/LRN/sync normalization, embedding bags, lazy layers, parameter containers.
__all__ += [
    "CrossMapLRN2d",
    "EmbeddingBag",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
    "LazyLinear",
    "LocalResponseNorm",
    "ParameterDict",
    "ParameterList",
    "RMSNorm",
    "SyncBatchNorm",
]
