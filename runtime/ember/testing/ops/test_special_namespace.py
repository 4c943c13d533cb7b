"""`ember.special` (torch.special) and the torch-level erfc, i0, igamma, igammac: values
against SciPy in float64 and float32, edges, gradients against finite differences, and
PyTorch's rules on which functions have none."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck

from ._reference import assert_close, host, make, pid

sp = pytest.importorskip("scipy.special")
S = ember.special

# PyTorch's Bessel and Airy approximations (which Ember's kernels share) are good to
# ~1e-6 for x > 5; SciPy's are better, hence the looser tolerances there.
#: name -> (SciPy reference, domain, float64 tolerance)
UNARY: dict[str, tuple[Callable[..., Any], tuple[float, float], float]] = {
    "erfc": (sp.erfc, (-6.0, 6.0), 1e-12),
    "erfcx": (sp.erfcx, (-5.0, 40.0), 1e-12),
    "ndtri": (sp.ndtri, (0.001, 0.999), 1e-12),
    "ndtr": (sp.ndtr, (-8.0, 8.0), 1e-12),
    "log_ndtr": (sp.log_ndtr, (-30.0, 6.0), 1e-12),
    "i0": (sp.i0, (-20.0, 20.0), 1e-12),
    "i0e": (sp.i0e, (-50.0, 50.0), 1e-12),
    "i1": (sp.i1, (-20.0, 20.0), 1e-12),
    "i1e": (sp.i1e, (-50.0, 50.0), 1e-12),
    "modified_bessel_i0": (sp.i0, (-20.0, 20.0), 1e-12),
    "modified_bessel_i1": (sp.i1, (-20.0, 20.0), 1e-12),
    "modified_bessel_k0": (sp.k0, (0.05, 20.0), 1e-12),
    "modified_bessel_k1": (sp.k1, (0.05, 20.0), 1e-12),
    "scaled_modified_bessel_k0": (sp.k0e, (0.05, 50.0), 1e-12),
    "scaled_modified_bessel_k1": (sp.k1e, (0.05, 50.0), 1e-12),
    "bessel_j0": (sp.j0, (-20.0, 20.0), 1e-6),
    "bessel_j1": (sp.j1, (-20.0, 20.0), 1e-6),
    "bessel_y0": (sp.y0, (0.05, 20.0), 1e-6),
    "bessel_y1": (sp.y1, (0.05, 20.0), 1e-6),
    "airy_ai": (lambda x: sp.airy(x)[0], (-2.0, 2.0), 1e-10),
    "spherical_bessel_j0": (lambda x: sp.spherical_jn(0, x), (-10.0, 10.0), 1e-12),
    "entr": (sp.entr, (0.0, 5.0), 1e-12),
    "sinc": (np.sinc, (-4.0, 4.0), 1e-12),
    "logit": (sp.logit, (0.01, 0.99), 1e-12),
    "exp2": (sp.exp2, (-5.0, 5.0), 1e-12),
    "expit": (sp.expit, (-8.0, 8.0), 1e-12),
    "gammaln": (sp.gammaln, (0.1, 20.0), 1e-12),
    "psi": (sp.psi, (0.1, 20.0), 1e-12),
    "erfinv": (sp.erfinv, (-0.99, 0.99), 1e-12),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64], ids=pid)
def test_unary_values(device: str, name: str, dtype: ember.dtype, rng) -> None:
    reference, (low, high), tolerance = UNARY[name]
    values = rng.uniform(low, high, size=(3, 7)).astype(dtype.numpy)
    expected = reference(values.astype(np.float64))
    if dtype is ember.float32:
        tolerance = max(tolerance, 1e-4)
    result = getattr(S, name)(make(values, device))
    assert_close(result, expected, dtype, rtol=tolerance, atol=tolerance)


EDGES = {
    "erfc": ([-np.inf, np.inf, np.nan, 30.0], [2.0, 0.0, np.nan, 0.0]),
    "erfcx": ([np.inf, -np.inf, np.nan, 1e10, -30.0],
              [0.0, np.inf, np.nan, sp.erfcx(1e10), np.inf]),
    "ndtri": ([0.0, 1.0, 0.5, -0.1, 1.1, np.nan], [-np.inf, np.inf, 0.0, np.nan, np.nan, np.nan]),
    "i0": ([0.0, np.nan, 1.0], [1.0, np.nan, sp.i0(1.0)]),
    "i1e": ([0.0, np.nan], [0.0, np.nan]),
    "entr": ([0.0, -1.0, np.nan, 1.0], [0.0, -np.inf, np.nan, 0.0]),
    "sinc": ([0.0, 1.0, np.nan], [1.0, 0.0, np.nan]),
    "spherical_bessel_j0": ([0.0, np.inf], [1.0, 0.0]),
    "log_ndtr": ([-np.inf, np.inf, -100.0], [-np.inf, 0.0, sp.log_ndtr(-100.0)]),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(EDGES))
def test_unary_edges(device: str, name: str) -> None:
    values, expected = EDGES[name]
    result = host(getattr(S, name)(make(np.array(values), device))).astype(np.float64)
    np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-15, equal_nan=True)


def test_integer_inputs_compute_in_default_float(device: str) -> None:
    ints = make(np.array([0, 1, 2]), device)
    for name in ("erfc", "i0", "i1e", "bessel_j0", "ndtr", "entr", "sinc", "exp2"):
        result = getattr(S, name)(ints)
        assert result.dtype is ember.float32, name
    assert_close(S.exp2(ints), [1.0, 2.0, 4.0], ember.float32, rtol=0, atol=0)


# -- binary functions ------------------------------------------------------------------------

BINARY = {
    "gammainc": (sp.gammainc, (0.1, 30.0), (0.0, 40.0)),
    "gammaincc": (sp.gammaincc, (0.1, 30.0), (0.0, 40.0)),
    "zeta": (sp.zeta, (1.1, 8.0), (0.1, 10.0)),
    "xlogy": (sp.xlogy, (-2.0, 2.0), (0.01, 5.0)),
    "xlog1py": (sp.xlog1py, (-2.0, 2.0), (-0.9, 5.0)),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64], ids=pid)
def test_binary_values(device: str, name: str, dtype: ember.dtype, rng) -> None:
    reference, a_domain, b_domain = BINARY[name]
    a = rng.uniform(*a_domain, size=(4, 1)).astype(dtype.numpy)
    b = rng.uniform(*b_domain, size=(1, 6)).astype(dtype.numpy)
    expected = reference(a.astype(np.float64), b.astype(np.float64))
    tolerance = 1e-10 if dtype is ember.float64 else 1e-4
    result = getattr(S, name)(make(a, device), make(b, device))
    assert_close(result, expected, dtype, rtol=tolerance, atol=tolerance)


def test_binary_with_python_scalars(device: str) -> None:
    x = make(np.array([0.5, 2.0, 7.5]), device)
    assert_close(S.gammainc(2.0, x), sp.gammainc(2.0, [0.5, 2.0, 7.5]), ember.float64)
    assert_close(S.zeta(x + 1.5, 1.0), sp.zeta([2.0, 3.5, 9.0], 1.0), ember.float64)
    assert_close(S.xlogy(0, make(np.array([0.0, 1.0]), device)), [0.0, 0.0], ember.float64)


def test_incomplete_gamma_edges(device: str) -> None:
    a = make(np.array([0.0, 0.0, 1.0, np.inf, 2.0, -1.0, np.nan]), device, ember.float64)
    x = make(np.array([0.0, 1.0, 0.0, 1.0, np.inf, 1.0, 1.0]), device, ember.float64)
    lower = [np.nan, 1.0, 0.0, 0.0, 1.0, np.nan, np.nan]
    np.testing.assert_array_equal(host(S.gammainc(a, x)), lower)
    np.testing.assert_array_equal(
        host(ember.igammac(a, x)), [np.nan, 0.0, 1.0, 1.0, 0.0] + [np.nan] * 2
    )


def test_zeta_edges(device: str) -> None:
    x = make(np.array([1.0, 0.5, 2.0, 2.0]), device, ember.float64)
    q = make(np.array([1.0, 1.0, 0.0, -1.5]), device, ember.float64)
    result = host(S.zeta(x, q))
    assert result[0] == np.inf and np.isnan(result[1]) and result[2] == np.inf
    np.testing.assert_allclose(result[3], sp.zeta(2.0, -1.5), rtol=1e-10)


def _jacobi(n: Any, alpha: float, beta: float, x: Any) -> Any:
    """The Jacobi polynomial normalised to 1 at x = 1 (V_n and W_n / (2n + 1) are these)."""
    return sp.eval_jacobi(n, alpha, beta, x) / sp.eval_jacobi(n, alpha, beta, 1.0)


POLYNOMIALS = {
    "chebyshev_polynomial_t": sp.eval_chebyt,
    "chebyshev_polynomial_u": sp.eval_chebyu,
    "chebyshev_polynomial_v": lambda n, x: _jacobi(n, -0.5, 0.5, x),
    "chebyshev_polynomial_w": lambda n, x: (2 * n + 1) * _jacobi(n, 0.5, -0.5, x),
    "shifted_chebyshev_polynomial_t": sp.eval_sh_chebyt,
    "shifted_chebyshev_polynomial_u": sp.eval_sh_chebyu,
    "hermite_polynomial_h": sp.eval_hermite,
    "hermite_polynomial_he": sp.eval_hermitenorm,
    "laguerre_polynomial_l": sp.eval_laguerre,
    "legendre_polynomial_p": sp.eval_legendre,
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(POLYNOMIALS))
def test_polynomials(device: str, name: str, rng) -> None:
    shifted = name.startswith("shifted")
    x = rng.uniform(0.05 if shifted else -0.95, 0.95, size=(5, 1))
    degrees = np.array([0, 1, 2, 3, 6, 9])
    expected = POLYNOMIALS[name](degrees[None, :], x)
    function = getattr(S, name)
    result = function(make(x, device), make(degrees.astype(np.float64), device))
    assert_close(result, expected, ember.float64, rtol=1e-9, atol=1e-9)
    scalar = function(make(x, device), 3)
    assert_close(scalar, POLYNOMIALS[name](3, x), ember.float64, rtol=1e-9, atol=1e-9)


def test_polynomials_of_negative_degree_are_zero(device: str) -> None:
    x = make(np.array([0.3, -0.2]), device, ember.float64)
    for name in POLYNOMIALS:
        np.testing.assert_array_equal(host(getattr(S, name)(x, -1)), [0.0, 0.0])


# -- gradients ---------------------------------------------------------------------------------


def _leaf(values: np.ndarray, device: str) -> ember.Tensor:
    return ember.tensor(values, dtype=ember.float64, device=device).requires_grad_()


DIFFERENTIABLE = [
    "erfc", "erfcx", "ndtri", "ndtr", "log_ndtr", "i0", "i0e", "i1", "i1e", "entr", "sinc",
    "logit", "exp2",
]  # fmt: skip


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_unary_gradients(device: str, name: str, rng) -> None:
    low, high = UNARY[name][1]
    values = rng.uniform(max(low, -4.0), min(high, 4.0), size=(5,))
    if name in ("entr",):
        values = values + 0.1
    assert gradcheck(getattr(S, name), (_leaf(values, device),))


def test_binary_gradients(device: str, rng) -> None:
    a = ember.tensor(rng.uniform(0.5, 3.0, (4,)), dtype=ember.float64, device=device)
    x = _leaf(rng.uniform(0.5, 3.0, (4,)), device)
    assert gradcheck(lambda t: S.gammainc(a, t), (x,))
    assert gradcheck(lambda t: S.gammaincc(a, t), (x,))
    assert gradcheck(lambda t: S.zeta(a + 1.5, t), (x,))
    y = _leaf(rng.uniform(0.5, 3.0, (4,)), device)
    assert gradcheck(S.xlogy, (x, y))
    assert gradcheck(S.xlog1py, (x, y))


@pytest.mark.parametrize(
    ("name", "message"),
    [("gammainc", "igamma: input"), ("gammaincc", "igammac: input"), ("zeta", "zeta")],
)
def test_no_derivative_in_the_first_argument(device: str, name: str, message: str) -> None:
    a = _leaf(np.array([2.0, 3.0]), device)
    x = ember.tensor([1.0, 2.0], dtype=ember.float64, device=device)
    result = getattr(S, name)(a, x).sum()
    with pytest.raises(NotImplementedError, match=message):
        result.backward()


@pytest.mark.parametrize(
    "name", ["bessel_j0", "modified_bessel_k1", "airy_ai", "spherical_bessel_j0"]
)
def test_bessel_results_are_outside_the_graph(device: str, name: str) -> None:
    x = _leaf(np.array([0.5, 1.5]), device)
    assert not getattr(S, name)(x).requires_grad
    assert not S.chebyshev_polynomial_t(x, 3).requires_grad


# -- torch-level forms and Tensor methods -----------------------------------------------------


def test_torch_level_forms_and_methods(device: str, rng) -> None:
    values = rng.uniform(0.1, 3.0, size=(6,))
    t = make(values, device)
    np.testing.assert_allclose(host(ember.erfc(t)), sp.erfc(values), rtol=1e-12)
    np.testing.assert_allclose(host(t.i0()), sp.i0(values), rtol=1e-12)
    np.testing.assert_allclose(host(t.igamma(t)), sp.gammainc(values, values), rtol=1e-10)
    np.testing.assert_allclose(host(t.igammac(2.0)), sp.gammaincc(values, 2.0), rtol=1e-10)
    for method, reference in [("erfc_", sp.erfc), ("i0_", sp.i0)]:
        u = make(values, device)
        assert getattr(u, method)() is u
        np.testing.assert_allclose(host(u), reference(values), rtol=1e-12)
    u = make(values, device)
    assert u.igamma_(1.5) is u
    np.testing.assert_allclose(host(u), sp.gammainc(values, 1.5), rtol=1e-10)
    assert ember.i0_(make(values, device)) is not None
    out = make(np.zeros(6), device)
    assert S.ndtr(t, out=out) is out
    np.testing.assert_allclose(host(out), sp.ndtr(values), rtol=1e-12)


def test_namespace_aliases(device: str) -> None:
    t = make(np.array([-1.0, 0.0, 2.0]), device)
    np.testing.assert_array_equal(host(S.expit(t)), host(ember.sigmoid(t)))
    np.testing.assert_array_equal(host(S.psi(t + 3)), host(ember.digamma(t + 3)))
    np.testing.assert_array_equal(host(S.round(t * 0.6)), host(ember.round(t * 0.6)))
    x = make(np.array([[1.0, 2.0], [3.0, 0.5]]), device)
    np.testing.assert_allclose(host(S.softmax(x, 1)), sp.softmax(host(x), axis=1), rtol=1e-6)
    np.testing.assert_allclose(
        host(S.log_softmax(x, 0)), sp.log_softmax(host(x), axis=0), rtol=1e-6
    )
    np.testing.assert_allclose(host(S.logsumexp(x, 1)), sp.logsumexp(host(x), axis=1), rtol=1e-6)
    np.testing.assert_allclose(
        host(S.multigammaln(x + 2, 2)), sp.multigammaln(host(x) + 2, 2), rtol=1e-6
    )
    assert ember.special is S and set(S.__all__) >= {"zeta", "airy_ai", "legendre_polynomial_p"}
