"""Transforms for changes of variables (torch.distributions.transforms)."""

from ember.distributions._transform_base import (
    ComposeTransform,
    IndependentTransform,
    ReshapeTransform,
    Transform,
    _InverseTransform,
    identity_transform,
)
from ember.distributions._transforms_elementwise import (
    AbsTransform,
    AffineTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    SoftplusTransform,
    TanhTransform,
)
from ember.distributions._transforms_structured import (
    CatTransform,
    CorrCholeskyTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    SoftmaxTransform,
    StackTransform,
    StickBreakingTransform,
)

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "CatTransform",
    "ComposeTransform",
    "CorrCholeskyTransform",
    "CumulativeDistributionTransform",
    "ExpTransform",
    "IndependentTransform",
    "LowerCholeskyTransform",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
    "StackTransform",
    "StickBreakingTransform",
    "TanhTransform",
    "Transform",
    "_InverseTransform",
    "identity_transform",
]
