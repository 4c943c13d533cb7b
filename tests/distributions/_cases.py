"""The distributions under test, each built the same way on ember and on torch from float64
parameters, with values inside its support to evaluate log_prob at."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

RNG = np.random.default_rng(1234)


def _spd(batch: int, n: int) -> np.ndarray:
    a = RNG.standard_normal((batch, n, n))
    return a @ a.transpose(0, 2, 1) + n * np.eye(n)


def _lower(batch: int, n: int) -> np.ndarray:
    lower = np.tril(RNG.standard_normal((batch, n, n)), -1)
    return lower + np.eye(n) * (0.5 + RNG.random((batch, 1, n)))


_POS = RNG.random((2, 3)) + 0.5
_POS2 = RNG.random((2, 3)) + 0.5
_REAL = RNG.standard_normal((2, 3))
_PROBS = RNG.random((2, 3)) * 0.8 + 0.1
_SIMPLEX = RNG.random((2, 4)) + 0.1
_SIMPLEX /= _SIMPLEX.sum(-1, keepdims=True)
_SPD = _spd(2, 3)
_PRECISION = _spd(2, 3)
_TRIL = _lower(2, 3)
_LOC3 = RNG.standard_normal((2, 3))
_COUNTS4 = np.array([[2.0, 3, 5, 0], [1, 1, 4, 4]])
_COUNTS = np.array([[3.0, 10.0, 7.0], [5.0, 5.0, 1.0]])


def _corr_tril() -> np.ndarray:
    """Cholesky factors of two 3 x 3 correlation matrices."""
    a = RNG.standard_normal((2, 3, 3))
    cov = a @ a.transpose(0, 2, 1) + np.eye(3)
    d = np.sqrt(np.diagonal(cov, axis1=1, axis2=2))
    return np.linalg.cholesky(cov / d[:, :, None] / d[:, None, :])


_CORR_TRIL = _corr_tril()


def _dirichlet_values() -> np.ndarray:
    x = RNG.random((2, 4)) + 0.05
    return x / x.sum(-1, keepdims=True)


# name: (class name, positional args, keyword args, value in the support)
CASES: dict[str, tuple[str, tuple[Any, ...], dict[str, Any], np.ndarray]] = {
    "Normal": ("Normal", (_REAL, _POS), {}, RNG.standard_normal((2, 3))),
    "Uniform": ("Uniform", (_REAL - 2.0, _REAL + 2.0), {}, _REAL + 0.3),
    "Bernoulli-probs": ("Bernoulli", (), {"probs": _PROBS}, (RNG.random((2, 3)) > 0.5) * 1.0),
    "Bernoulli-logits": ("Bernoulli", (), {"logits": _REAL}, (RNG.random((2, 3)) > 0.5) * 1.0),
    "Categorical-probs": ("Categorical", (), {"probs": _SIMPLEX}, np.array([3, 1])),
    "Categorical-logits": ("Categorical", (), {"logits": _REAL}, np.array([0, 2])),
    "OneHotCategorical": ("OneHotCategorical", (), {"probs": _SIMPLEX}, np.eye(4)[[2, 0]]),
    "Exponential": ("Exponential", (_POS,), {}, _POS2),
    "Laplace": ("Laplace", (_REAL, _POS), {}, RNG.standard_normal((2, 3))),
    "Cauchy": ("Cauchy", (_REAL, _POS), {}, RNG.standard_normal((2, 3))),
    "LogNormal": ("LogNormal", (_REAL, _POS), {}, _POS2),
    "Gumbel": ("Gumbel", (_REAL, _POS), {}, RNG.standard_normal((2, 3))),
    "HalfNormal": ("HalfNormal", (_POS,), {}, _POS2),
    "HalfCauchy": ("HalfCauchy", (_POS,), {}, _POS2),
    "Gamma": ("Gamma", (_POS * 3, _POS2), {}, _POS2 * 2),
    "Chi2": ("Chi2", (_POS * 4,), {}, _POS2 * 3),
    "Beta": ("Beta", (_POS * 2, _POS2 * 3), {}, _PROBS),
    "Dirichlet": ("Dirichlet", (_SIMPLEX * 8,), {}, _dirichlet_values()),
    "StudentT": ("StudentT", (_POS * 6, _REAL, _POS2), {}, RNG.standard_normal((2, 3))),
    "Poisson": ("Poisson", (_POS * 4,), {}, np.array([[0.0, 3.0, 7.0], [1.0, 2.0, 12.0]])),
    "Binomial": ("Binomial", (_COUNTS,), {"probs": _PROBS}, np.array([[1.0, 4, 7], [0, 5, 1]])),
    "Binomial-logits": ("Binomial", (10.0,), {"logits": _REAL}, np.array([[1.0, 4, 9], [0, 5, 9]])),
    "Geometric": ("Geometric", (), {"probs": _PROBS}, np.array([[0.0, 3, 7], [1, 2, 12]])),
    "Pareto": ("Pareto", (_POS, _POS2 * 3), {}, _POS + _POS2),
    "Weibull": ("Weibull", (_POS, _POS2 * 2), {}, _POS2),
    "MultivariateNormal-cov": ("MultivariateNormal", (_LOC3,), {"covariance_matrix": _SPD}, _REAL),
    "MultivariateNormal-prec": (
        "MultivariateNormal", (_LOC3,), {"precision_matrix": _PRECISION}, _REAL,
    ),
    "MultivariateNormal-tril": ("MultivariateNormal", (_LOC3,), {"scale_tril": _TRIL}, _REAL),
    "Multinomial": ("Multinomial", (10,), {"probs": _SIMPLEX}, _COUNTS4),
    "NegativeBinomial": (
        "NegativeBinomial", (_POS * 5,), {"probs": _PROBS}, np.array([[0.0, 3, 7], [1, 2, 12]]),
    ),
    "InverseGamma": ("InverseGamma", (_POS * 4, _POS2), {}, _POS2),
    "Kumaraswamy": ("Kumaraswamy", (_POS * 2, _POS2 * 3), {}, _PROBS),
    "FisherSnedecor": ("FisherSnedecor", (_POS * 8 + 4, _POS2 * 8 + 5), {}, _POS2),
    "RelaxedBernoulli": ("RelaxedBernoulli", (np.array(0.7),), {"probs": _PROBS}, _PROBS[::-1] * 1),
    "RelaxedOneHotCategorical": (
        "RelaxedOneHotCategorical", (np.array(0.6),), {"probs": _SIMPLEX}, _dirichlet_values(),
    ),
    "LogisticNormal": ("LogisticNormal", (_REAL, _POS), {}, _dirichlet_values()),
    "ContinuousBernoulli": ("ContinuousBernoulli", (), {"probs": _PROBS}, _PROBS[::-1] * 1),
    "ContinuousBernoulli-logits": ("ContinuousBernoulli", (), {"logits": _REAL * 3}, _PROBS),
    "ContinuousBernoulli-near-half": (
        "ContinuousBernoulli", (), {"probs": 0.4995 + _PROBS * 0.001}, _PROBS,
    ),
    "LowRankMultivariateNormal": (
        "LowRankMultivariateNormal", (_LOC3, RNG.standard_normal((2, 3, 2)), _POS), {}, _REAL,
    ),
    "VonMises": ("VonMises", (_REAL, _POS * 4), {}, np.clip(_REAL[::-1], -3.0, 3.0)),
    "LKJCholesky": ("LKJCholesky", (3, _POS[:, 0] * 2), {}, _CORR_TRIL),
    "GeneralizedPareto": (
        "GeneralizedPareto", (_REAL, _POS, np.array([[0.3, 0.0, -0.2], [0.1, -0.1, 0.25]])), {},
        _REAL + 0.1 * _POS2,
    ),
    "Wishart-cov": ("Wishart", (np.array([4.5, 6.0]),), {"covariance_matrix": _SPD}, _spd(2, 3)),
    "Wishart-tril": ("Wishart", (5.0,), {"scale_tril": _TRIL}, _spd(2, 3)),
    "Wishart-prec": ("Wishart", (7.0,), {"precision_matrix": _PRECISION}, _spd(2, 3)),
}  # fmt: skip


def build(namespace: Any, tensor: Callable[[Any], Any], name: str) -> tuple[Any, Any]:
    """(distribution, value) of case `name` built with `namespace` (torch.distributions or
    ember.distributions) and `tensor` (a float64 tensor constructor)."""
    class_name, args, kwargs, value = CASES[name]
    convert = lambda v: tensor(v) if isinstance(v, np.ndarray) else v  # noqa: E731
    dist = getattr(namespace, class_name)(
        *[convert(a) for a in args], **{k: convert(v) for k, v in kwargs.items()}
    )
    return dist, tensor(value)
