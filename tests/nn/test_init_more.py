"""torch.nn.init beside torch's: orthogonal_, sparse_, dirac_, the deprecated aliases, gains,
and the random fills' statistics (ember's random streams differ from torch's, so the tests
compare distributions' moments and structure, never values)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import ember
from ember.nn import init

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("shape", [(6, 6), (4, 10), (10, 4), (8, 3, 3), (5, 2, 2, 2), (1, 7)])
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64], ids=lambda d: d.name)
def test_orthogonal_rows_or_columns_are_orthonormal(
    shape: tuple[int, ...], dtype: ember.dtype
) -> None:
    w = init.orthogonal_(ember.empty(*shape, dtype=dtype), gain=1.5)
    a = np.asarray(w).reshape(shape[0], -1)
    tol = 1e-5 if dtype is ember.float32 else 1e-12
    gram = a @ a.T if a.shape[0] <= a.shape[1] else a.T @ a
    np.testing.assert_allclose(gram, 2.25 * np.eye(gram.shape[0]), atol=tol)
    reference = torch.nn.init.orthogonal_(torch.empty(*shape, dtype=torch.float64), gain=1.5)
    assert tuple(w.shape) == tuple(reference.shape)


def test_orthogonal_is_haar_distributed() -> None:
    # For Haar-random Q in O(n), each entry has mean 0 and variance 1/n, and the diagonal
    # of R being positive leaves no sign bias (the trace averages 0).
    n, draws = 4, 400
    ember.manual_seed(0)
    samples = np.stack([np.asarray(init.orthogonal_(ember.empty(n, n, dtype=ember.float64)))
                        for _ in range(draws)])  # fmt: skip
    assert abs(samples.mean()) < 0.03
    assert abs(samples.var() - 1 / n) < 0.02
    traces = np.trace(samples, axis1=1, axis2=2)
    assert abs(traces.mean()) < 0.15
    np.testing.assert_allclose(np.abs(np.linalg.det(samples)), 1.0, atol=1e-10)
    assert 0.3 < (np.linalg.det(samples) > 0).mean() < 0.7


def test_orthogonal_generator_and_errors() -> None:
    g1, g2 = ember.Generator().manual_seed(5), ember.Generator().manual_seed(5)
    a = init.orthogonal_(ember.empty(3, 5), generator=g1)
    b = init.orthogonal_(ember.empty(3, 5), generator=g2)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    with pytest.raises(ValueError, match="2 or more dimensions"):
        init.orthogonal_(ember.empty(4))
    with pytest.raises(ValueError, match="2 or more dimensions"):
        torch.nn.init.orthogonal_(torch.empty(4))
    assert init.orthogonal_(ember.empty(0, 3)).shape == (0, 3)


@pytest.mark.parametrize(("rows", "cols", "sparsity"), [(10, 7, 0.3), (9, 4, 0.0), (5, 3, 1.0)])
def test_sparse_zeroes_a_fixed_count_per_column(rows: int, cols: int, sparsity: float) -> None:
    w = np.asarray(init.sparse_(ember.empty(rows, cols, dtype=ember.float64), sparsity, std=0.5))
    expected = math.ceil(sparsity * rows)
    reference = torch.nn.init.sparse_(torch.empty(rows, cols), sparsity, std=0.5)
    assert ((w == 0).sum(axis=0) == expected).all()
    assert ((reference.numpy() == 0).sum(axis=0) == expected).all()


def test_sparse_nonzeros_have_the_std() -> None:
    ember.manual_seed(1)
    w = np.asarray(init.sparse_(ember.empty(400, 50, dtype=ember.float64), 0.2, std=0.3))
    values = w[w != 0]
    assert abs(values.mean()) < 0.01 and abs(values.std() - 0.3) < 0.01
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
        init.sparse_(ember.empty(2, 2, 2), 0.1)


@pytest.mark.parametrize(
    ("shape", "groups"), [((4, 4, 3), 1), ((6, 3, 3, 3), 2), ((4, 6, 2, 3, 5), 1), ((8, 2, 5), 4)]
)
def test_dirac_matches_torch(shape: tuple[int, ...], groups: int) -> None:
    w = init.dirac_(ember.empty(*shape, dtype=ember.float64), groups)
    np.testing.assert_array_equal(
        np.asarray(w), torch.nn.init.dirac_(torch.empty(*shape, dtype=torch.float64), groups)
    )


def test_dirac_errors_match_torch() -> None:
    for lib, make in ((init, ember.empty), (torch.nn.init, torch.empty)):
        with pytest.raises(ValueError, match="3, 4, or 5 dimensions"):
            lib.dirac_(make(3, 3))
        with pytest.raises(ValueError, match="divisible by groups"):
            lib.dirac_(make(5, 2, 3), groups=2)


def test_deprecated_aliases_warn_and_forward() -> None:
    names = ["uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
             "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"]  # fmt: skip
    assert all(hasattr(torch.nn.init, n) for n in names)
    assert set(names) <= set(init.__all__)
    args = {"constant": (0.5,), "sparse": (0.5,)}
    for name in names:
        tensor = ember.empty(4, 3, 3) if name == "dirac" else ember.empty(4, 3)
        with pytest.warns(FutureWarning, match=f"nn.init.{name}` is now deprecated"):
            out = getattr(init, name)(tensor, *args.get(name, ()))
        assert out is tensor
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(np.asarray(init.eye(ember.empty(2, 3))), np.eye(2, 3))


NONLINEARITIES = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d", "sigmoid", "tanh", "relu",
                  "leaky_relu", "selu"]  # fmt: skip


@pytest.mark.parametrize("name", NONLINEARITIES)
def test_calculate_gain_matches_torch(name: str) -> None:
    assert init.calculate_gain(name) == torch.nn.init.calculate_gain(name)
    if name == "leaky_relu":
        for slope in (0, 0.2, 3):
            assert init.calculate_gain(name, slope) == torch.nn.init.calculate_gain(name, slope)
        with pytest.raises(ValueError, match="not a valid number"):
            init.calculate_gain(name, True)
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")


def _std(tensor: ember.Tensor) -> float:
    return float(np.asarray(tensor).std())


@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
@pytest.mark.parametrize(("nonlinearity", "a"), [("relu", 0), ("leaky_relu", 0.2), ("tanh", 0)])
def test_kaiming_standard_deviations(mode: str, nonlinearity: str, a: float) -> None:
    shape = (64, 32, 3, 3)
    fan = 32 * 9 if mode == "fan_in" else 64 * 9
    std = torch.nn.init.calculate_gain(nonlinearity, a) / math.sqrt(fan)
    gen = ember.Generator().manual_seed(2)
    w_n = init.kaiming_normal_(ember.empty(*shape), a, mode, nonlinearity, generator=gen)
    w_u = init.kaiming_uniform_(ember.empty(*shape), a, mode, nonlinearity, generator=gen)
    assert abs(_std(w_n) / std - 1) < 0.03
    assert abs(_std(w_u) / std - 1) < 0.03
    assert np.abs(np.asarray(w_u)).max() <= math.sqrt(3) * std * (1 + 1e-6)
    with pytest.raises(ValueError, match="Mode fan_sideways not supported"):
        init.kaiming_normal_(ember.empty(3, 3), mode="fan_sideways")


def test_xavier_standard_deviations_and_gain() -> None:
    std = 1.7 * math.sqrt(2.0 / (200 + 300))
    w_n = init.xavier_normal_(ember.empty(300, 200), gain=1.7)
    w_u = init.xavier_uniform_(ember.empty(300, 200), gain=1.7)
    assert abs(_std(w_n) / std - 1) < 0.03 and abs(_std(w_u) / std - 1) < 0.03
    assert np.abs(np.asarray(w_u)).max() <= math.sqrt(3) * std * (1 + 1e-6)


def _truncated_normal_moments(mean: float, std: float, a: float, b: float) -> tuple[float, float]:
    alpha, beta = (a - mean) / std, (b - mean) / std

    def pdf(x: float) -> float:
        return math.exp(-x * x / 2) / math.sqrt(2 * math.pi)

    def cdf(x: float) -> float:
        return (1 + math.erf(x / math.sqrt(2))) / 2

    z = cdf(beta) - cdf(alpha)
    m = mean + std * (pdf(alpha) - pdf(beta)) / z
    var = std**2 * (1 + (alpha * pdf(alpha) - beta * pdf(beta)) / z
                    - ((pdf(alpha) - pdf(beta)) / z) ** 2)  # fmt: skip
    return m, math.sqrt(var)


@pytest.mark.parametrize(
    ("mean", "std", "a", "b"), [(0, 1, -2, 2), (1, 2, 0, 3), (0, 0.02, -0.04, 0.01)]
)
def test_trunc_normal_moments(mean: float, std: float, a: float, b: float) -> None:
    gen = ember.Generator().manual_seed(3)
    w = np.asarray(
        init.trunc_normal_(ember.empty(200_000, dtype=ember.float64), mean, std, a, b, gen)
    )
    expected_mean, expected_std = _truncated_normal_moments(mean, std, a, b)
    assert w.min() >= a and w.max() <= b
    assert abs(w.mean() - expected_mean) < 0.01 * std
    assert abs(w.std() / expected_std - 1) < 0.01


def test_fills() -> None:
    w = ember.empty(3, 4)
    assert (np.asarray(init.constant_(w, 2.5)) == 2.5).all()
    assert (np.asarray(init.ones_(w)) == 1).all() and (np.asarray(init.zeros_(w)) == 0).all()
    u = np.asarray(init.uniform_(ember.empty(100_000, dtype=ember.float64), -1.0, 3.0))
    assert u.min() >= -1 and u.max() < 3 and abs(u.mean() - 1) < 0.02
    assert abs(u.var() - 16 / 12) < 0.02
    n = np.asarray(init.normal_(ember.empty(100_000, dtype=ember.float64), 2.0, 0.5))
    assert abs(n.mean() - 2) < 0.01 and abs(n.std() - 0.5) < 0.01
