"""ember.nn.init: gains and fans as PyTorch, distributions' bounds and moments, generators,
no graph recording on Parameters."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import ember
from ember import nn
from ember.nn import init


@pytest.mark.parametrize(
    "nonlinearity,param",
    [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
     ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", math.sqrt(5)), ("selu", None)],
)  # fmt: skip
def test_calculate_gain_matches_torch(nonlinearity: str, param: float | None) -> None:
    torch = pytest.importorskip("torch")
    expected = torch.nn.init.calculate_gain(nonlinearity, param)
    assert init.calculate_gain(nonlinearity, param) == pytest.approx(expected)


def test_calculate_gain_errors() -> None:
    with pytest.raises(ValueError, match="Unsupported nonlinearity softsign"):
        init.calculate_gain("softsign")
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        init.calculate_gain("leaky_relu", True)  # type: ignore[arg-type]


def test_fans() -> None:
    assert init._calculate_fan_in_and_fan_out(ember.empty(5, 3)) == (3, 5)
    assert init._calculate_fan_in_and_fan_out(ember.empty(8, 4, 3, 2)) == (24, 48)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(ember.empty(3))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(ember.empty(3, 3), mode="fan_avg")


def _sample(device: str, shape: tuple[int, ...]) -> Any:
    return ember.empty(*shape, device=device)


# (fill, expected std, bound on |x| or None); the tensor is (400, 250): fan_in 250, fan_out 400.
DISTRIBUTIONS = {
    "uniform": (lambda t: init.uniform_(t, -2.0, 3.0), 5 / math.sqrt(12), 3.0),
    "xavier_uniform": (
        lambda t: init.xavier_uniform_(t, gain=2.0),
        2 * math.sqrt(2 / 650),
        2 * math.sqrt(6 / 650),
    ),
    "kaiming_uniform": (
        lambda t: init.kaiming_uniform_(t, a=math.sqrt(5)),
        1 / math.sqrt(750),
        1 / math.sqrt(250),
    ),
    "kaiming_uniform_fan_out": (
        lambda t: init.kaiming_uniform_(t, mode="fan_out", nonlinearity="relu"),
        math.sqrt(2 / 400),
        math.sqrt(6 / 400),
    ),
    "normal": (lambda t: init.normal_(t, 1.0, 0.5), 0.5, None),
    "xavier_normal": (init.xavier_normal_, math.sqrt(2 / 650), None),
    "kaiming_normal": (
        lambda t: init.kaiming_normal_(t, nonlinearity="relu"),
        math.sqrt(2 / 250),
        None,
    ),
    # N(0, 0.02²) cut at two standard deviations has std 0.02 * 0.8796.
    "trunc_normal": (lambda t: init.trunc_normal_(t, std=0.02, a=-0.04, b=0.04), 0.017592, 0.04),
}


@pytest.mark.parametrize("name", sorted(DISTRIBUTIONS))
def test_distributions(device: str, name: str) -> None:
    fill, std, bound = DISTRIBUTIONS[name]
    t = ember.empty(400, 250, device=device)
    assert fill(t) is t
    values = t.numpy(force=True)
    assert abs(values.std() - std) < 0.02 * std
    if bound is not None:
        assert np.abs(values).max() <= bound * (1 + 1e-6)
        assert np.abs(values).max() > 0.95 * bound


def test_trunc_normal_matches_the_truncated_moments(device: str) -> None:
    t = init.trunc_normal_(_sample(device, (200_000,)), mean=1.0, std=2.0, a=0.0, b=5.0)
    values = t.numpy(force=True)
    assert values.min() >= 0.0 and values.max() <= 5.0
    # Moments of N(1, 4) truncated to [0, 5], from the closed form.
    alpha, beta = -0.5, 2.0
    pdf = [math.exp(-x * x / 2) / math.sqrt(2 * math.pi) for x in (alpha, beta)]
    mass = 0.5 * (math.erf(beta / math.sqrt(2)) - math.erf(alpha / math.sqrt(2)))
    mean = 1.0 + 2.0 * (pdf[0] - pdf[1]) / mass
    assert abs(values.mean() - mean) < 0.01


def test_constants(device: str) -> None:
    t = _sample(device, (2, 3))
    np.testing.assert_array_equal(init.ones_(t).numpy(force=True), np.ones((2, 3)))
    np.testing.assert_array_equal(init.zeros_(t).numpy(force=True), np.zeros((2, 3)))
    np.testing.assert_array_equal(init.constant_(t, 2.5).numpy(force=True), np.full((2, 3), 2.5))
    np.testing.assert_array_equal(init.eye_(t).numpy(force=True), np.eye(2, 3))


def _seeded(device: str, seed: int) -> Any:
    generator = ember.Generator(device)
    generator.manual_seed(seed)
    return generator


def test_generator_makes_fills_reproducible(device: str) -> None:
    first = init.kaiming_uniform_(_sample(device, (3, 4)), generator=_seeded(device, 5))
    second = init.kaiming_uniform_(_sample(device, (3, 4)), generator=_seeded(device, 5))
    np.testing.assert_array_equal(first.numpy(force=True), second.numpy(force=True))


def test_init_on_parameters_records_no_graph(device: str) -> None:
    weight = nn.Parameter(ember.empty(3, 3, device=device))
    for fill in (init.xavier_uniform_, init.kaiming_normal_, init.ones_, init.trunc_normal_):
        result = fill(weight)
        assert result is weight and weight.is_leaf and weight.grad_fn is None


def test_zero_element_tensor_warns() -> None:
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(ember.empty(0, 3))
