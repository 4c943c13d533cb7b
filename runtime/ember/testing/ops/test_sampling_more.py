"""poisson, binomial, _standard_gamma, the in-place exponential_ / geometric_ /
log_normal_ / cauchy_ fills, randint_like and the size forms of rand/randn: moments within
five standard errors, KS or chi-square checks against the exact laws, reproducibility for
a seed, and torch's errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ember

N = 4000


def _gen(seed: int, device: str) -> ember.Generator:
    return ember.Generator(device).manual_seed(seed)


def _column_rates(values: list[float], device: str) -> ember.Tensor:
    return ember.tensor(values, dtype=ember.float64, device=device).expand(N, len(values))


def _moments_close(draws: np.ndarray, mean: np.ndarray, var: np.ndarray) -> None:
    """Sample means within 5 standard errors, sample variances within 5 of theirs (using
    the normal-theory standard error of a variance, 2 var² / n, widened for tails)."""
    n = draws.shape[0]
    np.testing.assert_array_less(np.abs(draws.mean(0) - mean), 5 * np.sqrt(var / n) + 1e-12)
    np.testing.assert_array_less(np.abs(draws.var(0) - var), 8 * var * np.sqrt(2 / n) + 1e-12)


def _ks_statistic(sample: np.ndarray, cdf: np.ndarray) -> float:
    """Kolmogorov-Smirnov distance of sorted `sample` to the exact CDF values at it."""
    n = len(sample)
    ranks = np.arange(1, n + 1) / n
    return float(max(np.max(ranks - cdf), np.max(cdf - (ranks - 1 / n))))


KS_LIMIT = 1.95 / math.sqrt(N)  # the 0.999 quantile of the KS distance, asymptotically


def test_poisson_moments_small_and_large_rates(device: str) -> None:
    rates = [0.0, 0.4, 3.0, 9.5, 15.0, 250.0]
    draws = ember.poisson(_column_rates(rates, device), generator=_gen(1, device))
    assert draws.dtype == ember.float64 and draws.shape == (N, len(rates))
    values = draws.cpu().numpy()
    assert np.all(values == np.round(values)) and np.all(values[:, 0] == 0)
    _moments_close(values[:, 1:], np.array(rates[1:]), np.array(rates[1:]))


def test_poisson_follows_the_pmf(device: str) -> None:
    draws = ember.poisson(_column_rates([4.0], device), generator=_gen(2, device))
    counts = np.bincount(draws.cpu().numpy()[:, 0].astype(np.int64), minlength=20)[:12]
    pmf = np.array([math.exp(-4.0) * 4.0**k / math.factorial(k) for k in range(12)])
    expected = N * pmf
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 32.9  # 0.999 quantile with 11 degrees of freedom


def test_poisson_reproducible_and_float32(device: str) -> None:
    rates = ember.tensor([[1.0, 20.0]], device=device)
    a = ember.poisson(rates, generator=_gen(9, device))
    b = ember.poisson(rates, _gen(9, device))
    assert a.dtype == ember.float32 and a.tolist() == b.tolist()


def test_poisson_errors(device: str) -> None:
    with pytest.raises(
        RuntimeError, match="invalid Poisson rate, expected rate to be non-negative"
    ):
        ember.poisson(ember.tensor([1.0, -1.0], device=device))
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        ember.poisson(ember.tensor([1, 2], device=device))


def test_binomial_moments_and_support(device: str) -> None:
    count = [0.0, 6.0, 40.0, 300.0, 1000.0, 80.0]
    prob = [0.5, 0.3, 0.5, 0.9, 0.35, 1.0]
    n = _column_rates(count, device)
    p = ember.tensor(prob, dtype=ember.float64, device=device)
    values = ember.binomial(n, p, generator=_gen(3, device)).cpu().numpy()
    assert values.shape == (N, len(count))
    assert np.all(values >= 0) and np.all(values <= np.array(count))
    assert np.all(values[:, 0] == 0) and np.all(values[:, 5] == 80)
    c, q = np.array(count[1:5]), np.array(prob[1:5])
    _moments_close(values[:, 1:5], c * q, c * q * (1 - q))


def test_binomial_reproducible_and_errors(device: str) -> None:
    n = ember.tensor([10.0, 500.0], device=device)
    p = ember.tensor([0.25, 0.5], device=device)
    assert (
        ember.binomial(n, p, _gen(4, device)).tolist()
        == ember.binomial(n, p, generator=_gen(4, device)).tolist()
    )
    with pytest.raises(ValueError, match="binomial only supports floating-point dtypes for count"):
        ember.binomial(ember.tensor([10, 5], device=device), p)


def test_standard_gamma_ks_against_the_exact_cdf(device: str) -> None:
    torch = pytest.importorskip("torch")
    alphas = [0.3, 1.0, 2.5, 30.0]
    draws = ember._standard_gamma(_column_rates(alphas, device), generator=_gen(5, device))
    values = draws.cpu().numpy()
    assert values.shape == (N, 4) and np.all(values > 0)
    for column, alpha in enumerate(alphas):
        sample = np.sort(values[:, column])
        cdf = torch.special.gammainc(
            torch.tensor(alpha, dtype=torch.float64), torch.from_numpy(sample)
        ).numpy()
        assert _ks_statistic(sample, cdf) < KS_LIMIT


def test_standard_gamma_moments_and_reproducible(device: str) -> None:
    alphas = np.array([0.5, 4.0, 100.0])
    concentration = _column_rates(list(alphas), device)
    values = ember._standard_gamma(concentration, generator=_gen(6, device)).cpu().numpy()
    _moments_close(values, alphas, alphas)
    again = ember._standard_gamma(concentration, generator=_gen(6, device)).cpu().numpy()
    np.testing.assert_array_equal(values, again)


def test_standard_gamma_gradient_matches_torch(device: str) -> None:
    torch = pytest.importorskip("torch")
    alpha = ember.tensor([0.4, 1.7, 5.0, 12.0, 50.0] * 40, dtype=ember.float64, device=device)
    alpha.requires_grad_(True)
    sample = ember._standard_gamma(alpha, generator=_gen(7, device))
    sample.sum().backward()
    assert alpha.grad is not None
    expected = torch._standard_gamma_grad(
        torch.from_numpy(alpha.detach().cpu().numpy()),
        torch.from_numpy(sample.detach().cpu().numpy()),
    )
    np.testing.assert_allclose(alpha.grad.cpu().numpy(), expected.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    ("fill", "args", "cdf"),
    [
        ("exponential_", (2.0,), lambda x: 1 - np.exp(-2.0 * x)),
        ("cauchy_", (1.0, 0.5), lambda x: 0.5 + np.arctan((x - 1.0) / 0.5) / np.pi),
        (
            "log_normal_",
            (0.5, 0.8),
            lambda x: 0.5 * (1 + np.vectorize(math.erf)((np.log(x) - 0.5) / (0.8 * math.sqrt(2)))),
        ),
    ],
)
def test_continuous_fills_follow_their_cdf(device: str, fill: str, args: tuple, cdf) -> None:  # type: ignore[no-untyped-def, type-arg]
    t = ember.empty(N, dtype=ember.float64, device=device)
    out = getattr(t, fill)(*args, generator=_gen(8, device))
    assert out is t
    sample = np.sort(t.cpu().numpy())
    assert _ks_statistic(sample, cdf(sample)) < KS_LIMIT


def test_geometric_follows_the_pmf_in_integer_dtypes(device: str) -> None:
    t = ember.empty(N, dtype=ember.int64, device=device).geometric_(0.3, generator=_gen(10, device))
    values = t.cpu().numpy()
    assert values.min() >= 1
    counts = np.bincount(values, minlength=12)[1:10]
    expected = N * 0.3 * 0.7 ** np.arange(9)
    assert float(((counts - expected) ** 2 / expected).sum()) < 27.9  # 0.999, 8 dof


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda t: t.exponential_(-1.0), RuntimeError, "exponential_ expects lambda > 0.0"),
        (lambda t: t.geometric_(0.0), RuntimeError, r"geometric_ expects p to be in \(0, 1\)"),
        (lambda t: t.log_normal_(0.0, -1.0), RuntimeError, "log_normal_ expects std > 0.0"),
        (lambda t: t.cauchy_(0.0, 0.0), RuntimeError, "cauchy_ expects sigma > 0.0"),
        (lambda t: t.long().exponential_(), RuntimeError, "dtype must be a floating point"),
    ],
)
def test_fill_errors_leave_the_tensor_intact(device: str, call, error, message) -> None:  # type: ignore[no-untyped-def]
    t = ember.zeros(3, device=device)
    with pytest.raises(error, match=message):
        call(t)
    assert t.tolist() == [0.0, 0.0, 0.0]


def test_fills_are_reproducible_for_a_seed(device: str) -> None:
    a = ember.empty(64, device=device).exponential_(generator=_gen(11, device))
    b = ember.empty(64, device=device).exponential_(generator=_gen(11, device))
    assert a.tolist() == b.tolist()


def test_randint_like(device: str) -> None:
    like = ember.zeros(3, 500, dtype=ember.float32, device=device)
    high = ember.randint_like(like, 5, generator=_gen(12, device))
    assert high.shape == (3, 500) and high.dtype == ember.float32
    assert set(np.unique(high.cpu().numpy())) == {0.0, 1.0, 2.0, 3.0, 4.0}
    ranged = ember.randint_like(like, -2, 2, dtype=ember.int64)
    assert ranged.dtype == ember.int64 and set(np.unique(ranged.cpu().numpy())) <= {-2, -1, 0, 1}


@pytest.mark.parametrize("factory", ["rand", "randn"])
def test_rand_factories_take_every_size_form(device: str, factory: str) -> None:
    make = getattr(ember, factory)
    forms = [
        make(2, 3, device=device),
        make((2, 3), device=device),
        make([2, 3], device=device),
        make(ember.Size([2, 3]), device=device),
        make(size=(2, 3), device=device),
    ]
    assert all(t.shape == (2, 3) for t in forms)
    seeded = [
        make(size=(4,), generator=_gen(13, device), dtype=ember.float64, device=device),
        make(4, generator=_gen(13, device), dtype=ember.float64, device=device),
    ]
    assert seeded[0].dtype == ember.float64 and seeded[0].tolist() == seeded[1].tolist()
    leaf = make(3, requires_grad=True, device=device)
    assert leaf.requires_grad and leaf.is_leaf
    with pytest.raises(TypeError, match="multiple values for argument 'size'"):
        make(2, size=(2,))


def test_rand_like_takes_a_generator_and_dtype(device: str) -> None:
    like = ember.zeros(2, 5, device=device)
    a = ember.rand_like(like, generator=_gen(14, device), dtype=ember.float64)
    b = ember.randn_like(like, generator=_gen(14, device))
    assert a.dtype == ember.float64 and a.shape == b.shape == (2, 5)
    assert (
        a.tolist()
        == ember.rand_like(like, generator=_gen(14, device), dtype=ember.float64).tolist()
    )


@pytest.mark.parametrize(
    ("args", "kwargs", "low", "high", "shape"),
    [
        ((10, (3,)), {}, 0, 10, (3,)),
        ((2, 10, (3,)), {}, 2, 10, (3,)),
        ((), {"low": 2, "high": 10, "size": (3,)}, 2, 10, (3,)),
        ((), {"high": 5, "size": (2,)}, 0, 5, (2,)),
        ((2,), {"high": 5, "size": [2, 2]}, 2, 5, (2, 2)),
        ((3, 10), {"size": ember.Size([4])}, 3, 10, (4,)),
    ],
)
def test_randint_takes_every_torch_form(device: str, args, kwargs, low, high, shape) -> None:  # type: ignore[no-untyped-def]
    t = ember.randint(*args, **kwargs, device=device, generator=_gen(15, device))
    assert t.shape == shape and t.dtype == ember.int64
    values = t.cpu().numpy()
    assert values.min() >= low and values.max() < high
    floats = ember.randint(4, (2,), dtype=ember.float32, requires_grad=True, device=device)
    assert floats.requires_grad and floats.dtype == ember.float32
    with pytest.raises(RuntimeError, match="floating point"):
        ember.randint(4, (2,), requires_grad=True, device=device)
    with pytest.raises(TypeError, match="randint\\(\\) expects"):
        ember.randint(4, device=device)


def test_randperm_takes_requires_grad(device: str) -> None:
    t = ember.randperm(6, dtype=ember.float32, requires_grad=True, device=device)
    assert t.requires_grad and sorted(t.tolist()) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
