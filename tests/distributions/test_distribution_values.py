"""log_prob, entropy, mean, mode, variance, stddev, cdf/icdf and the shapes of every
distribution against torch.distributions on the same float64 parameters."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
import ember.distributions as ED

from ._cases import CASES, build

torch = pytest.importorskip("torch")
TD = torch.distributions


def _pair(name: str) -> tuple[Any, Any, Any, Any]:
    ours, value = build(ED, lambda v: ember.tensor(v, dtype=ember.float64), name)
    theirs, their_value = build(TD, lambda v: torch.tensor(v, dtype=torch.float64), name)
    if CASES[name][0] == "Categorical":
        value, their_value = value.long(), their_value.long()
    return ours, value, theirs, their_value


def _close(ours: Any, theirs: Any, rtol: float = 1e-9) -> None:
    expected = theirs.detach().numpy()
    got = ours.detach().numpy()
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-10)


# torch's GeneralizedPareto compares its float64 concentration with a float32 zero and
# raises; it is checked in float32 below.
FLOAT64_LOG_PROB = sorted(set(CASES) - {"GeneralizedPareto"})


@pytest.mark.parametrize("name", FLOAT64_LOG_PROB)
def test_log_prob_matches_torch(name: str) -> None:
    ours, value, theirs, their_value = _pair(name)
    _close(ours.log_prob(value), theirs.log_prob(their_value))


def test_generalized_pareto_in_float32_matches_torch() -> None:
    ours, value = build(ED, lambda v: ember.tensor(v, dtype=ember.float32), "GeneralizedPareto")
    theirs, their_value = build(
        TD, lambda v: torch.tensor(v, dtype=torch.float32), "GeneralizedPareto"
    )
    _close(ours.log_prob(value), theirs.log_prob(their_value), rtol=1e-5)
    _close(ours.cdf(value), theirs.cdf(their_value), rtol=1e-5)
    q = np.array([[0.1, 0.5, 0.9], [0.25, 0.6, 0.75]], dtype=np.float32)
    _close(ours.icdf(ember.tensor(q)), theirs.icdf(torch.tensor(q)), rtol=1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_shapes_match_torch(name: str) -> None:
    ours, _, theirs, _ = _pair(name)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    draws = ours.sample((5, 2))
    assert tuple(draws.shape) == (5, 2, *theirs.batch_shape, *theirs.event_shape)
    assert tuple(ours.sample().shape) == tuple(theirs.sample().shape)
    expanded = ours.expand((4, *ours.batch_shape))
    assert tuple(expanded.batch_shape) == (4, *theirs.batch_shape)
    assert tuple(expanded.sample().shape) == (4, *theirs.batch_shape, *theirs.event_shape)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("moment", ["mean", "variance", "stddev", "mode", "entropy"])
def test_moments_and_entropy_match_torch(name: str, moment: str) -> None:
    ours, _, theirs, _ = _pair(name)
    try:
        expected = getattr(theirs, moment)
        expected = expected() if callable(expected) else expected
    except NotImplementedError:
        pytest.skip(f"torch has no {moment} for {name}")
    except RuntimeError as error:  # torch's Wishart with a number df and a batch: a bug there
        pytest.skip(f"torch fails on {moment} of {name}: {error}")
    got = getattr(ours, moment)
    got = got() if callable(got) else got
    # torch takes lgamma(total_count + 1) of an integer tensor, so in float32.
    _close(got, expected, rtol=1e-6 if (name, moment) == ("Multinomial", "entropy") else 1e-9)


@pytest.mark.parametrize("name", ["Normal", "Uniform", "Exponential", "Laplace", "Cauchy",
                                  "LogNormal", "HalfNormal", "HalfCauchy", "Gumbel",
                                  "ContinuousBernoulli"])  # fmt: skip
def test_cdf_and_icdf_match_torch(name: str) -> None:
    ours, value, theirs, their_value = _pair(name)
    _close(ours.cdf(value), theirs.cdf(their_value))
    if name == "Gumbel":
        return  # torch's Gumbel has no icdf of its own either (its transforms' signs differ)
    q = np.array([[0.1, 0.5, 0.9], [0.25, 0.6, 0.75]])
    _close(ours.icdf(ember.tensor(q, dtype=ember.float64)), theirs.icdf(torch.tensor(q)))


def test_categorical_normalises_probs_and_logits() -> None:
    weights = np.array([[1.0, 2.0, 5.0], [0.5, 0.5, 0.0]])
    ours = ED.Categorical(probs=ember.tensor(weights, dtype=ember.float64))
    theirs = TD.Categorical(probs=torch.tensor(weights))
    _close(ours.probs, theirs.probs)
    _close(ours.logits, theirs.logits)
    _close(ours.entropy(), theirs.entropy())
    support = ours.enumerate_support()
    assert support.shape == (3, 2) and support.dtype == ember.int64
    _close(ours.log_prob(support), theirs.log_prob(theirs.enumerate_support()))


@pytest.mark.parametrize(
    ("build_ours", "build_theirs"),
    [
        (lambda: ED.Normal(0.0, -1.0), lambda: TD.Normal(0.0, -1.0)),
        (
            lambda: ED.Exponential(ember.tensor([1.0, 0.0])),
            lambda: TD.Exponential(torch.tensor([1.0, 0.0])),
        ),
        (
            lambda: ED.Bernoulli(probs=ember.tensor([1.5])),
            lambda: TD.Bernoulli(probs=torch.tensor([1.5])),
        ),
        (lambda: ED.Gamma(-1.0, 1.0), lambda: TD.Gamma(-1.0, 1.0)),
        (
            lambda: ED.Categorical(probs=ember.tensor([0.5, -0.1])),
            lambda: TD.Categorical(probs=torch.tensor([0.5, -0.1])),
        ),
        (
            lambda: ED.MultivariateNormal(
                ember.zeros(2), covariance_matrix=ember.tensor([[1.0, 2.0], [2.0, 1.0]])
            ),
            lambda: TD.MultivariateNormal(
                torch.zeros(2), covariance_matrix=torch.tensor([[1.0, 2.0], [2.0, 1.0]])
            ),
        ),
        (lambda: ED.Uniform(1.0, 0.0), lambda: TD.Uniform(1.0, 0.0)),
    ],
)
def test_invalid_parameters_raise_value_error_as_torch(build_ours: Any, build_theirs: Any) -> None:
    with pytest.raises(ValueError) as theirs:
        build_theirs()
    with pytest.raises(ValueError) as ours:
        build_ours()
    # Same first words (the parameter and the distribution), up to torch./ember. names.
    assert str(ours.value).split("(")[0] == str(theirs.value).split("(")[0]


def test_validation_can_be_turned_off_and_checks_samples() -> None:
    assert ED.Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0
    normal = ED.Normal(ember.zeros(3), ember.ones(3))
    with pytest.raises(ValueError, match="The right-most size of value must match event_shape"):
        ED.MultivariateNormal(ember.zeros(3), scale_tril=ember.eye(3)).log_prob(ember.zeros(2))
    with pytest.raises(ValueError, match="Value is not broadcastable with batch_shape"):
        normal.log_prob(ember.zeros(2))
    with pytest.raises(ValueError, match="to be within the support"):
        ED.Exponential(ember.ones(3)).log_prob(-ember.ones(3))
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified"):
        ED.Categorical()
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix or precision_matrix"):
        ED.MultivariateNormal(ember.zeros(2))


def test_independent_sums_the_reinterpreted_dims() -> None:
    loc, scale = np.zeros((2, 3)), np.ones((2, 3)) * 2.0
    ours = ED.Independent(ED.Normal(ember.tensor(loc), ember.tensor(scale)), 1)
    theirs = TD.Independent(TD.Normal(torch.tensor(loc), torch.tensor(scale)), 1)
    value = np.arange(6.0).reshape(2, 3) / 7
    assert tuple(ours.batch_shape) == (2,) and tuple(ours.event_shape) == (3,)
    _close(ours.log_prob(ember.tensor(value)), theirs.log_prob(torch.tensor(value)))
    _close(ours.entropy(), theirs.entropy())
    with pytest.raises(ValueError, match="Expected reinterpreted_batch_ndims"):
        ED.Independent(ED.Normal(ember.zeros(2), ember.ones(2)), 2)


def test_exponential_family_entropy_by_autograd_matches_the_closed_form() -> None:
    dist = ED.Gamma(
        ember.tensor([0.7, 2.0, 5.0], dtype=ember.float64),
        ember.tensor([1.5, 0.3, 2.0], dtype=ember.float64),
    )
    generic = ED.ExponentialFamily.entropy(dist)
    np.testing.assert_allclose(generic.detach().numpy(), dist.entropy().numpy(), rtol=1e-9)


def test_utils_match_torch() -> None:
    from torch.distributions import utils as TU

    from ember.distributions import utils as EU

    probs = np.array([[0.2, 0.3, 0.5], [0.0, 0.5, 0.5]])
    _close(EU.probs_to_logits(ember.tensor(probs)), TU.probs_to_logits(torch.tensor(probs)))
    _close(EU.logits_to_probs(ember.tensor(probs)), TU.logits_to_probs(torch.tensor(probs)))
    _close(
        EU.probs_to_logits(ember.tensor(probs), is_binary=True),
        TU.probs_to_logits(torch.tensor(probs), is_binary=True),
    )
    _close(EU.clamp_probs(ember.tensor(probs)), TU.clamp_probs(torch.tensor(probs)))
    matrix = np.arange(16.0).reshape(1, 4, 4)
    for diag in (0, -1, 1):
        vec_ours = EU.tril_matrix_to_vec(ember.tensor(matrix), diag)
        vec_theirs = TU.tril_matrix_to_vec(torch.tensor(matrix), diag)
        _close(vec_ours, vec_theirs)
        _close(EU.vec_to_tril_matrix(vec_ours, diag), TU.vec_to_tril_matrix(vec_theirs, diag))
    a, b = EU.broadcast_all(ember.zeros(2, 1, dtype=ember.float64), 3.0)
    assert a.shape == b.shape == (2, 1) and b.dtype == ember.float64
    with pytest.raises(ValueError, match="Input arguments must all be instances of numbers"):
        EU.broadcast_all("x")


def test_default_validation_can_be_switched_off() -> None:
    ED.Distribution.set_default_validate_args(False)
    try:
        assert ED.Normal(0.0, -1.0).scale.item() == -1.0
    finally:
        ED.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        ED.Normal(0.0, -1.0)
