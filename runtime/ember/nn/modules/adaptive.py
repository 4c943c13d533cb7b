"""AdaptiveLogSoftmaxWithLoss (Grave et al., "Efficient softmax approximation for GPUs"):
a head over the frequent classes plus one entry per cluster of rarer classes, each cluster
scored by its own low-rank projection, on the rows whose targets fall in it only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from ember._ops import creation, unary
from ember._ops import elementwise as ew
from ember._ops import reduction as red
from ember._ops.indexing import gather, index_select, nonzero, scatter_add
from ember._ops.shape import cat
from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.container import ModuleList, Sequential
from ember.nn.modules.linear import Linear
from ember.nn.modules.module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]


class _ASMoutput(NamedTuple):
    output: Tensor
    loss: Tensor


class AdaptiveLogSoftmaxWithLoss(Module):
    """Log-probabilities of the targets (`output`) and their mean negative (`loss`)."""

    def __init__(
        self,
        in_features: int,
        n_classes: int,
        cutoffs: Sequence[int],
        div_value: float = 4.0,
        head_bias: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (
            cutoffs != sorted(cutoffs)
            or min(cutoffs) <= 0
            or max(cutoffs) > n_classes - 1
            or len(set(cutoffs)) != len(cutoffs)
            or any(int(c) != c for c in cutoffs)
        ):
            raise ValueError(
                "cutoffs should be a sequence of unique, positive integers sorted in an "
                "increasing order, where each value is between 1 and n_classes-1"
            )
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = [*cutoffs, n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        factory = {"device": device, "dtype": dtype}
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            width = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(
                Sequential(
                    Linear(in_features, hidden, bias=False, **factory),
                    Linear(hidden, width, bias=False, **factory),
                )
            )

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection.children():
                if isinstance(layer, Linear):
                    layer.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        rank = target_.ndim
        if rank == 1:
            if input_._shape[0] != target_._shape[0]:
                raise RuntimeError(
                    "Input and target should have the same size in the batch dimension."
                )
            if input_.ndim != 2:
                raise RuntimeError(
                    "1D target tensor expects 2D input tensors, but found inputs with size "
                    f"{input_.shape}"
                )
        elif rank == 0:
            if input_.ndim != 1:
                raise RuntimeError(
                    "0D target tensor expects 1D input tensors, but found inputs with size "
                    f"{input_.shape}"
                )
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = rank > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        batch = target._shape[0]
        if batch and (
            int(red.amin(target).item()) < 0 or int(red.amax(target).item()) >= self.n_classes
        ):
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                f"[{red.amin(target).item()}, {red.amax(target).item()}] were found. "
            )
        output = creation.zeros((batch,), dtype=input._dtype, device=input._device)
        # The head entry of each row: its class in the shortlist, else its cluster's entry.
        cluster = creation.zeros((batch,), dtype=target._dtype, device=target._device)
        for low in self.cutoffs[:-1]:
            cluster = ew.add(cluster, ew.ge(target, low).to(target._dtype))
        head_index = unary.where(
            ew.lt(target, self.shortlist_size), target, ew.add(cluster, self.shortlist_size - 1)
        )
        for i in range(self.n_clusters):
            low, high = self.cutoffs[i], self.cutoffs[i + 1]
            in_cluster = ew.logical_and(ew.ge(target, low), ew.lt(target, high))
            rows = nonzero(in_cluster).reshape(-1)
            if rows.numel() == 0:
                continue
            scores = self.tail[i](index_select(input, 0, rows))
            relative = ew.sub(index_select(target, 0, rows), low)
            local = gather(F.log_softmax(scores, 1), 1, relative.unsqueeze(1)).reshape(-1)
            output = scatter_add(output, 0, rows, local)
        head_logprob = F.log_softmax(self.head(input), 1)
        output = ew.add(output, gather(head_logprob, 1, head_index.unsqueeze(1)).reshape(-1))
        loss = red.mean(unary.neg(output))
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        head_logprob = F.log_softmax(head_output, 1)
        parts = [head_logprob[:, : self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), 1)
            parts.append(
                ew.add(cluster_logprob, head_logprob[:, self.shortlist_size + i].unsqueeze(1))
            )
        return cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:
        """Log-probabilities of every class, (N, n_classes)."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row (computing the full distribution only where the
        head's best entry is a cluster)."""
        head_output = self.head(input)
        output = red.argmax(head_output, 1)
        outside = ew.ge(output, self.shortlist_size)
        if not bool(red.any(outside).item()):
            return output
        if bool(red.all(outside).item()):
            return red.argmax(self._get_full_log_prob(input, head_output), 1)
        rows = nonzero(outside).reshape(-1)
        best = red.argmax(
            self._get_full_log_prob(
                index_select(input, 0, rows), index_select(head_output, 0, rows)
            ),
            1,
        )
        output[rows] = best
        return output
