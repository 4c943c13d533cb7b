"""AdaptiveLogSoftmaxWithLoss against PyTorch with the same weights: structure, output,
loss and gradients, log_prob, predict (shortlist, cluster and mixed rows), errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
import ember.nn as nn

from ._torch_parity import assert_same_gradients, copy_into_torch


def _pair(head_bias: bool = True) -> tuple[Any, Any]:
    import torch

    ours = nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10, 15], div_value=2.0, head_bias=head_bias)
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(
        16, 20, [4, 10, 15], div_value=2.0, head_bias=head_bias
    )
    copy_into_torch(ours, theirs)
    return ours, theirs


@pytest.mark.parametrize("head_bias", [False, True])
def test_output_loss_and_gradients_match_torch(rng: Any, head_bias: bool) -> None:
    import torch

    ours, theirs = _pair(head_bias)
    assert repr(ours) == repr(theirs)
    x = rng.standard_normal((12, 16)).astype(np.float32)
    y = np.array([0, 3, 4, 9, 10, 14, 15, 19, 2, 12, 6, 17])  # every cluster, both edges
    mine = ours(ember.tensor(x), ember.tensor(y))
    expected = theirs(torch.tensor(x), torch.tensor(y))
    np.testing.assert_allclose(mine.output.detach().numpy(), expected.output.detach().numpy(),
                               atol=1e-5)  # fmt: skip
    np.testing.assert_allclose(mine.loss.item(), expected.loss.item(), rtol=1e-5)
    mine.loss.backward()
    expected.loss.backward()
    assert_same_gradients(ours, theirs)
    single = ours(ember.tensor(x[3]), ember.tensor(y[3]))
    assert single.output.shape == ()
    np.testing.assert_allclose(single.output.item(), expected.output[3].item(), rtol=1e-5)


def test_log_prob_and_predict_match_torch(rng: Any) -> None:
    import torch

    ours, theirs = _pair()
    x = rng.standard_normal((10, 16)).astype(np.float32)
    full = ours.log_prob(ember.tensor(x))
    expected = theirs.log_prob(torch.tensor(x)).detach().numpy()
    np.testing.assert_allclose(full.detach().numpy(), expected, atol=1e-5)
    np.testing.assert_allclose(np.exp(full.detach().numpy()).sum(1), np.ones(10), rtol=1e-5)
    # Bias the head toward the clusters for some rows only, then for all rows.
    seen = set()
    with ember.no_grad(), torch.no_grad():
        for cluster_bias in (-50.0, 0.0, 50.0):
            ours.head.bias[4:] = cluster_bias
            theirs.head.bias[4:] = cluster_bias
            in_clusters = (ours.head(ember.tensor(x)).numpy().argmax(1) >= 4).mean()
            seen.add("none" if in_clusters == 0 else "all" if in_clusters == 1 else "some")
            np.testing.assert_array_equal(
                ours.predict(ember.tensor(x)).numpy(), theirs.predict(torch.tensor(x)).numpy()
            )
    assert seen == {"none", "some", "all"}


def test_errors_as_torch() -> None:
    with pytest.raises(ValueError, match="cutoffs should be a sequence of length larger than 0"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [])
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique, positive"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [5, 3])
    module = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0)
    with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 9\]"):
        module(ember.zeros(2, 8), ember.tensor([1, 10]))
    with pytest.raises(RuntimeError, match="same size in the batch dimension"):
        module(ember.zeros(3, 8), ember.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected"):
        module(ember.zeros(2, 8), ember.zeros(2, 2, dtype=ember.int64))
