"""Margin, embedding, likelihood and triplet losses, cosine similarity and pairwise
distance: every reduction's value and the gradients against PyTorch (same float64
inputs), the modules' options, and PyTorch's errors."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

from ._helpers import check_gradients

REDUCTIONS = ("none", "mean", "sum")


def _compare(
    device: str,
    name: str,
    arrays: list[np.ndarray],
    *,
    constant: tuple[int, ...] = (),
    kwargs: dict[str, Any] | None = None,
    reductions: tuple[str, ...] = REDUCTIONS,
    ours: Callable[..., Any] | None = None,
) -> None:
    """F.<name> on ember and torch: values for each reduction, then the gradients of every
    non-constant input (where torch's is finite)."""
    import torch

    kwargs = kwargs or {}
    ours = ours or getattr(F, name)
    theirs = getattr(torch.nn.functional, name)
    for how in reductions:
        mine = [
            ember.tensor(a, device=device, requires_grad=i not in constant and a.dtype.kind == "f")
            for i, a in enumerate(arrays)
        ]
        torch_inputs = [
            torch.tensor(a, requires_grad=i not in constant and a.dtype.kind == "f")
            for i, a in enumerate(arrays)
        ]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = ours(*mine, reduction=how, **kwargs)
            expected = theirs(*torch_inputs, reduction=how, **kwargs)
        np.testing.assert_allclose(
            out.numpy(force=True), expected.detach().numpy(), atol=1e-10, err_msg=how
        )
        weights = np.random.default_rng(1).standard_normal(tuple(expected.shape))
        (out * ember.tensor(weights, device=device)).sum().backward()
        (expected * torch.tensor(weights)).sum().backward()
        for position, (a, b) in enumerate(zip(mine, torch_inputs, strict=True)):
            if b.grad is None:
                continue
            finite = np.isfinite(b.grad.numpy())
            np.testing.assert_allclose(
                a.grad.numpy(force=True)[finite], b.grad.numpy()[finite], atol=1e-9,
                err_msg=f"{how}: gradient of input {position}",
            )  # fmt: skip


@pytest.fixture
def data(rng: Any) -> dict[str, np.ndarray]:
    return {
        "x1": rng.standard_normal((5, 4)),
        "x2": rng.standard_normal((5, 4)),
        "x3": rng.standard_normal((5, 4)),
        "signs": np.where(rng.standard_normal(5) > 0, 1.0, -1.0),
        "signs2d": np.where(rng.standard_normal((5, 4)) > 0, 1.0, -1.0),
        "classes": rng.integers(0, 4, 5),
        "weight": rng.uniform(0.5, 2.0, 4),
    }


@pytest.mark.parametrize("margin", [0.0, 0.4])
def test_margin_ranking_loss(device: str, data: dict[str, Any], margin: float) -> None:
    arrays = [data["x1"][:, 0], data["x2"][:, 0], data["signs"]]
    _compare(device, "margin_ranking_loss", arrays, constant=(2,), kwargs={"margin": margin})


def test_hinge_embedding_loss(device: str, data: dict[str, Any]) -> None:
    arrays = [data["x1"], data["signs2d"]]
    _compare(device, "hinge_embedding_loss", arrays, constant=(1,), kwargs={"margin": 0.7})


@pytest.mark.parametrize("batched", [True, False])
def test_cosine_embedding_loss(device: str, data: dict[str, Any], batched: bool) -> None:
    if batched:
        arrays = [data["x1"], data["x2"], data["signs"]]
    else:
        arrays = [data["x1"][0], data["x2"][0], np.array(-1.0)]
    _compare(device, "cosine_embedding_loss", arrays, constant=(2,), kwargs={"margin": 0.1})


def test_soft_margin_loss(device: str, data: dict[str, Any]) -> None:
    _compare(device, "soft_margin_loss", [data["x1"], data["signs2d"]], constant=(1,))


def test_multilabel_soft_margin_loss(device: str, data: dict[str, Any]) -> None:
    import torch

    labels = (data["signs2d"] > 0).astype(np.float64)
    _compare(device, "multilabel_soft_margin_loss", [data["x1"], labels], constant=(1,))
    for how in REDUCTIONS:
        out = F.multilabel_soft_margin_loss(
            ember.tensor(data["x1"], device=device), ember.tensor(labels, device=device),
            ember.tensor(data["weight"], device=device), reduction=how,
        )  # fmt: skip
        expected = torch.nn.functional.multilabel_soft_margin_loss(
            torch.tensor(data["x1"]), torch.tensor(labels), torch.tensor(data["weight"]),
            reduction=how,
        )  # fmt: skip
        np.testing.assert_allclose(out.numpy(force=True), expected.numpy(), atol=1e-12)


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_multi_margin_loss(device: str, data: dict[str, Any], p: int, weighted: bool) -> None:
    import torch

    weight = data["weight"] if weighted else None

    def ours(x: Any, y: Any, reduction: str) -> Any:
        w = None if weight is None else ember.tensor(weight, device=device)
        return F.multi_margin_loss(x, y, p, 0.8, w, reduction=reduction)

    def theirs(x: Any, y: Any, reduction: str) -> Any:
        w = None if weight is None else torch.tensor(weight)
        return torch.nn.functional.multi_margin_loss(x, y, p, 0.8, w, reduction=reduction)

    for x, y in ((data["x1"], data["classes"]), (data["x1"][0], data["classes"][:1].reshape(()))):
        for how in REDUCTIONS:
            a = ember.tensor(x, device=device, requires_grad=True)
            b = torch.tensor(x, requires_grad=True)
            out = ours(a, ember.tensor(y, device=device), how)
            expected = theirs(b, torch.tensor(y), how)
            np.testing.assert_allclose(out.numpy(force=True), expected.detach().numpy(), atol=1e-12)
            out.sum().backward()
            expected.sum().backward()
            np.testing.assert_allclose(a.grad.numpy(force=True), b.grad.numpy(), atol=1e-12)


def test_multilabel_margin_loss(device: str, data: dict[str, Any]) -> None:
    # -1 ends each row's targets; a repeated target counts twice, as in PyTorch's kernel.
    targets = np.array([[3, 0, -1, 1], [0, 1, 2, 3], [1, -1, 0, 0], [-1, 1, 2, 3], [2, 2, -1, 0]])
    _compare(device, "multilabel_margin_loss", [data["x1"], targets])
    _compare(device, "multilabel_margin_loss", [data["x1"][0], targets[0]])


@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
def test_triplet_margin_loss(device: str, data: dict[str, Any], swap: bool, p: float) -> None:
    arrays = [data["x1"], data["x2"], data["x3"]]
    _compare(device, "triplet_margin_loss", arrays, kwargs={"margin": 0.6, "p": p, "swap": swap})


def test_triplet_margin_with_distance_loss(device: str, data: dict[str, Any]) -> None:
    import torch

    arrays = [data["x1"], data["x2"], data["x3"]]
    _compare(device, "triplet_margin_with_distance_loss", arrays, kwargs={"swap": True})

    def ours(a: Any, p: Any, n: Any, reduction: str) -> Any:
        return F.triplet_margin_with_distance_loss(
            a, p, n, distance_function=lambda x, y: 1.0 - F.cosine_similarity(x, y),
            margin=0.3, reduction=reduction,
        )  # fmt: skip

    def theirs(a: Any, p: Any, n: Any, reduction: str) -> Any:
        return torch.nn.functional.triplet_margin_with_distance_loss(
            a, p, n, distance_function=lambda x, y: 1.0 - torch.cosine_similarity(x, y),
            margin=0.3, reduction=reduction,
        )  # fmt: skip

    for how in REDUCTIONS:
        out = ours(*[ember.tensor(a, device=device) for a in arrays], reduction=how)
        expected = theirs(*[torch.tensor(a) for a in arrays], reduction=how)
        np.testing.assert_allclose(out.numpy(force=True), expected.numpy(), atol=1e-12)


def test_kl_div(device: str, rng: Any) -> None:
    log_q = np.log(rng.dirichlet(np.ones(4), 3))
    p = rng.dirichlet(np.ones(4), 3)
    reductions = (*REDUCTIONS, "batchmean")
    _compare(device, "kl_div", [log_q, p], reductions=reductions)
    _compare(device, "kl_div", [log_q, np.log(p)], reductions=reductions,
             kwargs={"log_target": True})  # fmt: skip
    # target 0 contributes 0 (0 log 0), not NaN.
    p[0, 1] = 0.0
    out = F.kl_div(
        ember.tensor(log_q, device=device), ember.tensor(p, device=device), reduction="sum"
    )
    assert np.isfinite(out.item())


def test_kl_div_mean_warns_as_torch() -> None:
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(ember.zeros(2, 3), ember.ones(2, 3))


@pytest.mark.parametrize("log_input", [True, False])
@pytest.mark.parametrize("full", [False, True])
def test_poisson_nll_loss(device: str, rng: Any, log_input: bool, full: bool) -> None:
    rates = rng.standard_normal((3, 4))
    if not log_input:
        rates = np.abs(rates) + 0.1
    counts = rng.poisson(2.0, (3, 4)).astype(np.float64)
    kwargs = {"log_input": log_input, "full": full}
    _compare(device, "poisson_nll_loss", [rates, counts], kwargs=kwargs)


@pytest.mark.parametrize("var_shape", [(3, 4), (3,), (3, 1)], ids=["hetero", "short", "one"])
@pytest.mark.parametrize("full", [False, True])
def test_gaussian_nll_loss(device: str, rng: Any, var_shape: tuple[int, ...], full: bool) -> None:
    mean, target = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    var = rng.uniform(0.1, 2.0, var_shape)
    var.reshape(-1)[0] = 1e-9  # below eps: clamped in value, not in gradient
    _compare(device, "gaussian_nll_loss", [mean, target, var], kwargs={"full": full})


def test_gaussian_nll_loss_scalar_var_and_errors() -> None:
    import torch

    mean, target = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    out = F.gaussian_nll_loss(ember.tensor(mean), ember.tensor(target), 0.5)
    expected = torch.nn.functional.gaussian_nll_loss(torch.tensor(mean), torch.tensor(target), 0.5)
    np.testing.assert_allclose(out.item(), expected.item(), rtol=1e-12)
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(ember.zeros(2, 3), ember.zeros(2, 3), ember.ones(4))
    with pytest.raises(ValueError, match="var has negative entry/entries"):
        F.gaussian_nll_loss(ember.zeros(2, 3), ember.zeros(2, 3), -ember.ones(2, 3))
    with pytest.raises(ValueError, match="bad is not valid"):
        F.gaussian_nll_loss(ember.zeros(2, 3), ember.zeros(2, 3), ember.ones(2, 3), reduction="bad")


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cosine_similarity(device: str, rng: Any, dim: int) -> None:
    import torch

    a, b = rng.standard_normal((3, 4)), rng.standard_normal((1, 4))
    a[0] = 0.0  # a zero row: the norm is clamped to eps
    out = F.cosine_similarity(ember.tensor(a, device=device), ember.tensor(b, device=device), dim)
    expected = torch.nn.functional.cosine_similarity(torch.tensor(a), torch.tensor(b), dim)
    np.testing.assert_allclose(out.numpy(force=True), expected.numpy(), atol=1e-12)
    check_gradients(lambda x, y: F.cosine_similarity(x, y, dim), [a[1:], b], device)
    module = nn.CosineSimilarity(dim)
    np.testing.assert_allclose(module(ember.tensor(a), ember.tensor(b)).numpy(), expected.numpy())


@pytest.mark.parametrize("p", [1.0, 2.0, 0.5])
@pytest.mark.parametrize("keepdim", [False, True])
def test_pairwise_distance(device: str, rng: Any, p: float, keepdim: bool) -> None:
    import torch

    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    for x, y in ((a, b), (a[0], b[0]), (a, b[0])):
        out = F.pairwise_distance(
            ember.tensor(x, device=device), ember.tensor(y, device=device), p, keepdim=keepdim
        )
        expected = torch.nn.functional.pairwise_distance(
            torch.tensor(x), torch.tensor(y), p, keepdim=keepdim
        )
        assert tuple(out.shape) == tuple(expected.shape)
        np.testing.assert_allclose(out.numpy(force=True), expected.numpy(), atol=1e-12)
    check_gradients(lambda x, y: F.pairwise_distance(x, y, p), [a, b], device)
    module = nn.PairwiseDistance(p, keepdim=keepdim)
    assert module.norm == p
    np.testing.assert_allclose(
        module(ember.tensor(a), ember.tensor(b)).numpy(),
        torch.nn.PairwiseDistance(p, keepdim=keepdim)(torch.tensor(a), torch.tensor(b)).numpy(),
    )


def test_loss_modules_match_functional(data: dict[str, Any]) -> None:
    import torch

    x1, x2, x3 = (data[k] for k in ("x1", "x2", "x3"))
    signs, classes = data["signs"], data["classes"]
    labels = (data["signs2d"] > 0).astype(np.float64)
    cases: list[tuple[str, dict[str, Any], list[np.ndarray]]] = [
        ("MarginRankingLoss", {"margin": 0.2, "reduction": "sum"}, [x1[:, 0], x2[:, 0], signs]),
        ("HingeEmbeddingLoss", {"margin": 0.5}, [x1, data["signs2d"]]),
        ("CosineEmbeddingLoss", {"margin": 0.1, "reduction": "none"}, [x1, x2, signs]),
        ("SoftMarginLoss", {}, [x1, data["signs2d"]]),
        ("MultiLabelSoftMarginLoss", {"reduction": "sum"}, [x1, labels]),
        ("MultiMarginLoss", {"p": 2, "margin": 0.5}, [x1, classes]),
        ("MultiLabelMarginLoss", {}, [x1, np.tile([1, 0, -1, 2], (5, 1))]),
        ("KLDivLoss", {"reduction": "batchmean", "log_target": True}, [x1, x2]),
        ("PoissonNLLLoss", {"full": True}, [x1, np.abs(x2) * 3]),
        ("GaussianNLLLoss", {"full": True}, [x1, x2, np.abs(x3)]),
        ("TripletMarginLoss", {"margin": 0.5, "p": 1.0, "swap": True}, [x1, x2, x3]),
        ("TripletMarginWithDistanceLoss", {"margin": 0.5}, [x1, x2, x3]),
    ]
    for name, options, arrays in cases:
        ours = getattr(nn, name)(**options)
        theirs = getattr(torch.nn, name)(**options)
        assert repr(ours) == repr(theirs)
        out = ours(*[ember.tensor(a) for a in arrays])
        expected = theirs(*[torch.tensor(a) for a in arrays])
        np.testing.assert_allclose(out.numpy(), expected.numpy(), atol=1e-12, err_msg=name)


def test_legacy_reduction_flags_and_weight_buffer() -> None:
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        module = nn.SoftMarginLoss(size_average=False)
    assert module.reduction == "sum"
    weighted = nn.MultiMarginLoss(weight=ember.ones(4))
    assert "weight" in dict(weighted.named_buffers())


def test_loss_errors_as_torch() -> None:
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(ValueError, match="MultiMarginLoss: expected weight to be None or 1D"):
        nn.MultiMarginLoss(weight=ember.ones(2, 2))
    with pytest.raises(ValueError, match="TripletMarginLoss: expected margin to be greater than 0"):
        nn.TripletMarginLoss(margin=0.0)
    with pytest.raises(ValueError, match="TripletMarginWithDistanceLoss: expected margin"):
        nn.TripletMarginWithDistanceLoss(margin=-1.0)
    with pytest.raises(ValueError, match="margin must be greater than 0, got 0"):
        F.triplet_margin_loss(ember.zeros(2, 3), ember.zeros(2, 3), ember.zeros(2, 3), margin=0)
    with pytest.raises(RuntimeError, match="expected to have the same number of dimensions"):
        F.triplet_margin_with_distance_loss(ember.zeros(2, 3), ember.zeros(3), ember.zeros(2, 3))
    with pytest.raises(RuntimeError, match="All input tensors should have same dimension"):
        F.margin_ranking_loss(ember.zeros(3), ember.zeros(3), ember.zeros(1, 3))
    with pytest.raises(RuntimeError, match="1D target tensor expects 2D input tensors"):
        F.cosine_embedding_loss(ember.zeros(3), ember.zeros(3), ember.ones(3))
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected"):
        F.cosine_embedding_loss(ember.zeros(3, 2), ember.zeros(3, 2), ember.ones(3, 2))
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        F.soft_margin_loss(ember.zeros(3), ember.zeros(3), reduction="bad")


def test_class_index_loss_errors_as_torch() -> None:
    scores = ember.zeros(2, 3)
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(scores, ember.tensor([0, 3]))
    with pytest.raises(RuntimeError, match="Expected target size \\[2\\], but got \\[3\\]"):
        F.multi_margin_loss(scores, ember.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Float"):
        F.multi_margin_loss(scores, ember.tensor([0.0, 1.0]))
    with pytest.raises(RuntimeError, match="Expected non-empty vector or matrix"):
        F.multi_margin_loss(ember.zeros(2, 3, 4), ember.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="argument #2 'target' is out of range"):
        F.multilabel_margin_loss(scores, ember.tensor([[0, 3, -1], [0, 1, 2]]))
    with pytest.raises(RuntimeError, match="inconsistent target size: \\[2, 2\\] for input of"):
        F.multilabel_margin_loss(scores, ember.tensor([[0, 1], [0, 1]]))
