"""Losses: values against NumPy float64 references and PyTorch, every cross-entropy option,
gradients against finite differences, PyTorch's errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
import ember.nn.functional as F

from ._helpers import check_gradients, tensor

REDUCTIONS = ["mean", "sum", "none"]


def _log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def _reduce(losses: np.ndarray, how: str) -> np.ndarray:
    return {"mean": np.mean, "sum": np.sum, "none": np.asarray}[how](losses)


def _nll_reference(
    logp: np.ndarray, target: np.ndarray, weight: np.ndarray | None, ignore: int, how: str
) -> np.ndarray:
    """NumPy nll_loss for (N, C, *) log-probabilities and (N, *) targets."""
    classes = logp.shape[1]
    w = np.ones(classes) if weight is None else weight
    kept = target != ignore
    safe = np.where(kept, target, 0)
    picked = np.take_along_axis(logp, safe[:, None], axis=1)[:, 0]
    weights = w[safe] * kept
    losses = -picked * weights
    if how == "mean":
        return losses.sum() / weights.sum()
    return _reduce(losses, how)


@pytest.mark.parametrize("how", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("spatial", [(), (3,), (2, 2)], ids=["2d", "3d", "4d"])
def test_nll_loss_values(
    device: str, how: str, weighted: bool, spatial: tuple[int, ...], rng: Any
) -> None:
    logp = _log_softmax(rng.standard_normal((4, 5, *spatial)), 1)
    target = rng.integers(0, 5, (4, *spatial))
    target.reshape(-1)[0] = -100
    weight = rng.uniform(0.5, 2.0, 5) if weighted else None
    result = F.nll_loss(
        tensor(logp, device),
        ember.tensor(target, device=device),
        None if weight is None else tensor(weight, device),
        reduction=how,
    )
    expected = _nll_reference(logp, target, weight, -100, how)
    np.testing.assert_allclose(result.numpy(force=True), expected, atol=1e-12)


def test_nll_loss_unbatched_and_errors(device: str, rng: Any) -> None:
    logp = _log_softmax(rng.standard_normal(4), 0)
    result = F.nll_loss(tensor(logp, device), ember.tensor(2, device=device))
    np.testing.assert_allclose(result.item(), -logp[2])
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        F.nll_loss(tensor(np.zeros((2, 3)), device), ember.tensor([0, 7], device=device))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(2\) to match target"):
        F.nll_loss(tensor(np.zeros((2, 3)), device), ember.tensor([0, 1, 2], device=device))
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        F.nll_loss(
            tensor(np.zeros((2, 3)), device), ember.tensor([0, 1], device=device), reduction="avg"
        )


def test_nll_loss_all_ignored_is_nan(device: str) -> None:
    result = F.nll_loss(
        tensor(np.zeros((2, 3)), device), ember.tensor([1, 1], device=device), ignore_index=1
    )
    assert np.isnan(result.item())


@pytest.mark.parametrize("how", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignored", [False, True])
def test_nll_loss_gradients(device: str, how: str, weighted: bool, ignored: bool, rng: Any) -> None:
    target = ember.tensor([0, 2, -100 if ignored else 2, 1], device=device)
    weight = tensor(rng.uniform(0.5, 2.0, 3), device) if weighted else None
    check_gradients(
        lambda x: F.nll_loss(x, target, weight, reduction=how),
        [rng.standard_normal((4, 3))],
        device,
    )


@pytest.mark.parametrize("how", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 1])
@pytest.mark.parametrize("spatial", [(), (3,)], ids=["2d", "3d"])
def test_cross_entropy_class_indices_match_torch(
    device: str, how: str, smoothing: float, weighted: bool, ignore_index: int,
    spatial: tuple[int, ...], rng: Any,
) -> None:  # fmt: skip
    torch = pytest.importorskip("torch")
    logits = rng.standard_normal((5, 4, *spatial)) * 2
    target = rng.integers(0, 4, (5, *spatial))
    target.reshape(-1)[0] = ignore_index
    weight = rng.uniform(0.5, 2.0, 4) if weighted else None
    options = {"reduction": how, "label_smoothing": smoothing, "ignore_index": ignore_index}
    ours = F.cross_entropy(
        tensor(logits, device),
        ember.tensor(target, device=device),
        None if weight is None else tensor(weight, device),
        **options,
    )
    theirs = torch.nn.functional.cross_entropy(
        torch.tensor(logits),
        torch.tensor(target),
        None if weight is None else torch.tensor(weight),
        **options,
    )
    np.testing.assert_allclose(
        ours.numpy(force=True), theirs.numpy(force=True), rtol=1e-10, atol=1e-12
    )


@pytest.mark.parametrize("how", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_probabilities_match_torch(
    device: str, how: str, smoothing: float, weighted: bool, rng: Any
) -> None:
    torch = pytest.importorskip("torch")
    logits = rng.standard_normal((3, 4, 2))
    target = rng.dirichlet(np.ones(4), (3, 2)).transpose(0, 2, 1)
    weight = rng.uniform(0.5, 2.0, 4) if weighted else None
    options = {"reduction": how, "label_smoothing": smoothing}
    ours = F.cross_entropy(
        tensor(logits, device),
        tensor(target, device),
        None if weight is None else tensor(weight, device),
        **options,
    )
    theirs = torch.nn.functional.cross_entropy(
        torch.tensor(logits),
        torch.tensor(target),
        None if weight is None else torch.tensor(weight),
        **options,
    )
    np.testing.assert_allclose(
        ours.numpy(force=True), theirs.numpy(force=True), rtol=1e-10, atol=1e-12
    )


def test_cross_entropy_reference_and_stability(device: str) -> None:
    logits = np.array([[1000.0, 0.0, -1000.0], [3.0, 3.0, 3.0]])
    target = np.array([1, 2])
    expected = -_log_softmax(logits, 1)[np.arange(2), target].mean()
    result = F.cross_entropy(
        tensor(logits, device, ember.float32), ember.tensor(target, device=device)
    )
    assert np.isfinite(result.item())
    np.testing.assert_allclose(result.item(), expected, rtol=1e-6)


def test_cross_entropy_unbatched(device: str, rng: Any) -> None:
    logits = rng.standard_normal(5)
    result = F.cross_entropy(tensor(logits, device), ember.tensor(3, device=device))
    np.testing.assert_allclose(result.item(), -_log_softmax(logits, 0)[3])


def test_cross_entropy_errors(device: str) -> None:
    x = tensor(np.zeros((2, 3)), device)
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point"):
        F.cross_entropy(x, tensor(np.full((2, 3), 1 / 3), device), ignore_index=0)
    with pytest.raises(RuntimeError, match="Expected floating point type for target"):
        F.cross_entropy(x, ember.zeros(2, 3, dtype=ember.int64, device=device))
    with pytest.raises(RuntimeError, match=r"label_smoothing must be between 0\.0 and 1\.0"):
        F.cross_entropy(x, ember.tensor([0, 1], device=device), label_smoothing=1.5)


@pytest.mark.parametrize("how", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_gradients(
    device: str, how: str, smoothing: float, weighted: bool, rng: Any
) -> None:
    target = ember.tensor([[0, 2], [-100, 1], [1, 1]], device=device)
    weight = tensor(rng.uniform(0.5, 2.0, 3), device) if weighted else None
    check_gradients(
        lambda x: F.cross_entropy(x, target, weight, reduction=how, label_smoothing=smoothing),
        [rng.standard_normal((3, 3, 2))],
        device,
    )


@pytest.mark.parametrize("how", REDUCTIONS)
def test_cross_entropy_probability_gradients(device: str, how: str, rng: Any) -> None:
    probabilities = rng.dirichlet(np.ones(3), 4)
    check_gradients(
        lambda x, p: F.cross_entropy(x, p, reduction=how, label_smoothing=0.1),
        [rng.standard_normal((4, 3)), probabilities],
        device,
    )


# -- regression and binary losses ---------------------------------------------------------


def _huber(d: np.ndarray, delta: float) -> np.ndarray:
    return np.where(np.abs(d) < delta, 0.5 * d**2, delta * (np.abs(d) - 0.5 * delta))


def _smooth_l1(d: np.ndarray, beta: float) -> np.ndarray:
    return np.where(np.abs(d) < beta, 0.5 * d**2 / beta, np.abs(d) - 0.5 * beta)


PAIRWISE: dict[str, tuple[Any, Any]] = {
    "mse": (F.mse_loss, lambda x, y: (x - y) ** 2),
    "l1": (F.l1_loss, lambda x, y: np.abs(x - y)),
    "huber": (F.huber_loss, lambda x, y: _huber(x - y, 1.0)),
    "huber_delta": (
        lambda x, y, reduction: F.huber_loss(x, y, reduction, delta=0.5),
        lambda x, y: _huber(x - y, 0.5),
    ),
    "smooth_l1": (F.smooth_l1_loss, lambda x, y: _smooth_l1(x - y, 1.0)),
    "smooth_l1_beta": (
        lambda x, y, reduction: F.smooth_l1_loss(x, y, reduction=reduction, beta=0.3),
        lambda x, y: _smooth_l1(x - y, 0.3),
    ),
}


@pytest.mark.parametrize("name", sorted(PAIRWISE))
@pytest.mark.parametrize("how", REDUCTIONS)
def test_pairwise_losses(device: str, name: str, how: str, rng: Any) -> None:
    fn, reference = PAIRWISE[name]
    x, y = rng.standard_normal((2, 3, 4)) * 2
    result = fn(tensor(x, device), tensor(y, device), reduction=how)
    np.testing.assert_allclose(result.numpy(force=True), _reduce(reference(x, y), how), atol=1e-12)
    # Differences kept away from the kinks (0, ±delta, ±beta).
    x = y + rng.choice([-1.0, 1.0], y.shape) * rng.uniform(0.05, 0.25, y.shape) * 3.3
    check_gradients(lambda a, b: fn(a, b, reduction=how), [x, y], device)


def test_pairwise_loss_broadcast_warns(device: str) -> None:
    with pytest.warns(UserWarning, match="Using a target size"):
        F.mse_loss(tensor(np.zeros((3, 1)), device), tensor(np.zeros(3), device))


def test_legacy_reduction_flags(device: str) -> None:
    x, y = tensor([1.0, 2.0], device), tensor([0.0, 0.0], device)
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        assert F.mse_loss(x, y, size_average=False).item() == 5.0
    with pytest.warns(UserWarning):
        assert F.l1_loss(x, y, reduce=False).shape == (2,)


@pytest.mark.parametrize("how", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy(device: str, how: str, weighted: bool, rng: Any) -> None:
    p = rng.uniform(0.05, 0.95, (3, 4))
    t = rng.uniform(0, 1, (3, 4))
    w = rng.uniform(0.5, 2, 4) if weighted else None
    expected = -(t * np.log(p) + (1 - t) * np.log(1 - p)) * (1 if w is None else w)
    wt = None if w is None else tensor(w, device)
    result = F.binary_cross_entropy(tensor(p, device), tensor(t, device), wt, reduction=how)
    np.testing.assert_allclose(result.numpy(force=True), _reduce(expected, how), atol=1e-12)
    check_gradients(
        lambda a, b: F.binary_cross_entropy(a, b, wt, reduction=how), [p, t], device, atol=1e-5
    )


def test_binary_cross_entropy_clamps_log_and_checks_range(device: str) -> None:
    result = F.binary_cross_entropy(tensor([0.0, 1.0], device), tensor([1.0, 0.0], device))
    assert result.item() == 100.0
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(tensor([1.5], device), tensor([1.0], device))
    with pytest.raises(ValueError, match="Using a target size"):
        F.binary_cross_entropy(tensor([[0.5]], device), tensor([1.0], device))


@pytest.mark.parametrize("how", REDUCTIONS)
@pytest.mark.parametrize("pos_weighted", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy_with_logits(
    device: str, how: str, pos_weighted: bool, weighted: bool, rng: Any
) -> None:
    x = rng.standard_normal((3, 4)) * 3
    t = rng.uniform(0, 1, (3, 4))
    w = rng.uniform(0.5, 2, 4) if weighted else None
    pw = rng.uniform(0.5, 3, 4) if pos_weighted else None
    log_sig, log_not_sig = -np.log1p(np.exp(-x)), -np.log1p(np.exp(x))
    positive = t * log_sig * (1 if pw is None else pw)
    expected = -(positive + (1 - t) * log_not_sig) * (1 if w is None else w)
    wt = None if w is None else tensor(w, device)
    pwt = None if pw is None else tensor(pw, device)

    def loss(a: Any, b: Any) -> Any:
        return F.binary_cross_entropy_with_logits(a, b, wt, reduction=how, pos_weight=pwt)

    np.testing.assert_allclose(
        loss(tensor(x, device), tensor(t, device)).numpy(force=True),
        _reduce(expected, how),
        atol=1e-12,
    )
    check_gradients(loss, [x, t], device)


def test_binary_cross_entropy_with_logits_is_stable(device: str) -> None:
    x = tensor([1000.0, -1000.0], device, ember.float32)
    t = tensor([0.0, 1.0], device, ember.float32)
    result = F.binary_cross_entropy_with_logits(x, t, reduction="none")
    np.testing.assert_allclose(result.numpy(force=True), [1000.0, 1000.0])
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(x, tensor([1.0], device))


def test_losses_match_torch(device: str, rng: Any) -> None:
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x, y = rng.standard_normal((2, 4, 3)).astype(np.float32)
    p = rng.uniform(0.01, 0.99, (4, 3)).astype(np.float32)
    pw = rng.uniform(0.5, 2.0, 3).astype(np.float32)
    ex, ey, ep = (tensor(a, device, ember.float32) for a in (x, y, p))
    tx, ty, tp = (torch.tensor(a) for a in (x, y, p))
    pairs = [
        (F.mse_loss(ex, ey), tf.mse_loss(tx, ty)),
        (F.l1_loss(ex, ey, reduction="sum"), tf.l1_loss(tx, ty, reduction="sum")),
        (F.huber_loss(ex, ey, delta=0.7), tf.huber_loss(tx, ty, delta=0.7)),
        (F.smooth_l1_loss(ex, ey, beta=0.5), tf.smooth_l1_loss(tx, ty, beta=0.5)),
        (F.binary_cross_entropy(ep, ep), tf.binary_cross_entropy(tp, tp)),
        (
            F.binary_cross_entropy_with_logits(
                ex, ep, pos_weight=tensor(pw, device, ember.float32)
            ),
            tf.binary_cross_entropy_with_logits(tx, tp, pos_weight=torch.tensor(pw)),
        ),
    ]
    for ours, theirs in pairs:
        np.testing.assert_allclose(
            ours.numpy(force=True), theirs.numpy(force=True), rtol=1e-5, atol=1e-6
        )


def test_cross_entropy_second_derivatives(device: str, rng: Any) -> None:
    """The nll_loss and log_softmax formulas are differentiable again (create_graph=True)."""
    target = ember.tensor([0, 2, -100, 1], device=device)
    weight = tensor(rng.uniform(0.5, 2.0, 3), device)

    def first_derivative(x: Any) -> Any:
        loss = F.cross_entropy(x, target, weight, label_smoothing=0.1)
        (g,) = ember.autograd.grad([loss], [x], create_graph=True)
        return g

    check_gradients(
        first_derivative, [rng.standard_normal((4, 3))], device, atol=1e-5, graph_inside=True
    )
