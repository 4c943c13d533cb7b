"""kl_divergence for the registered pairs, register_kl's dispatch, the transforms
(forward, inverse, log|det J|, shapes) and TransformedDistribution against torch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
import ember.distributions as ED
from ember.distributions import transforms as ET

from ._cases import build

torch = pytest.importorskip("torch")
TD = torch.distributions
TT = torch.distributions.transforms

KL_PAIRS = [
    ("Normal", "Normal"), ("Bernoulli-probs", "Bernoulli-logits"),
    ("Categorical-probs", "Categorical-probs"), ("OneHotCategorical", "OneHotCategorical"),
    ("Exponential", "Exponential"), ("Exponential", "Gamma"), ("Gamma", "Gamma"),
    ("Gamma", "Exponential"), ("Laplace", "Laplace"), ("Cauchy", "Cauchy"),
    ("Beta", "Beta"), ("Dirichlet", "Dirichlet"), ("Poisson", "Poisson"),
    ("Geometric", "Geometric"), ("Gumbel", "Gumbel"), ("HalfNormal", "HalfNormal"),
    ("LogNormal", "LogNormal"), ("Pareto", "Pareto"), ("Uniform", "Normal"),
    ("Uniform", "Uniform"), ("MultivariateNormal-cov", "MultivariateNormal-tril"),
    ("MultivariateNormal-prec", "MultivariateNormal-cov"), ("Binomial", "Binomial"),
    ("LowRankMultivariateNormal", "LowRankMultivariateNormal"),
    ("ContinuousBernoulli", "ContinuousBernoulli"),
]  # fmt: skip


def _both(name: str) -> tuple[Any, Any]:
    ours, _ = build(ED, lambda v: ember.tensor(v, dtype=ember.float64), name)
    theirs, _ = build(TD, lambda v: torch.tensor(v, dtype=torch.float64), name)
    return ours, theirs


def _close(ours: Any, theirs: Any, rtol: float = 1e-9) -> None:
    got, expected = ours.detach().numpy(), theirs.detach().numpy()
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-10)


@pytest.mark.parametrize(("p_name", "q_name"), KL_PAIRS, ids=[f"{p}-{q}" for p, q in KL_PAIRS])
def test_kl_divergence_matches_torch(p_name: str, q_name: str) -> None:
    p_ours, p_theirs = _both(p_name)
    q_ours, q_theirs = _flipped(q_name) if p_name == q_name else _both(q_name)
    if p_name == q_name == "Binomial":  # KL needs q's counts <= p's: the same counts
        q_ours = ED.Binomial(p_ours.total_count, probs=q_ours.probs)
        q_theirs = TD.Binomial(p_theirs.total_count, probs=q_theirs.probs)
    _close(ED.kl_divergence(p_ours, q_ours), TD.kl_divergence(p_theirs, q_theirs))


def _flipped(name: str) -> tuple[Any, Any]:
    """Case `name` with its parameters reversed along their first dim (another member of
    the family with the same shapes)."""
    ours, _ = build(
        ED, lambda v: ember.tensor(np.ascontiguousarray(v[::-1]), dtype=ember.float64), name
    )
    theirs, _ = build(
        TD, lambda v: torch.tensor(np.ascontiguousarray(v[::-1]), dtype=torch.float64), name
    )
    return ours, theirs


def test_kl_of_a_distribution_with_itself_is_zero_and_unknown_pairs_raise() -> None:
    p = ED.Normal(ember.tensor([0.0, 1.0]), ember.tensor([1.0, 3.0]))
    np.testing.assert_allclose(ED.kl_divergence(p, p).numpy(), 0.0, atol=1e-7)
    with pytest.raises(
        NotImplementedError,
        match="No KL\\(p \\|\\| q\\) is implemented for p type Normal and q type Cauchy",
    ):
        ED.kl_divergence(p, ED.Cauchy(0.0, 1.0))


def test_register_kl_prefers_the_most_specific_pair() -> None:
    class MyNormal(ED.Normal):
        pass

    calls: list[str] = []

    @ED.register_kl(MyNormal, ED.Normal)
    def _kl_mine(p: Any, q: Any) -> Any:
        calls.append("mine")
        return ember.zeros(p.batch_shape)

    p = MyNormal(ember.zeros(2), ember.ones(2))
    q = ED.Normal(ember.zeros(2), ember.ones(2))
    ED.kl_divergence(p, q)
    ED.kl_divergence(q, q)
    assert calls == ["mine"]
    with pytest.raises(TypeError):
        ED.register_kl(int, ED.Normal)


TRANSFORMS = [
    ("ExpTransform", (), {}, "real"),
    ("SigmoidTransform", (), {}, "real"),
    ("TanhTransform", (), {}, "real"),
    ("SoftplusTransform", (), {}, "real"),
    ("AffineTransform", (0.5, -2.0), {}, "real"),
    ("PowerTransform", (2.5,), {}, "positive"),
    ("StickBreakingTransform", (), {}, "real"),
    ("LowerCholeskyTransform", (), {}, "square"),
    ("CorrCholeskyTransform", (), {}, "vec6"),
]


def _input(kind: str) -> np.ndarray:
    rng = np.random.default_rng(7)
    if kind == "positive":
        return rng.random((2, 3)) + 0.2
    if kind == "square":
        return rng.standard_normal((2, 3, 3))
    if kind == "vec6":
        return rng.standard_normal((2, 6))
    return rng.standard_normal((2, 3))


@pytest.mark.parametrize(
    ("name", "args", "kwargs", "kind"), TRANSFORMS, ids=[t[0] for t in TRANSFORMS]
)
def test_transform_matches_torch(name: str, args: tuple, kwargs: dict, kind: str) -> None:  # type: ignore[type-arg]
    x = _input(kind)
    ours, theirs = getattr(ET, name)(*args, **kwargs), getattr(TT, name)(*args, **kwargs)
    y_ours, y_theirs = ours(ember.tensor(x)), theirs(torch.tensor(x))
    _close(y_ours, y_theirs)
    _close(ours.inv(y_ours), theirs.inv(y_theirs), rtol=1e-7)
    if name != "LowerCholeskyTransform":  # torch's has no log|det J|
        _close(
            ours.log_abs_det_jacobian(ember.tensor(x), y_ours),
            theirs.log_abs_det_jacobian(torch.tensor(x), y_theirs),
        )
    assert tuple(ours.forward_shape(x.shape)) == tuple(theirs.forward_shape(x.shape))
    assert ours.domain.event_dim == theirs.domain.event_dim
    assert ours.codomain.event_dim == theirs.codomain.event_dim
    assert bool(ours.codomain.check(y_ours).all())


def test_compose_and_transformed_distribution_match_torch() -> None:
    loc, scale = np.array([0.2, -0.4]), np.array([0.5, 1.5])
    ours_t = ET.ComposeTransform([ET.AffineTransform(1.0, 2.0), ET.SigmoidTransform()])
    theirs_t = TT.ComposeTransform([TT.AffineTransform(1.0, 2.0), TT.SigmoidTransform()])
    ours = ED.TransformedDistribution(ED.Normal(ember.tensor(loc), ember.tensor(scale)), ours_t)
    theirs = TD.TransformedDistribution(TD.Normal(torch.tensor(loc), torch.tensor(scale)), theirs_t)
    value = np.array([0.3, 0.8])
    _close(ours.log_prob(ember.tensor(value)), theirs.log_prob(torch.tensor(value)))
    _close(ours.cdf(ember.tensor(value)), theirs.cdf(torch.tensor(value)))
    assert ours.sample((4,)).shape == (4, 2)
    assert bool(ours.support.check(ours.sample((50,))).all())
    x = ember.tensor([0.1, 0.2], dtype=ember.float64)
    _close(ours_t.inv(ours_t(x)), torch.tensor([0.1, 0.2], dtype=torch.float64))
    composed = ET.ComposeTransform([ET.ExpTransform(), ET.ExpTransform().inv])
    _close(composed(x), torch.tensor([0.1, 0.2], dtype=torch.float64))
    assert ET.identity_transform(x) is x


def test_independent_transform_and_reshape() -> None:
    x = np.random.default_rng(3).standard_normal((4, 2, 3))
    ours = ET.IndependentTransform(ET.ExpTransform(), 2)
    theirs = TT.IndependentTransform(TT.ExpTransform(), 2)
    y = ours(ember.tensor(x))
    _close(
        ours.log_abs_det_jacobian(ember.tensor(x), y),
        theirs.log_abs_det_jacobian(torch.tensor(x), theirs(torch.tensor(x))),
    )
    reshape = ET.ReshapeTransform((2, 3), (6,))
    assert reshape(ember.tensor(x)).shape == (4, 6)
    assert reshape.inverse_shape((5, 6)) == (5, 2, 3)
    with pytest.raises(ValueError, match="different numbers of elements"):
        ET.ReshapeTransform((2, 3), (5,))


def test_transform_cache_returns_the_same_inverse() -> None:
    t = ET.ExpTransform(cache_size=1)
    x = ember.tensor([0.5, 1.0])
    y = t(x)
    assert t.inv(y) is x
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        ET.ExpTransform(cache_size=2)


def _first_case(class_name: str) -> str:
    from ._cases import CASES

    return next(name for name, case in CASES.items() if case[0] == class_name)


def _cross_pairs() -> list[tuple[str, str]]:
    import ember.distributions.kl as ember_kl

    pairs = []
    for p_type, q_type in ember_kl._KL_REGISTRY:
        if p_type is q_type or p_type.__name__ in ("ExponentialFamily", "Independent"):
            continue
        if "TransformedDistribution" in (p_type.__name__, q_type.__name__):
            continue
        pairs.append((p_type.__name__, q_type.__name__))
    return sorted(pairs)


CROSS = _cross_pairs()


@pytest.mark.parametrize(("p_class", "q_class"), CROSS, ids=[f"{p}-{q}" for p, q in CROSS])
def test_cross_family_kl_matches_torch(p_class: str, q_class: str) -> None:
    p_ours, p_theirs = _both(_first_case(p_class))
    q_ours, q_theirs = _both(_first_case(q_class))
    if (p_ours.batch_shape, p_ours.event_shape) != (q_ours.batch_shape, q_ours.event_shape):
        pytest.skip("cases of different shapes")
    _close(ED.kl_divergence(p_ours, q_ours), TD.kl_divergence(p_theirs, q_theirs))


def test_exponential_family_kl_by_bregman_matches_the_closed_form() -> None:
    from ember.distributions._kl_cross import _kl_expfamily_expfamily

    p_ours, _ = _both("Gamma")
    q_ours, _ = _flipped("Gamma")
    np.testing.assert_allclose(
        _kl_expfamily_expfamily(p_ours, q_ours).detach().numpy(),
        ED.kl_divergence(p_ours, q_ours).numpy(),
        rtol=1e-9,
    )
