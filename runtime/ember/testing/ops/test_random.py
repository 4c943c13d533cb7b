"""Random numbers: seeding, generators, identical streams on every device, and sanity of
the distributions (seeded, so never flaky)."""

from __future__ import annotations

import numpy as np
import pytest

import ember

from ._reference import FLOATS, host, make, pid

N = 20_000


def _draws(device: str) -> dict[str, np.ndarray]:
    return {
        "rand": host(ember.rand(64, device=device)),
        "randn": host(ember.randn(8, 8, device=device)),
        "randint": host(ember.randint(0, 100, (64,), device=device)),
        "randperm": host(ember.randperm(50, device=device)),
        "normal": host(ember.normal(1.0, 2.0, (64,), device=device)),
    }


def test_manual_seed_makes_streams_repeat(device: str) -> None:
    ember.manual_seed(1234)
    first = _draws(device)
    ember.manual_seed(1234)
    second = _draws(device)
    for name in first:
        np.testing.assert_array_equal(first[name], second[name], err_msg=name)
    ember.manual_seed(4321)
    other = _draws(device)
    for name in first:
        assert not np.array_equal(first[name], other[name]), name


def test_successive_draws_differ(device: str) -> None:
    ember.manual_seed(0)
    a, b = host(ember.rand(32, device=device)), host(ember.rand(32, device=device))
    assert not np.array_equal(a, b)


def test_same_seed_same_numbers_on_every_device(device: str) -> None:
    ember.manual_seed(99)
    here = _draws(device)
    ember.manual_seed(99)
    on_cpu = _draws("cpu")
    for name in ("rand", "randint", "randperm"):
        np.testing.assert_array_equal(here[name], on_cpu[name], err_msg=name)
    for name in ("randn", "normal"):
        np.testing.assert_allclose(here[name], on_cpu[name], rtol=1e-5, atol=1e-6)


def test_generator_is_independent_of_the_global_stream(device: str) -> None:
    ember.manual_seed(5)
    expected = host(ember.rand(16, device=device))
    ember.manual_seed(5)
    g = ember.Generator(device).manual_seed(77)
    from_generator = host(ember.rand(16, generator=g, device=device))
    assert_same = host(ember.rand(16, device=device))
    np.testing.assert_array_equal(assert_same, expected)
    again = ember.Generator(device).manual_seed(77)
    np.testing.assert_array_equal(host(ember.rand(16, generator=again, device=device)),
                                  from_generator)  # fmt: skip
    assert g.initial_seed() == 77


def test_generator_state_round_trip(device: str) -> None:
    g = ember.Generator(device).manual_seed(11)
    ember.rand(10, generator=g, device=device)
    state = g.get_state()
    first = host(ember.randn(10, generator=g, device=device))
    g.set_state(state)
    np.testing.assert_array_equal(host(ember.randn(10, generator=g, device=device)), first)


@pytest.mark.parametrize("dtype", FLOATS, ids=pid)
def test_rand_is_uniform_on_the_unit_interval(device: str, dtype: ember.dtype) -> None:
    ember.manual_seed(2024)
    t = ember.rand(N, dtype=dtype, device=device)
    assert t.dtype is dtype and tuple(t.shape) == (N,)
    values = host(t).astype(np.float64)
    assert values.min() >= 0.0 and values.max() < 1.0
    assert abs(values.mean() - 0.5) < 0.01
    assert abs(values.std() - np.sqrt(1 / 12)) < 0.01
    histogram, _ = np.histogram(values, bins=10, range=(0, 1))
    assert histogram.min() > 0.9 * N / 10


@pytest.mark.parametrize("dtype", FLOATS, ids=pid)
def test_randn_is_standard_normal(device: str, dtype: ember.dtype) -> None:
    ember.manual_seed(2025)
    values = host(ember.randn(N, dtype=dtype, device=device)).astype(np.float64)
    assert np.isfinite(values).all()
    assert abs(values.mean()) < 0.03
    assert abs(values.std() - 1.0) < 0.03
    assert abs(np.mean(np.abs(values) < 1.0) - 0.6827) < 0.02


def test_normal_forms(device: str) -> None:
    ember.manual_seed(3)
    values = host(ember.normal(2.0, 3.0, (N,), device=device)).astype(np.float64)
    assert abs(values.mean() - 2.0) < 0.1 and abs(values.std() - 3.0) < 0.1
    mean = make(np.array([[-100.0], [100.0]], dtype=np.float32), device)
    std = make(np.array([1.0, 0.0, 2.0], dtype=np.float32), device)
    drawn = ember.normal(mean, std)
    assert tuple(drawn.shape) == (2, 3)
    np.testing.assert_array_equal(host(drawn)[:, 1], [-100.0, 100.0])  # std 0 gives the mean
    assert np.all(np.abs(host(drawn) - host(mean)) < 10)
    assert tuple(ember.normal(mean, 1.0).shape) == (2, 1)


@pytest.mark.parametrize(("low", "high"), [(0, 10), (-5, 5), (3, 4)], ids=str)
@pytest.mark.parametrize("dtype", [None, ember.int32, ember.uint8, ember.float32], ids=pid)
def test_randint_covers_its_range(device: str, low: int, high: int, dtype) -> None:
    if dtype is ember.uint8 and low < 0:
        low, high = 0, high - low
    ember.manual_seed(8)
    t = ember.randint(low, high, (2000,), dtype=dtype, device=device)
    assert t.dtype is (dtype or ember.int64)
    values = host(t)
    assert set(np.unique(values).tolist()) == set(range(low, high))
    high_only = host(ember.randint(high - low, (100,), device=device))
    assert high_only.min() >= 0 and high_only.max() < high - low


def test_randint_takes_size_by_keyword_as_torch_does(device: str) -> None:
    # torch.randint(high, size=...), torch.randint(low, high, size=...): the forms scripts use.
    for call in (
        lambda: ember.randint(7, size=(3, 4), device=device),
        lambda: ember.randint(0, 7, size=(3, 4), device=device),
    ):
        values = host(call())
        assert values.shape == (3, 4) and values.min() >= 0 and values.max() < 7
    ember.manual_seed(4)
    by_keyword = host(ember.randint(0, 50, size=(20,), device=device))
    ember.manual_seed(4)
    assert (host(ember.randint(0, 50, (20,), device=device)) == by_keyword).all()
    with pytest.raises(TypeError, match="randint"):
        ember.randint(5, device=device)


@pytest.mark.parametrize("n", [0, 1, 2, 17, 1000])
def test_randperm_is_a_permutation(device: str, n: int) -> None:
    ember.manual_seed(n)
    t = ember.randperm(n, device=device)
    assert t.dtype is ember.int64 and tuple(t.shape) == (n,)
    np.testing.assert_array_equal(np.sort(host(t)), np.arange(n))
    if n >= 17:
        assert not np.array_equal(host(t), np.arange(n))


def test_inplace_random_fills(device: str) -> None:
    ember.manual_seed(12)
    t = ember.zeros(N, device=device)
    version = t._version
    assert t.uniform_(-2.0, 3.0) is t
    values = host(t)
    assert values.min() >= -2.0 and values.max() < 3.0 and abs(values.mean() - 0.5) < 0.05
    t.normal_(5.0, 0.5)
    values = host(t)
    assert abs(values.mean() - 5.0) < 0.02 and abs(values.std() - 0.5) < 0.02
    ints = ember.zeros(N, dtype=ember.int64, device=device)
    ints.random_(3, 7)
    assert set(np.unique(host(ints)).tolist()) == {3, 4, 5, 6}
    ints.random_(4)
    assert set(np.unique(host(ints)).tolist()) == {0, 1, 2, 3}
    assert t._version > version


def test_like_forms_follow_their_input(device: str) -> None:
    source = ember.zeros(3, 4, dtype=ember.float64, device=device).t()
    for t in (ember.rand_like(source), ember.randn_like(source)):
        assert tuple(t.shape) == (4, 3) and t.dtype is ember.float64
        assert t.device == ember.device(device)


def test_random_zero_size(device: str) -> None:
    assert tuple(ember.rand(0, 3, device=device).shape) == (0, 3)
    assert tuple(ember.randn(0, device=device).shape) == (0,)
    assert tuple(ember.randint(0, 5, (0,), device=device).shape) == (0,)


def test_random_argument_errors(device: str) -> None:
    with pytest.raises(TypeError):
        ember.rand(3, dtype=ember.int64, device=device)
    with pytest.raises(TypeError):
        ember.randn(3, dtype=ember.int32, device=device)
    with pytest.raises(RuntimeError):
        ember.randint(5, 5, (3,), device=device)
    with pytest.raises(RuntimeError):
        ember.normal(0.0, -1.0, (3,), device=device)
    with pytest.raises(RuntimeError):
        ember.zeros(3, device=device).uniform_(1.0, 0.0)
