"""CELU ... Threshold, PReLU, RReLU, GLU, Softmax2d, alpha dropout and gumbel_softmax:
values and gradients against PyTorch, in-place forms, module reprs, PyTorch's errors, and
the statistics of the random ones."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

from ._helpers import check_gradients, tensor

# The kinks (-3, 0, +-0.5, 3) are included: the gradients there must be PyTorch's too.
POINTS = np.array([-4.0, -3.0, -1.2, -0.5, -0.2, 0.0, 0.2, 0.5, 1.3, 3.0, 4.5, 25.0])

CASES: dict[str, tuple[Callable[..., Any], str, dict[str, Any]]] = {
    "celu": (F.celu, "celu", {}),
    "celu_alpha": (F.celu, "celu", {"alpha": 0.7}),
    "selu": (F.selu, "selu", {}),
    "hardshrink": (F.hardshrink, "hardshrink", {}),
    "hardshrink_lambd": (F.hardshrink, "hardshrink", {"lambd": 1.0}),
    "softshrink": (F.softshrink, "softshrink", {}),
    "hardsigmoid": (F.hardsigmoid, "hardsigmoid", {}),
    "hardswish": (F.hardswish, "hardswish", {}),
    "mish": (F.mish, "mish", {}),
    "softsign": (F.softsign, "softsign", {}),
    "tanhshrink": (F.tanhshrink, "tanhshrink", {}),
    "threshold": (F.threshold, "threshold", {"threshold": 0.2, "value": -2.0}),
    "rrelu_eval": (F.rrelu, "rrelu", {"lower": 0.1, "upper": 0.3}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_torch(device: str, name: str) -> None:
    import torch

    ours_fn, torch_name, kwargs = CASES[name]
    theirs_fn = getattr(torch.nn.functional, torch_name)
    x = tensor(POINTS, device, grad=True)
    t = torch.tensor(POINTS, requires_grad=True)
    out, expected = ours_fn(x, **kwargs), theirs_fn(t, **kwargs)
    np.testing.assert_allclose(out.numpy(force=True), expected.detach().numpy(), atol=1e-12)
    weights = np.linspace(-1.0, 2.0, POINTS.size)
    (out * tensor(weights, device)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(force=True), t.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize(
    ("ours", "theirs", "kwargs"),
    [
        (F.celu_, "celu_", {"alpha": 2.0}),
        (F.selu_, "selu_", {}),
        (F.elu_, "elu_", {"alpha": 0.5}),
        (F.hardtanh_, "hardtanh_", {"min_val": -0.5, "max_val": 0.7}),
        (F.threshold_, "threshold_", {"threshold": 0.0, "value": 9.0}),
        (F.rrelu_, "rrelu_", {}),
    ],
)
def test_in_place_forms_write_the_input_and_continue_its_graph(
    ours: Callable[..., Any], theirs: str, kwargs: dict[str, Any]
) -> None:
    import torch

    leaf = ember.tensor(POINTS, requires_grad=True)
    inner = leaf * 2.0
    result = ours(inner, **kwargs)
    assert result is inner
    t_leaf = torch.tensor(POINTS, requires_grad=True)
    t_inner = t_leaf * 2.0
    getattr(torch.nn.functional, theirs)(t_inner, **kwargs)
    np.testing.assert_allclose(inner.detach().numpy(), t_inner.detach().numpy(), atol=1e-12)
    inner.sum().backward()
    t_inner.sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), t_leaf.grad.numpy(), atol=1e-12)
    plain = ember.tensor(POINTS)
    assert ours(plain, **kwargs) is plain


def test_inplace_flags_of_modules_write_through() -> None:
    modules = [
        nn.CELU(inplace=True), nn.SELU(True), nn.Hardsigmoid(True), nn.Hardswish(True),
        nn.Mish(True), nn.Threshold(0.0, 1.0, True), nn.RReLU(inplace=True),
    ]  # fmt: skip
    for module in modules:
        x = ember.tensor(POINTS)
        before = x.numpy().copy()
        assert module(x) is x
        assert not np.allclose(x.numpy(), before), module


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_glu_matches_torch(device: str, dim: int, rng: Any) -> None:
    import torch

    data = rng.standard_normal((4, 6, 2))
    out = F.glu(tensor(data, device), dim)
    expected = torch.nn.functional.glu(torch.tensor(data), dim)
    np.testing.assert_allclose(out.numpy(force=True), expected.numpy(), atol=1e-12)
    check_gradients(lambda x: F.glu(x, dim), [data], device)
    assert repr(nn.GLU(dim)) == f"GLU(dim={dim})"


def test_glu_errors_as_torch() -> None:
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 0 is"):
        F.glu(ember.zeros(3))
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        F.glu(ember.tensor(1.0))


@pytest.mark.parametrize(
    ("shape", "channels"),
    [((), 1), ((5,), 1), ((3, 4), 1), ((3, 4), 4), ((2, 4, 3), 4), ((2, 4, 2, 3), 4)],
)
def test_prelu_matches_torch(shape: tuple[int, ...], channels: int, rng: Any) -> None:
    import torch

    data = rng.standard_normal(shape)
    weight = rng.uniform(0.0, 0.5, channels)
    x, w = ember.tensor(data, requires_grad=True), ember.tensor(weight, requires_grad=True)
    t, tw = torch.tensor(data, requires_grad=True), torch.tensor(weight, requires_grad=True)
    out, expected = F.prelu(x, w), torch.nn.functional.prelu(t, tw)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), atol=1e-12)


def test_prelu_module_parameters_and_errors() -> None:
    module = nn.PReLU(3, init=0.1)
    assert repr(module) == "PReLU(num_parameters=3)"
    assert [name for name, _ in module.named_parameters()] == ["weight"]
    np.testing.assert_allclose(module.weight.detach().numpy(), [0.1, 0.1, 0.1], rtol=1e-6)
    with pytest.raises(RuntimeError, match="Found parameter numbers = 3 and channel size = 2"):
        module(ember.zeros(4, 2))
    with pytest.raises(RuntimeError, match="Expected `weight` to be a scalar or 1D tensor"):
        F.prelu(ember.zeros(2, 3), ember.zeros(1, 3))


def test_rrelu_training_draws_slopes_in_range_and_eval_uses_their_mean() -> None:
    ember.manual_seed(0)
    x = -ember.ones(20000)
    slopes = -F.rrelu(x, 0.1, 0.3, training=True).numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3
    assert abs(slopes.mean() - 0.2) < 0.005 and abs(slopes.std() - 0.2 / 12**0.5) < 0.005
    module = nn.RReLU(0.1, 0.3).eval()
    np.testing.assert_allclose(module(x).numpy(), -0.2 * np.ones(20000), rtol=1e-6)
    np.testing.assert_array_equal(module(x).numpy(), module(x).numpy())
    positive = ember.ones(5)
    np.testing.assert_array_equal(F.rrelu(positive, training=True).numpy(), np.ones(5))
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal"):
        F.rrelu(x, 0.5, 0.1, training=True)


def test_rrelu_training_gradient_is_the_drawn_slope() -> None:
    ember.manual_seed(1)
    x = ember.tensor(-np.ones(50), requires_grad=True)
    out = F.rrelu(x, training=True)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (out / x).detach().numpy(), rtol=1e-12)


def test_softmax2d_is_softmax_over_channels(rng: Any) -> None:
    import torch

    data = rng.standard_normal((2, 3, 4, 5))
    for sample in (data, data[0]):
        out = nn.Softmax2d()(ember.tensor(sample))
        expected = torch.nn.Softmax2d()(torch.tensor(sample))
        np.testing.assert_allclose(out.numpy(), expected.numpy(), atol=1e-12)
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D"):
        nn.Softmax2d()(ember.zeros(2, 3))


def test_reprs_match_torch() -> None:
    import torch

    pairs = [
        (nn.CELU(), torch.nn.CELU()), (nn.CELU(2.0, True), torch.nn.CELU(2.0, True)),
        (nn.SELU(True), torch.nn.SELU(True)), (nn.Hardshrink(), torch.nn.Hardshrink()),
        (nn.Softshrink(0.3), torch.nn.Softshrink(0.3)), (nn.Hardsigmoid(), torch.nn.Hardsigmoid()),
        (nn.Hardswish(), torch.nn.Hardswish()), (nn.Mish(), torch.nn.Mish()),
        (nn.RReLU(), torch.nn.RReLU()), (nn.RReLU(0.1, 0.2, True), torch.nn.RReLU(0.1, 0.2, True)),
        (nn.Softsign(), torch.nn.Softsign()), (nn.Tanhshrink(), torch.nn.Tanhshrink()),
        (nn.Threshold(0.1, 2.0), torch.nn.Threshold(0.1, 2.0)),
        (nn.Softmax2d(), torch.nn.Softmax2d()),
        (nn.AlphaDropout(), torch.nn.AlphaDropout()),
        (nn.FeatureAlphaDropout(0.2), torch.nn.FeatureAlphaDropout(0.2)),
    ]  # fmt: skip
    for ours, theirs in pairs:
        assert repr(ours) == repr(theirs)


def test_activation_errors_as_torch() -> None:
    with pytest.raises(
        RuntimeError, match=r"lambda must be in range \[0, 3.40282e\+38\] for input"
    ):
        F.softshrink(ember.zeros(3), -1.0)
    with pytest.raises(RuntimeError, match="alpha cannot be 0 for CELU"):
        F.celu(ember.zeros(3), 0.0)


@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_keeps_mean_and_variance(feature: bool) -> None:
    ember.manual_seed(0)
    x = ember.randn(400, 200, 3, dtype=ember.float64) if feature else ember.randn(80000)
    drop = F.feature_alpha_dropout if feature else F.alpha_dropout
    out = drop(x, 0.3, True).numpy()
    assert abs(out.mean()) < 0.02 and abs(out.std() - 1.0) < 0.02
    assert drop(x, 0.3, False) is x
    assert drop(x, 0.0, True) is x
    np.testing.assert_array_equal(drop(x, 1.0, True).numpy(), np.zeros(x.shape))
    module = (nn.FeatureAlphaDropout if feature else nn.AlphaDropout)(0.3)
    assert module.eval()(x) is x
    if feature:
        # One draw per (sample, channel): a row is all dropped (constant) or all kept (affine).
        rows = out.reshape(-1, 3)
        constant = np.isclose(rows, rows[:, :1]).all(1)
        assert abs(constant.mean() - 0.3) < 0.02
        alpha = 1.7580993408473766
        a = 1.0 / np.sqrt((alpha**2 * 0.3 + 1) * 0.7)
        kept = x.numpy().reshape(-1, 3)[~constant] * a + alpha * a * 0.3
        np.testing.assert_allclose(rows[~constant], kept, rtol=1e-12, atol=1e-12)


def test_alpha_dropout_errors_as_torch() -> None:
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        F.alpha_dropout(ember.zeros(3), 1.5)
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
        F.feature_alpha_dropout(ember.zeros(3), 0.5, True)


def test_alpha_dropout_dropped_units_take_the_affine_minimum() -> None:
    ember.manual_seed(3)
    p = 0.4
    out = F.alpha_dropout(ember.zeros(1000, dtype=ember.float64), p, True).numpy()
    alpha = 1.7580993408473766
    a = 1.0 / np.sqrt((alpha**2 * p + 1) * (1 - p))
    dropped, kept = -alpha * a * (1 - p), alpha * a * p
    assert set(np.round(out, 6)) <= {round(dropped, 6), round(kept, 6)}
    assert abs((np.isclose(out, dropped)).mean() - p) < 0.05


def test_gumbel_softmax_soft_and_hard(rng: Any) -> None:
    ember.manual_seed(0)
    logits = ember.tensor(np.log([0.1, 0.2, 0.7]) * np.ones((4000, 3)), requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.detach().numpy().sum(1), np.ones(4000), rtol=1e-9)
    hard = F.gumbel_softmax(logits, hard=True)
    values = hard.detach().numpy()
    assert set(np.unique(values)) <= {0.0, 1.0}
    np.testing.assert_array_equal(values.sum(1), np.ones(4000))
    # Gumbel-max: the argmax is a sample of softmax(logits).
    np.testing.assert_allclose(values.mean(0), [0.1, 0.2, 0.7], atol=0.03)
    (hard * ember.tensor(rng.standard_normal((4000, 3)))).sum().backward()
    assert logits.grad is not None and np.abs(logits.grad.numpy()).sum() > 0
