"""EmbeddingBag: sums, means or maxima of bags of embedding rows (PyTorch's arguments,
initialisation and repr)."""

from __future__ import annotations

from typing import Any

from ember._ops import creation
from ember._tensor import Tensor
from ember.autograd._mode import no_grad
from ember.nn import init
from ember.nn.functional._embedding_bag import embedding_bag
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["EmbeddingBag"]


class EmbeddingBag(Module):
    """One reduced (sum / mean / max) embedding per bag of indices."""

    weight: Parameter

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        _weight: Tensor | None = None,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if padding_idx is not None:
            if padding_idx >= num_embeddings or padding_idx < -num_embeddings:
                raise AssertionError("padding_idx must be within num_embeddings")
            if padding_idx < 0:
                padding_idx += num_embeddings
        self.padding_idx = padding_idx
        if _weight is None:
            shape = (num_embeddings, embedding_dim)
            self.weight = Parameter(creation.empty(shape, device=device, dtype=dtype))
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError(
                    "Shape of weight does not match num_embeddings and embedding_dim"
                )
            self.weight = Parameter(_weight)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self) -> None:
        """Standard normal weight, with the padding row zeroed (as PyTorch)."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(
        self,
        input: Tensor,
        offsets: Tensor | None = None,
        per_sample_weights: Tensor | None = None,
    ) -> Tensor:
        return embedding_bag(
            input, self.weight, offsets, self.max_norm, self.norm_type,
            self.scale_grad_by_freq, self.mode, self.sparse, per_sample_weights,
            self.include_last_offset, self.padding_idx,
        )  # fmt: skip

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings!r}, {self.embedding_dim!r}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
    ) -> EmbeddingBag:
        """An EmbeddingBag whose weight is `embeddings` (frozen unless freeze=False)."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(
            num_embeddings=rows, embedding_dim=cols, _weight=embeddings, max_norm=max_norm,
            norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, mode=mode,
            sparse=sparse, include_last_offset=include_last_offset, padding_idx=padding_idx,
        )  # fmt: skip
        bag.weight.requires_grad = not freeze
        return bag
