"""The gamma family and erfinv (lgamma, digamma, polygamma, mvlgamma, erfinv): values
against SciPy in float64, result dtypes, layouts, poles and other edges, in-place forms,
and gradients against finite differences."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

from ._reference import FLOATS, INTS, assert_close, host, laid_out, make, pid, shape_layouts

special = pytest.importorskip("scipy.special")


def _polygamma_1(x: np.ndarray) -> np.ndarray:
    return special.polygamma(1, x)


#: op -> (ember function, SciPy reference, sampler of its domain)
PRIMITIVES: dict[str, tuple[Callable[..., Any], Callable[..., Any], tuple[float, float]]] = {
    "lgamma": (ember.lgamma, special.gammaln, (-4.5, 6.0)),
    "digamma": (ember.digamma, special.digamma, (-4.5, 6.0)),
    "erfinv": (ember.erfinv, special.erfinv, (-0.999, 0.999)),
}


def _values(op: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    low, high = PRIMITIVES[op][2]
    values = rng.uniform(low, high, size=shape)
    if op != "erfinv":  # keep clear of the poles at 0, -1, -2, ...
        nearest = np.round(values)
        values = np.where((nearest <= 0) & (np.abs(values - nearest) < 0.05), values + 0.1, values)
    return values


def _reference(op: str, values: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return PRIMITIVES[op][1](values.astype(np.float64))


# Float32 loses digits in the recurrences near the roots of digamma and lgamma: compare
# relative to max(1, |value|).
ATOL = {ember.bfloat16: 1e-1, ember.float16: 2e-2, ember.float32: 2e-5, ember.float64: 1e-12}


@pytest.mark.parametrize("op", sorted(PRIMITIVES))
@pytest.mark.parametrize("dtype", FLOATS, ids=pid)
def test_values(device: str, op: str, dtype: ember.dtype, rng) -> None:
    values = _values(op, (40,), rng).astype(dtype.numpy)
    result = PRIMITIVES[op][0](make(values, device))
    expected = _reference(op, values)
    assert_close(result, expected, dtype, rtol=ATOL[dtype], atol=ATOL[dtype])


@pytest.mark.parametrize("op", sorted(PRIMITIVES))
@pytest.mark.parametrize("dtype", INTS, ids=pid)
def test_integers_compute_in_default_float(device: str, op: str, dtype: ember.dtype) -> None:
    values = np.array([1, 2, 3, 5], dtype=dtype.numpy)
    if op == "erfinv":
        values = np.array([0, 1, 0, 1], dtype=dtype.numpy)
    result = PRIMITIVES[op][0](make(values, device))
    assert_close(result, _reference(op, values), ember.float32)


@pytest.mark.parametrize("op", sorted(PRIMITIVES))
@pytest.mark.parametrize(("shape", "layout"), shape_layouts([(0,), (3, 4), (2, 3, 4)]), ids=pid)
def test_layouts(device: str, op: str, shape: tuple, layout: str, rng) -> None:
    tensor, values = laid_out(_values(op, shape, rng).astype(np.float32), layout, device)
    result = PRIMITIVES[op][0](tensor)
    assert_close(result, _reference(op, values), ember.float32, rtol=2e-5, atol=2e-5)
    assert result.is_contiguous()


EDGES = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 2.0, -1.0, -2.0, 0.5, -2.5, 1e-30])


@pytest.mark.parametrize("dtype", FLOATS, ids=pid)
def test_lgamma_edges(device: str, dtype: ember.dtype) -> None:
    # PyTorch's lgamma is C's: inf at the poles and at -inf (SciPy's gammaln gives -inf).
    values = EDGES.astype(dtype.numpy)
    expected = special.gammaln(values.astype(np.float64))
    expected = np.where(np.isneginf(values), np.inf, expected)
    assert_close(ember.lgamma(make(values, device)), expected, dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=pid)
def test_digamma_edges(device: str, dtype: ember.dtype) -> None:
    # -inf at +0, inf at -0, NaN at the negative integers and -inf.
    values = EDGES.astype(dtype.numpy)
    result = host(ember.digamma(make(values, device))).astype(np.float64)
    expected = special.digamma(values.astype(np.float64))
    expected[3], expected[4] = -np.inf, np.inf
    rtol = {ember.bfloat16: 8e-2, ember.float16: 1e-2, ember.float32: 1e-5, ember.float64: 1e-12}[
        dtype
    ]
    np.testing.assert_allclose(result, expected, rtol=rtol, equal_nan=True)


@pytest.mark.parametrize("dtype", FLOATS, ids=pid)
def test_erfinv_edges(device: str, dtype: ember.dtype) -> None:
    values = np.array([np.nan, 1.0, -1.0, 0.0, -0.0, 1.5, -1.5, np.inf]).astype(dtype.numpy)
    result = host(ember.erfinv(make(values, device))).astype(np.float64)
    np.testing.assert_array_equal(result, [np.nan, np.inf, -np.inf, 0.0, 0.0] + [np.nan] * 3)


@pytest.mark.parametrize("op", sorted(PRIMITIVES))
def test_methods_and_in_place(device: str, op: str, rng) -> None:
    values = _values(op, (6,), rng)
    tensor = make(values, device)
    expected = host(PRIMITIVES[op][0](tensor))
    np.testing.assert_array_equal(host(getattr(tensor, op)()), expected)
    out = make(np.zeros(6), device)
    assert PRIMITIVES[op][0](tensor, out=out) is out
    np.testing.assert_array_equal(host(out), expected)
    assert getattr(tensor, op + "_")() is tensor
    np.testing.assert_array_equal(host(tensor), expected)


def test_in_place_on_integers_raises(device: str) -> None:
    tensor = make(np.array([1, 2, 3]), device)
    with pytest.raises(RuntimeError, match="can't be cast"):
        tensor.lgamma_()
    np.testing.assert_array_equal(host(tensor), [1, 2, 3])


# -- polygamma and mvlgamma -------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 2, 3])
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64], ids=pid)
def test_polygamma_values(device: str, n: int, dtype: ember.dtype, rng) -> None:
    values = _values("digamma", (30,), rng).astype(dtype.numpy)
    expected = special.polygamma(n, values.astype(np.float64))
    # PyTorch's trigamma (six recurrence steps, then four series terms) is good to ~1e-9.
    tolerance = 1e-4 if dtype is ember.float32 else 1e-8 if n == 1 else 1e-10
    result = ember.polygamma(n, make(values, device))
    assert_close(result, expected, dtype, rtol=tolerance, atol=tolerance)
    assert_close(make(values, device).polygamma(n), expected, dtype, rtol=tolerance, atol=tolerance)


def test_polygamma_at_poles_and_in_place(device: str) -> None:
    result = host(ember.polygamma(1, make([0.0, -1.0, 1.0], device, ember.float64)))
    # inf at 0; at -1 sin(-pi) is not quite 0, so huge instead, as in PyTorch.
    assert result[0] == np.inf and result[1] > 1e30
    np.testing.assert_allclose(result[2], np.pi**2 / 6, rtol=1e-8)
    tensor = make([1.0, 2.0], device, ember.float64)
    assert tensor.polygamma_(1) is tensor
    np.testing.assert_allclose(host(tensor), special.polygamma(1, [1.0, 2.0]), rtol=1e-8)


def test_polygamma_rejects_negative_order(device: str) -> None:
    with pytest.raises(RuntimeError, match="negative n"):
        ember.polygamma(-1, make([1.0], device))


@pytest.mark.parametrize("p", [1, 2, 4])
def test_mvlgamma(device: str, p: int, rng) -> None:
    values = rng.uniform((p - 1) / 2 + 0.1, 5.0, size=(3, 4))
    result = ember.mvlgamma(make(values, device), p)
    assert_close(result, special.multigammaln(values, p), ember.float64)
    tensor = make(values, device)
    assert tensor.mvlgamma_(p) is tensor
    assert_close(tensor, special.multigammaln(values, p), ember.float64)


def test_mvlgamma_checks_its_domain(device: str) -> None:
    tensor = make([2.0, 0.4], device)
    with pytest.raises(RuntimeError, match="greater than"):
        ember.mvlgamma(tensor, 2)
    with pytest.raises(RuntimeError, match="p has to be"):
        ember.mvlgamma(tensor, 0)


# -- gradients --------------------------------------------------------------------------------


def _leaf(values: np.ndarray, device: str) -> ember.Tensor:
    return ember.tensor(values, dtype=ember.float64, device=device).requires_grad_()


@pytest.mark.parametrize("op", sorted(PRIMITIVES))
def test_gradients(device: str, op: str, rng) -> None:
    values = _values(op, (2, 3), rng)
    if op == "erfinv":
        values = values * 0.9
    assert gradcheck(PRIMITIVES[op][0], (_leaf(values, device),))


@pytest.mark.parametrize("op", ["lgamma", "digamma"])
def test_second_derivatives(device: str, op: str, rng) -> None:
    assert gradgradcheck(PRIMITIVES[op][0], (_leaf(_values(op, (4,), rng), device),))


def test_lgamma_gradient_is_digamma(device: str, rng) -> None:
    values = _values("lgamma", (5,), rng)
    x = _leaf(values, device)
    ember.lgamma(x).sum().backward()
    np.testing.assert_allclose(host(x.grad), special.digamma(values), rtol=1e-12)
    y = _leaf(values, device)
    ember.digamma(y).sum().backward()
    np.testing.assert_allclose(host(y.grad), special.polygamma(1, values), rtol=1e-8)


def test_polygamma_and_mvlgamma_gradients(device: str, rng) -> None:
    x = _leaf(_values("digamma", (4,), rng), device)
    assert gradcheck(lambda t: ember.polygamma(1, t), (x,))
    assert gradcheck(lambda t: ember.polygamma(2, t), (x,))
    y = _leaf(rng.uniform(1.6, 4.0, size=(4,)), device)
    assert gradcheck(lambda t: ember.mvlgamma(t, 3), (y,))
