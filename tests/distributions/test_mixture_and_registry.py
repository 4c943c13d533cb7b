"""MixtureSameFamily against torch, and biject_to / transform_to: each constraint's
transform maps unconstrained values into it, as torch's registry does."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
import ember.distributions as ED
from ember.distributions import constraints as EC

torch = pytest.importorskip("torch")
TD = torch.distributions
TC = torch.distributions.constraints


def _close(ours: Any, theirs: Any, rtol: float = 1e-9) -> None:
    np.testing.assert_allclose(
        ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=1e-10
    )


def _mixtures() -> tuple[Any, Any]:
    weights = np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]])
    loc = np.array([[-2.0, 0.0, 3.0], [1.0, 2.0, -1.0]])
    scale = np.array([[0.5, 1.0, 2.0], [1.5, 0.3, 0.7]])
    ours = ED.MixtureSameFamily(
        ED.Categorical(probs=ember.tensor(weights)),
        ED.Normal(ember.tensor(loc), ember.tensor(scale)),
    )
    theirs = TD.MixtureSameFamily(
        TD.Categorical(probs=torch.tensor(weights)),
        TD.Normal(torch.tensor(loc), torch.tensor(scale)),
    )
    return ours, theirs


def test_mixture_same_family_matches_torch() -> None:
    ours, theirs = _mixtures()
    assert tuple(ours.batch_shape) == (2,) and tuple(ours.event_shape) == ()
    x = np.array([0.3, -1.2])
    _close(ours.log_prob(ember.tensor(x)), theirs.log_prob(torch.tensor(x)))
    _close(ours.cdf(ember.tensor(x)), theirs.cdf(torch.tensor(x)))
    _close(ours.mean, theirs.mean)
    _close(ours.variance, theirs.variance)
    ember.manual_seed(3)
    draws = ours.sample((6000,)).numpy()
    assert draws.shape == (6000, 2)
    standard_error = np.sqrt(theirs.variance.numpy() / 6000)
    np.testing.assert_array_less(np.abs(draws.mean(0) - theirs.mean.numpy()), 5 * standard_error)


def test_mixture_of_multivariate_components() -> None:
    weights = np.array([0.3, 0.7])
    loc = np.array([[0.0, 1.0], [2.0, -1.0]])
    comp_ours = ED.Independent(
        ED.Normal(ember.tensor(loc), ember.ones(2, 2, dtype=ember.float64)), 1
    )
    comp_theirs = TD.Independent(
        TD.Normal(torch.tensor(loc), torch.ones(2, 2, dtype=torch.float64)), 1
    )
    ours = ED.MixtureSameFamily(ED.Categorical(probs=ember.tensor(weights)), comp_ours)
    theirs = TD.MixtureSameFamily(TD.Categorical(probs=torch.tensor(weights)), comp_theirs)
    assert tuple(ours.event_shape) == (2,) and ours.sample((5,)).shape == (5, 2)
    x = np.array([[0.5, 0.5], [1.0, -2.0]])
    _close(ours.log_prob(ember.tensor(x)), theirs.log_prob(torch.tensor(x)))
    _close(ours.mean, theirs.mean)
    with pytest.raises(ValueError, match="does not equal"):
        ED.MixtureSameFamily(ED.Categorical(probs=ember.ones(3)), comp_ours)


REGISTRY = [
    ("real", (), "real"), ("positive", (), "positive"), ("nonnegative", (), "nonnegative"),
    ("unit_interval", (), "unit_interval"), ("interval", (-1.0, 3.0), "interval"),
    ("greater_than", (2.0,), "greater_than"), ("less_than", (-1.0,), "less_than"),
    ("simplex", (), "simplex"), ("lower_cholesky", (), "lower_cholesky"),
    ("positive_definite", (), "positive_definite"), ("corr_cholesky", (), "corr_cholesky"),
]  # fmt: skip


def _unconstrained(name: str) -> np.ndarray:
    rng = np.random.default_rng(5)
    if name in ("lower_cholesky", "positive_definite"):
        return rng.standard_normal((2, 3, 3))
    if name == "corr_cholesky":
        return rng.standard_normal((2, 3))
    return rng.standard_normal((2, 4))


@pytest.mark.parametrize(("name", "args", "_"), REGISTRY, ids=[r[0] for r in REGISTRY])
def test_biject_to_and_transform_to_match_torch(name: str, args: tuple, _: str) -> None:  # type: ignore[type-arg]
    ours_c = getattr(EC, name)(*args) if args else getattr(EC, name)
    theirs_c = getattr(TC, name)(*args) if args else getattr(TC, name)
    x = _unconstrained(name)
    registries = [(ED.transform_to, TD.transform_to)]
    if name not in ("lower_cholesky", "positive_definite"):  # not bijections: torch neither
        registries.append((ED.biject_to, TD.biject_to))
    else:
        with pytest.raises(NotImplementedError):
            ED.biject_to(ours_c)
    for ours_registry, theirs_registry in registries:
        ours_t, theirs_t = ours_registry(ours_c), theirs_registry(theirs_c)
        y = ours_t(ember.tensor(x))
        _close(y, theirs_t(torch.tensor(x)), rtol=1e-7)
        assert bool(ours_c.check(y).all())


def test_registry_errors_and_independent() -> None:
    with pytest.raises(NotImplementedError, match="Cannot transform _IntegerInterval constraints"):
        ED.biject_to(EC.integer_interval(0, 3))
    t = ED.biject_to(EC.independent(EC.positive, 1))
    assert isinstance(t, ED.transforms.IndependentTransform) and t.event_dim == 1
    with pytest.raises(TypeError):
        ED.biject_to.register(int, lambda c: ED.transforms.ExpTransform())


def test_multinomial_samples_count_to_total() -> None:
    ember.manual_seed(4)
    dist = ED.Multinomial(7, probs=ember.tensor([[0.2, 0.3, 0.5], [0.9, 0.05, 0.05]]))
    draws = dist.sample((50,))
    assert draws.shape == (50, 2, 3)
    assert draws.sum(-1).tolist() == [[7.0, 7.0]] * 50
    with pytest.raises(NotImplementedError, match="inhomogeneous total_count"):
        ED.Multinomial(ember.tensor([3, 4]), probs=ember.tensor([0.5, 0.5]))  # type: ignore[arg-type]
