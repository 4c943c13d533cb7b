"""Samples of every distribution have the moments torch.distributions states (within five
standard errors), are reproducible for a seed, and rsample is reparameterised: the
Monte-Carlo gradient of a sample moment matches torch's autograd of the exact moment."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import ember
import ember.distributions as ED

from ._cases import build

torch = pytest.importorskip("torch")
TD = torch.distributions
N = 4000

# Light-tailed enough for the sample variance to be checked too.
WITH_VARIANCE = [
    "Normal", "Uniform", "Bernoulli-probs", "Exponential", "Laplace", "Gumbel", "HalfNormal",
    "Gamma", "Chi2", "Beta", "Dirichlet", "Poisson", "Binomial", "Geometric", "Weibull",
    "MultivariateNormal-cov", "MultivariateNormal-prec", "MultivariateNormal-tril",
    "OneHotCategorical", "Multinomial", "NegativeBinomial", "Kumaraswamy",
    "ContinuousBernoulli", "ContinuousBernoulli-near-half", "LowRankMultivariateNormal",
    "GeneralizedPareto", "Wishart-cov",
]  # fmt: skip
MEAN_ONLY = [
    "LogNormal", "StudentT", "Pareto", "Binomial-logits", "Bernoulli-logits", "InverseGamma",
    "FisherSnedecor",
]  # fmt: skip


def _pair(name: str) -> tuple[Any, Any]:
    ours, _ = build(ED, lambda v: ember.tensor(v, dtype=ember.float64), name)
    theirs, _ = build(TD, lambda v: torch.tensor(v, dtype=torch.float64), name)
    return ours, theirs


@pytest.mark.parametrize("name", WITH_VARIANCE + MEAN_ONLY)
def test_sample_moments_match_the_distribution(name: str) -> None:
    ember.manual_seed(11)
    ours, theirs = _pair(name)
    draws = ours.sample((N,)).numpy()
    assert draws.shape == (N, *theirs.batch_shape, *theirs.event_shape)
    assert bool(ours.support.check(ember.from_numpy(draws)).all())
    mean, var = theirs.mean.numpy(), theirs.variance.numpy()
    if name in MEAN_ONLY:
        # Heavy tails: compare medians of the sample mean over 8 blocks instead.
        blocks = draws.reshape(8, N // 8, *draws.shape[1:]).mean(1)
        spread = np.abs(np.median(blocks, 0) - mean) / np.abs(mean).clip(min=1.0)
        assert np.all(spread < 0.15)
        return
    standard_error = np.sqrt(var / N)
    np.testing.assert_array_less(np.abs(draws.mean(0) - mean), 5 * standard_error + 1e-9)
    np.testing.assert_array_less(np.abs(draws.var(0) - var), 10 * var * np.sqrt(2 / N) + 1e-9)


def test_categorical_samples_follow_probs() -> None:
    ember.manual_seed(12)
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    draws = ED.Categorical(probs=ember.tensor(probs)).sample((N,)).numpy()
    assert draws.dtype == np.int64
    counts = np.bincount(draws, minlength=4)
    assert float(((counts - N * probs) ** 2 / (N * probs)).sum()) < 16.3  # chi2(3), 0.999


def test_samples_are_reproducible_for_a_seed() -> None:
    for name in ["Normal", "Gamma", "Dirichlet", "Poisson", "Categorical-logits"]:
        ours, _ = _pair(name)
        ember.manual_seed(5)
        first = ours.sample((3,))
        ember.manual_seed(5)
        assert first.tolist() == ours.sample((3,)).tolist()


def _leaves(values: list[np.ndarray]) -> tuple[list[Any], list[Any]]:
    ours = [ember.tensor(v, dtype=ember.float64).requires_grad_() for v in values]
    theirs = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    return ours, theirs


RSAMPLE = [
    # (name, parameters, build, exact moment E[f(x)] in torch, f)
    ("Normal", [[0.3, -1.0], [0.5, 2.0]], lambda ns, a, b: ns.Normal(a, b), "second"),
    ("Uniform", [[0.3, -1.0], [0.5, 2.0]], lambda ns, a, b: ns.Uniform(a, a + b), "second"),
    ("Laplace", [[0.3, -1.0], [0.5, 2.0]], lambda ns, a, b: ns.Laplace(a, b), "second"),
    ("Exponential", [[0.7, 2.5]], lambda ns, a: ns.Exponential(a), "second"),
    ("LogNormal", [[0.1, -0.3], [0.2, 0.4]], lambda ns, a, b: ns.LogNormal(a, b), "mean"),
    ("Gumbel", [[0.3, -1.0], [0.5, 2.0]], lambda ns, a, b: ns.Gumbel(a, b), "second"),
    ("HalfNormal", [[0.5, 2.0]], lambda ns, a: ns.HalfNormal(a), "second"),
    ("Gamma", [[0.6, 3.0], [1.5, 0.5]], lambda ns, a, b: ns.Gamma(a, b), "second"),
    ("Chi2", [[2.5, 6.0]], lambda ns, a: ns.Chi2(a), "mean"),
    ("Beta", [[0.8, 3.0], [2.0, 1.2]], lambda ns, a, b: ns.Beta(a, b), "second"),
    ("Dirichlet", [[[0.7, 2.0, 4.0]]], lambda ns, a: ns.Dirichlet(a), "mean"),
    ("StudentT", [[6.0, 9.0], [0.2, 0.1], [1.0, 2.0]], lambda ns, *p: ns.StudentT(*p), "mean"),
    ("Weibull", [[1.0, 2.0], [1.5, 3.0]], lambda ns, a, b: ns.Weibull(a, b), "mean"),
    ("Kumaraswamy", [[1.5, 3.0], [2.0, 1.2]], lambda ns, a, b: ns.Kumaraswamy(a, b), "second"),
    ("InverseGamma", [[4.0, 6.0], [1.5, 0.5]], lambda ns, a, b: ns.InverseGamma(a, b), "mean"),
    ("FisherSnedecor", [[8.0, 12.0], [9.0, 15.0]], lambda ns, *p: ns.FisherSnedecor(*p), "mean"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "values", "make", "moment"), RSAMPLE, ids=[r[0] for r in RSAMPLE])
def test_rsample_gradient_matches_the_exact_moment_gradient(
    name: str, values: list, make: Any, moment: str
) -> None:  # type: ignore[type-arg]
    ember.manual_seed(21)
    arrays = [np.array(v, dtype=np.float64) for v in values]
    ours_params, theirs_params = _leaves(arrays)
    ours = make(ED, *ours_params)
    assert ours.has_rsample
    x = ours.rsample((20000,))
    (x.mean(0) if moment == "mean" else x.pow(2).mean(0)).sum().backward()
    theirs = make(TD, *theirs_params)
    exact = theirs.mean if moment == "mean" else theirs.variance + theirs.mean.pow(2)
    exact.sum().backward()
    for mine, reference in zip(ours_params, theirs_params, strict=True):
        assert mine.grad is not None
        expected = np.zeros_like(arrays[0]) if reference.grad is None else reference.grad.numpy()
        np.testing.assert_allclose(mine.grad.numpy(), expected, rtol=0.08, atol=0.02)


def test_multivariate_normal_rsample_is_differentiable_in_scale_tril() -> None:
    ember.manual_seed(22)
    tril = np.array([[1.0, 0.0], [0.5, 0.8]])
    ours_loc, theirs_loc = _leaves([np.array([0.2, -0.1])])
    ours_tril, theirs_tril = _leaves([tril])
    ours = ED.MultivariateNormal(ours_loc[0], scale_tril=ours_tril[0])
    x = ours.rsample((20000,))
    (x.pow(2).mean(0)).sum().backward()
    theirs = TD.MultivariateNormal(theirs_loc[0], scale_tril=theirs_tril[0])
    (theirs.variance + theirs.mean.pow(2)).sum().backward()
    np.testing.assert_allclose(ours_loc[0].grad.numpy(), theirs_loc[0].grad.numpy(), atol=0.05)
    np.testing.assert_allclose(
        np.tril(ours_tril[0].grad.numpy()), np.tril(theirs_tril[0].grad.numpy()), atol=0.05
    )


def test_sample_carries_no_gradient_and_discrete_ones_have_no_rsample() -> None:
    loc = ember.zeros(3, requires_grad=True)
    assert not ED.Normal(loc, 1.0).sample().requires_grad
    assert ED.Normal(loc, 1.0).rsample().requires_grad
    with pytest.raises(NotImplementedError):
        ED.Categorical(logits=ember.zeros(3)).rsample()
    assert not ED.Poisson(ember.ones(2)).has_rsample


def test_log_prob_gradients_match_torch() -> None:
    values = [np.array([0.7, 2.5]), np.array([1.5, 0.5])]
    ours_params, theirs_params = _leaves(values)
    x = np.array([0.4, 3.0])
    ED.Gamma(*ours_params).log_prob(ember.tensor(x, dtype=ember.float64)).sum().backward()
    TD.Gamma(*theirs_params).log_prob(torch.tensor(x)).sum().backward()
    for mine, reference in zip(ours_params, theirs_params, strict=True):
        np.testing.assert_allclose(mine.grad.numpy(), reference.grad.numpy(), rtol=1e-9)
    logits_ours, logits_theirs = _leaves([np.array([[0.1, -0.3, 2.0]])])
    ED.Categorical(logits=logits_ours[0]).entropy().sum().backward()
    TD.Categorical(logits=logits_theirs[0]).entropy().sum().backward()
    np.testing.assert_allclose(
        logits_ours[0].grad.numpy(), logits_theirs[0].grad.numpy(), rtol=1e-9
    )


@pytest.mark.parametrize("name", ["RelaxedBernoulli", "RelaxedOneHotCategorical", "LogisticNormal"])
def test_relaxed_and_logistic_normal_samples_stay_in_the_support(name: str) -> None:
    ember.manual_seed(23)
    ours, theirs = _pair(name)
    draws = ours.rsample((200,))
    assert tuple(draws.shape) == (200, *theirs.batch_shape, *theirs.event_shape)
    assert bool(ours.support.check(draws).all())


def test_von_mises_samples_have_the_circular_mean() -> None:
    ember.manual_seed(24)
    ours, theirs = _pair("VonMises")
    draws = ours.sample((N,))
    assert tuple(draws.shape) == (N, 2, 3) and bool((draws.abs() <= math.pi).all())
    resultant = (draws - ours.loc).cos().mean(0).numpy()
    expected = 1 - theirs.variance.numpy()  # E cos(x - loc) = I1(k) / I0(k)
    np.testing.assert_array_less(np.abs(resultant - expected), 5 * np.sqrt(0.5 / N))


def test_lkj_cholesky_samples_are_correlation_factors() -> None:
    ember.manual_seed(25)
    ours, _ = _pair("LKJCholesky")
    draws = ours.sample((500,))
    assert tuple(draws.shape) == (500, 2, 3, 3)
    assert bool(ours.support.check(draws).all())
    correlations = (draws @ draws.mT).numpy()
    np.testing.assert_allclose(np.diagonal(correlations, axis1=-2, axis2=-1), 1.0, atol=1e-9)
    assert np.all(np.abs(correlations[..., 0, 1].mean(0)) < 5 * np.sqrt(1 / 500))
