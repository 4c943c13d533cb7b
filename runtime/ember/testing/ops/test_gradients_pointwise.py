"""Gradients of the elementwise math composites against central finite differences
(`gradcheck`, float64) on every device, second derivatives of the smooth ones, and
PyTorch's conventions at the points where they are not differentiable."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

from ._reference import assert_close

F64 = ember.float64


def leaf(values: Any, device: str) -> ember.Tensor:
    return ember.tensor(np.asarray(values, dtype=np.float64), device=device).requires_grad_()


def _uniform(low: float, high: float) -> Callable[..., np.ndarray]:
    return lambda rng, shape: rng.uniform(low, high, shape)


def _signed(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(0.3, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


def _fractional(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-3, 3, shape) + rng.uniform(0.1, 0.9, shape)


#: name -> (function of one tensor, sampler)
UNARY: dict[str, tuple[Callable[[ember.Tensor], ember.Tensor], Callable[..., np.ndarray]]] = {
    "sinc": (ember.sinc, _signed),
    "frac": (ember.frac, _fractional),
    "deg2rad": (ember.deg2rad, _uniform(-90, 90)),
    "rad2deg": (ember.rad2deg, _uniform(-2, 2)),
    "logit": (ember.logit, _uniform(0.05, 0.95)),
    "logit_eps": (lambda t: ember.logit(t, eps=0.2), _uniform(0.25, 0.75)),
    "nan_to_num": (ember.nan_to_num, _uniform(-2, 2)),
    "sgn": (ember.sgn, _signed),
    "frexp_mantissa": (lambda t: ember.frexp(t).mantissa, _signed),
}
SMOOTH = ["sinc", "logit", "deg2rad"]


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_composite_gradient(op: str, device: str, rng) -> None:
    fn, sampler = UNARY[op]
    assert gradcheck(fn, (leaf(sampler(rng, (2, 3)), device),))


@pytest.mark.parametrize("op", SMOOTH)
def test_unary_composite_second_derivative(op: str, device: str, rng) -> None:
    fn, sampler = UNARY[op]
    assert gradgradcheck(fn, (leaf(sampler(rng, (4,)), device),))


#: name -> (function of two tensors, sampler of a, sampler of b)
BINARY: dict[str, tuple[Callable[..., ember.Tensor], Any, Any]] = {
    "logaddexp": (ember.logaddexp, _uniform(-3, 3), _uniform(-3, 3)),
    "logaddexp2": (ember.logaddexp2, _uniform(-3, 3), _uniform(-3, 3)),
    "xlogy": (ember.xlogy, _uniform(-2, 2), _uniform(0.3, 3)),
    "lerp_tensor": (lambda a, w: ember.lerp(a, a * 0.5 + 1.0, w), _uniform(-2, 2),
                    _uniform(-0.5, 1.5)),
    "addcdiv": (lambda a, b: ember.addcdiv(a, b, a * a + 1.0, value=0.5), _uniform(-2, 2),
                _uniform(-2, 2)),
    "addcmul": (lambda a, b: ember.addcmul(b, a, b, value=-1.5), _uniform(-2, 2),
                _uniform(-2, 2)),
    "ldexp": (lambda a, b: ember.ldexp(a, b), _uniform(-2, 2), _uniform(-2, 2)),
    "float_power": (ember.float_power, _uniform(0.5, 2), _uniform(-2, 2)),
    "rsub": (lambda a, b: ember.rsub(a, b, alpha=2.5), _uniform(-2, 2), _uniform(-2, 2)),
    "hypot_atan2": (lambda a, b: ember.hypot(a, b) * ember.atan2(b, a), _uniform(0.5, 2),
                    _uniform(-2, 2)),
}  # fmt: skip


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_composite_gradient(op: str, device: str, rng) -> None:
    fn, sample_a, sample_b = BINARY[op]
    a, b = leaf(sample_a(rng, (3, 1)), device), leaf(sample_b(rng, (3, 4)), device)
    assert gradcheck(fn, (a, b))


@pytest.mark.parametrize("op", ["logaddexp", "xlogy", "lerp_tensor", "addcdiv"])
def test_binary_composite_second_derivative(op: str, device: str, rng) -> None:
    fn, sample_a, sample_b = BINARY[op]
    a, b = leaf(sample_a(rng, (4,)), device), leaf(sample_b(rng, (4,)), device)
    assert gradgradcheck(fn, (a, b))


def test_lerp_scalar_weight_gradient(device: str, rng) -> None:
    for weight in (0.2, 0.8):
        start, end = leaf(rng.uniform(-1, 1, (5,)), device), leaf(rng.uniform(-1, 1, (5,)), device)
        assert gradcheck(lambda s, e, w=weight: ember.lerp(s, e, w), (start, end))


# -- PyTorch's conventions at the singular points --------------------------------------------

torch = pytest.importorskip("torch")


def _grads(fn: Callable[..., Any], *values: Any, device: str) -> tuple[list, list]:
    """d(sum fn)/d(inputs) by ember and by torch, on the same values."""
    ours = [leaf(v, device) for v in values]
    fn(ember, *ours).sum().backward()
    theirs = [torch.tensor(np.asarray(v, dtype=np.float64), requires_grad=True) for v in values]
    fn(torch, *theirs).sum().backward()
    return [t.grad for t in ours], [t.grad.numpy() for t in theirs]


CONVENTIONS: dict[str, tuple[Callable[..., Any], list]] = {
    "sinc_at_zero": (lambda lib, x: lib.sinc(x), [[0.0, 1.0, -0.5]]),
    "xlogy_at_zero": (lambda lib, x, y: lib.xlogy(x, y), [[0.0, 0.0, 1.0], [-1.0, 2.0, 3.0]]),
    "logaddexp_ties": (lambda lib, a, b: lib.logaddexp(a, b), [[1.0, -2.0], [1.0, -2.0]]),
    "fmax_ties_and_nan": (lambda lib, a, b: lib.fmax(a, b), [[1.0, math.nan, 2.0],
                                                             [1.0, 3.0, math.nan]]),
    "fmin_ties_and_nan": (lambda lib, a, b: lib.fmin(a, b), [[1.0, math.nan, 2.0],
                                                             [1.0, 3.0, math.nan]]),
    "copysign_at_zero": (lambda lib, a, b: lib.copysign(a, b), [[0.0, -1.0, 2.0],
                                                               [-1.0, 1.0, -0.0]]),
    "logit_eps_outside": (lambda lib, x: lib.logit(x, eps=0.25), [[0.1, 0.25, 0.5, 0.9]]),
    "nan_to_num_specials": (lambda lib, x: lib.nan_to_num(x * 1.0), [[math.nan, math.inf, 1.0]]),
    "frac_and_fix": (lambda lib, x: lib.frac(x) * lib.fix(x), [[-1.5, 2.25, 0.5]]),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CONVENTIONS))
def test_gradient_conventions_match_torch(case: str, device: str) -> None:
    fn, values = CONVENTIONS[case]
    ours, theirs = _grads(fn, *values, device=device)
    for got, want in zip(ours, theirs, strict=True):
        assert_close(got, want, F64)
