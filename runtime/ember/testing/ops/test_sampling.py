"""multinomial and bernoulli: shapes, dtypes and errors as torch documents them, and the
distributions checked statistically (chi-square against the weights; means within a few
standard errors), reproducible for a seed."""

from __future__ import annotations

import numpy as np
import pytest

import ember


def _gen(seed: int, device: str) -> ember.Generator:
    return ember.Generator(device).manual_seed(seed)


def test_multinomial_with_replacement_follows_the_weights(device: str) -> None:
    weights = np.array([[1.0, 0.0, 3.0, 6.0], [5.0, 5.0, 0.0, 0.0]])
    draws = (
        ember.multinomial(
            ember.tensor(weights, device=device), 4000, True, generator=_gen(3, device)
        )
        .cpu()
        .numpy()
    )
    assert draws.shape == (2, 4000) and draws.dtype == np.int64
    for row, w in zip(draws, weights, strict=True):
        counts = np.bincount(row, minlength=4)
        assert counts[w == 0].sum() == 0  # a zero weight is never drawn
        expected = 4000 * w / w.sum()
        keep = w > 0
        chi2 = float((((counts - expected) ** 2)[keep] / expected[keep]).sum())
        assert chi2 < 16.3  # the 0.999 quantile of chi-square with 3 degrees of freedom


def test_multinomial_without_replacement_draws_distinct_categories(device: str) -> None:
    weights = ember.tensor([[1.0, 2.0, 3.0, 4.0, 0.0]] * 300, device=device)
    draws = ember.multinomial(weights, 4, generator=_gen(5, device)).cpu().numpy()
    assert draws.shape == (300, 4)
    assert all(len(set(row)) == 4 and 4 not in row for row in draws)
    # The first draw is proportional to the weights: category 3 (weight 0.4) most often.
    first = np.bincount(draws[:, 0], minlength=5) / 300
    assert abs(first[3] - 0.4) < 5 * np.sqrt(0.4 * 0.6 / 300)


def test_multinomial_1d_and_reproducible(device: str) -> None:
    w = ember.tensor([0.2, 0.3, 0.5], device=device)
    a = ember.multinomial(w, 6, True, generator=_gen(1, device))
    b = w.multinomial(6, True, generator=_gen(1, device))
    assert a.shape == (6,) and a.tolist() == b.tolist()


@pytest.mark.parametrize(
    ("weights", "n", "replacement", "message"),
    [
        ([1.0, -1.0], 1, True, "probability tensor contains either `inf`, `nan` or element < 0"),
        ([1.0, float("nan")], 1, True, "probability tensor contains"),
        ([0.0, 0.0], 1, True, "sum of probabilities <= 0"),
        ([1.0, 2.0], 3, False, "cannot sample n_sample > prob_dist.size"),
        ([[[1.0]]], 1, True, "prob_dist must be 1 or 2 dim"),
    ],
)
def test_multinomial_errors_match_torch(
    device: str, weights: list, n: int, replacement: bool, message: str
) -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        torch.multinomial(torch.tensor(weights), n, replacement)
    with pytest.raises(RuntimeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ember.multinomial(ember.tensor(weights, device=device), n, replacement)


def test_bernoulli_means_and_forms(device: str) -> None:
    p = ember.tensor(np.linspace(0.1, 0.9, 9).repeat(2000).reshape(9, 2000), device=device)
    draws = ember.bernoulli(p, generator=_gen(7, device))
    assert draws.shape == p.shape and draws.dtype == p.dtype
    values = draws.cpu().numpy()
    assert set(np.unique(values)) <= {0.0, 1.0}
    for row, q in zip(values, np.linspace(0.1, 0.9, 9), strict=True):
        assert abs(row.mean() - q) < 5 * np.sqrt(q * (1 - q) / 2000)
    fixed = ember.bernoulli(ember.zeros(4000, device=device), 0.25, generator=_gen(2, device))
    assert abs(fixed.cpu().numpy().mean() - 0.25) < 5 * np.sqrt(0.25 * 0.75 / 4000)
    t = ember.zeros(4000, device=device)
    assert t.bernoulli_(0.75) is t and abs(t.cpu().numpy().mean() - 0.75) < 0.04
    with pytest.raises(RuntimeError, match="expects p to be in"):
        ember.bernoulli(ember.zeros(2, device=device), 1.5)
