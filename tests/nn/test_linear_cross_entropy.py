"""linear_cross_entropy / LinearCrossEntropyLoss / LinearCrossEntropyOptions against
PyTorch 2.13: values and gradients for class indices, probabilities, K-dimensional
weights, bias, class weights, ignore_index and label smoothing; reprs and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

from ._torch_parity import assert_same_gradients, copy_into_torch


@pytest.mark.parametrize(
    "case", ["indices", "probabilities", "unbatched", "k_dim", "smoothing", "weighted"]
)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_functional_matches_torch(device: str, rng: Any, case: str, reduction: str) -> None:
    import torch

    batch, features, classes = 6, 5, 7
    out_features = (3,) if case == "k_dim" else ()
    x = rng.standard_normal((features,) if case == "unbatched" else (batch, features))
    w = rng.standard_normal((classes, *out_features, features))
    b = rng.standard_normal((classes, *out_features))
    lead = () if case == "unbatched" else (batch,)
    if case == "probabilities":
        target = rng.dirichlet(np.ones(classes), batch)
    else:
        target = rng.integers(0, classes, (*lead, *out_features))
        if case != "unbatched":
            target.reshape(-1)[0] = 2 if case == "weighted" else -100  # the ignored index
    options: dict[str, Any] = {"reduction": reduction}
    if case == "smoothing":
        options["label_smoothing"] = 0.2
    if case == "weighted":
        options["ignore_index"] = 2
        class_weight = rng.uniform(0.5, 2.0, classes)
    mine = [ember.tensor(v, device=device, requires_grad=True) for v in (x, w, b)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (x, w, b)]
    out = F.linear_cross_entropy(
        mine[0], mine[1], ember.tensor(target, device=device), linear_bias=mine[2],
        weight=ember.tensor(class_weight, device=device) if case == "weighted" else None,
        **options,
    )  # fmt: skip
    expected = torch.nn.functional.linear_cross_entropy(
        theirs[0], theirs[1], torch.tensor(target), linear_bias=theirs[2],
        weight=torch.tensor(class_weight) if case == "weighted" else None, **options,
    )  # fmt: skip
    np.testing.assert_allclose(out.numpy(force=True), expected.detach().numpy(), atol=1e-10)
    out.sum().backward()
    expected.sum().backward()
    for a, t in zip(mine, theirs, strict=True):
        np.testing.assert_allclose(a.grad.numpy(force=True), t.grad.numpy(), atol=1e-10)


@pytest.mark.parametrize("out_features", [(), (2,)])
def test_module_matches_torch(rng: Any, out_features: tuple[int, ...]) -> None:
    import torch

    options = nn.LinearCrossEntropyOptions(batch_chunk_size=2) if not out_features else None
    ours = nn.LinearCrossEntropyLoss(
        5, 7, out_features=out_features, bias=True, reduction="sum", options=options
    )
    theirs_options = (
        torch.nn.LinearCrossEntropyOptions(batch_chunk_size=2) if not out_features else None
    )
    theirs = torch.nn.LinearCrossEntropyLoss(
        5, 7, out_features=out_features, bias=True, reduction="sum", options=theirs_options
    )
    assert repr(ours) == repr(theirs)
    copy_into_torch(ours, theirs)
    x = rng.standard_normal((6, 5)).astype(np.float32)
    target = rng.integers(0, 7, (6, *out_features))
    out = ours(ember.tensor(x), ember.tensor(target))
    expected = theirs(torch.tensor(x), torch.tensor(target))
    np.testing.assert_allclose(out.item(), expected.item(), rtol=1e-5)
    out.backward()
    expected.backward()
    assert_same_gradients(ours, theirs, atol=1e-4)


def test_options_validate_as_torch() -> None:
    import torch

    assert repr(nn.LinearCrossEntropyOptions()) == repr(torch.nn.LinearCrossEntropyOptions())
    with pytest.raises(ValueError, match="invalid acc_policy: 'fast'"):
        nn.LinearCrossEntropyOptions(acc_policy="fast")
    with pytest.raises(ValueError, match="invalid chunking_method: 'square'"):
        nn.LinearCrossEntropyOptions(chunking_method="square")
    with pytest.raises(ValueError, match="batch_chunk_size must be positive int or None"):
        nn.LinearCrossEntropyOptions(batch_chunk_size=0)
    nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio:2", acc_dtype=ember.float32)
    with pytest.warns(UserWarning, match="``options`` ignored"):
        F.linear_cross_entropy(
            ember.zeros(2, 3), ember.zeros(4, 3), ember.tensor([0, 1]), label_smoothing=0.1,
            options=nn.LinearCrossEntropyOptions(),
        )  # fmt: skip


def test_errors_as_torch() -> None:
    x, w = ember.zeros(2, 3), ember.zeros(4, 3)
    with pytest.raises(RuntimeError, match="expected input with dimensionality 1 or 2, got 3"):
        F.linear_cross_entropy(ember.zeros(1, 2, 3), w, ember.tensor([0]))
    with pytest.raises(RuntimeError, match="expected equal input and linear_weight last dim"):
        F.linear_cross_entropy(x, ember.zeros(4, 2), ember.tensor([0, 1]))
    with pytest.raises(RuntimeError, match=r"expected linear_bias shape \(4,\), got \(3,\)"):
        F.linear_cross_entropy(x, w, ember.tensor([0, 1]), linear_bias=ember.zeros(3))
    with pytest.raises(RuntimeError, match="requires batched input"):
        F.linear_cross_entropy(ember.zeros(3), ember.zeros(4, 2, 3), ember.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="ignore_index cannot be specified when target"):
        F.linear_cross_entropy(x, w, ember.zeros(2, 4), ignore_index=0)
    with pytest.raises(RuntimeError, match=r"expected weight shape to be \(4,\), got \(3,\)"):
        nn.LinearCrossEntropyLoss(3, 4, weight=ember.ones(3))
    with pytest.raises(RuntimeError, match="expected label_smoothing to be in range"):
        nn.LinearCrossEntropyLoss(3, 4, label_smoothing=1.5)
