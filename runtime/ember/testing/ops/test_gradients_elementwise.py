"""Gradients of every elementwise op against central finite differences, in float64.

Each op is checked with `ember.autograd.gradcheck` (analytical Jacobian from backward vs
numerical Jacobian from central differences) on every device: unary ops, binary ops with
tensor, broadcast and Python-scalar operands, `where` and `clamp`, and the in-place forms
on tensors inside a graph; second derivatives with `gradgradcheck`. Points where an op is
not differentiable (abs at 0, the steps of floor, ...) are kept out of the sampled data;
PyTorch's conventions at those points are checked against PyTorch at the end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

F64 = ember.float64


def leaf(values: Any, device: str, layout: str = "contiguous") -> ember.Tensor:
    """A float64 leaf requiring grad; "transposed" gives it non-contiguous strides."""
    values = np.asarray(values, dtype=np.float64)
    if layout == "transposed" and values.ndim >= 2:
        base = ember.tensor(np.ascontiguousarray(values.swapaxes(-1, -2)), device=device)
        t = base.transpose(-1, -2).detach()
        assert not t.is_contiguous()
    else:
        t = ember.tensor(values, dtype=F64, device=device)
    return t.requires_grad_()


def away_from(values: np.ndarray, points: np.ndarray | float, gap: float = 0.1) -> np.ndarray:
    """Move values within `gap` of a point of non-differentiability away from it."""
    distance = values - points
    return np.where(np.abs(distance) < gap, points + np.copysign(gap, distance), values)


def signed(rng: np.random.Generator, shape: tuple[int, ...], low: float, high: float):
    """Values with |x| in [low, high] and random signs."""
    return rng.uniform(low, high, size=shape) * rng.choice([-1.0, 1.0], size=shape)


# -- unary ---------------------------------------------------------------------------------


def _steps(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Values away from integers and half-integers (where rounding ops jump)."""
    return rng.integers(-3, 3, size=shape) + rng.uniform(0.1, 0.4, size=shape)


#: op -> (function, sampler of differentiable inputs)
UNARY: dict[str, tuple[Callable[[ember.Tensor], ember.Tensor], Callable[..., np.ndarray]]] = {
    "neg": (ember.neg, lambda r, s: r.uniform(-2, 2, s)),
    "abs": (ember.abs, lambda r, s: signed(r, s, 0.2, 2.0)),
    "sign": (ember.sign, lambda r, s: signed(r, s, 0.2, 2.0)),
    "exp": (ember.exp, lambda r, s: r.uniform(-2, 2, s)),
    "expm1": (ember.expm1, lambda r, s: r.uniform(-2, 2, s)),
    "log": (ember.log, lambda r, s: r.uniform(0.25, 3, s)),
    "log1p": (ember.log1p, lambda r, s: r.uniform(-0.5, 3, s)),
    "sqrt": (ember.sqrt, lambda r, s: r.uniform(0.25, 3, s)),
    "rsqrt": (ember.rsqrt, lambda r, s: r.uniform(0.25, 3, s)),
    "reciprocal": (ember.reciprocal, lambda r, s: signed(r, s, 0.5, 2.0)),
    "sin": (ember.sin, lambda r, s: r.uniform(-3, 3, s)),
    "cos": (ember.cos, lambda r, s: r.uniform(-3, 3, s)),
    "tanh": (ember.tanh, lambda r, s: r.uniform(-2, 2, s)),
    "sigmoid": (ember.sigmoid, lambda r, s: r.uniform(-3, 3, s)),
    "relu": (ember.relu, lambda r, s: signed(r, s, 0.2, 2.0)),
    "gelu": (ember.gelu, lambda r, s: r.uniform(-3, 3, s)),
    "erf": (ember.erf, lambda r, s: r.uniform(-2, 2, s)),
    "square": (ember.square, lambda r, s: r.uniform(-2, 2, s)),
    "floor": (ember.floor, _steps),
    "ceil": (ember.ceil, _steps),
    "round": (ember.round, _steps),
    "trunc": (ember.trunc, _steps),
    "acos": (ember.acos, lambda r, s: r.uniform(-0.9, 0.9, s)),
    "asin": (ember.asin, lambda r, s: r.uniform(-0.9, 0.9, s)),
    "atan": (ember.atan, lambda r, s: r.uniform(-2, 2, s)),
    "sinh": (ember.sinh, lambda r, s: r.uniform(-2, 2, s)),
    "cosh": (ember.cosh, lambda r, s: r.uniform(-2, 2, s)),
    "tan": (ember.tan, lambda r, s: r.uniform(-1.2, 1.2, s)),
    "asinh": (ember.asinh, lambda r, s: r.uniform(-2, 2, s)),
    "acosh": (ember.acosh, lambda r, s: r.uniform(1.2, 3, s)),
    "atanh": (ember.atanh, lambda r, s: r.uniform(-0.9, 0.9, s)),
    "log2": (ember.log2, lambda r, s: r.uniform(0.25, 3, s)),
    "log10": (ember.log10, lambda r, s: r.uniform(0.25, 3, s)),
    "exp2": (ember.exp2, lambda r, s: r.uniform(-2, 2, s)),
}
SHAPES = [(), (5,), (2, 3)]
SMOOTH = [
    "exp", "expm1", "log", "log1p", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tanh",
    "sigmoid", "gelu", "erf", "square",
    "acos", "asin", "atan", "sinh", "cosh", "tan", "asinh", "acosh", "atanh", "log2", "log10",
    "exp2",
]  # fmt: skip


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_gradient(op: str, shape: tuple[int, ...], device: str, rng) -> None:
    fn, sampler = UNARY[op]
    assert gradcheck(fn, (leaf(sampler(rng, shape), device),))


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_gradient_noncontiguous(op: str, device: str, rng) -> None:
    fn, sampler = UNARY[op]
    assert gradcheck(fn, (leaf(sampler(rng, (3, 2)), device, "transposed"),))


@pytest.mark.parametrize("op", SMOOTH)
def test_unary_second_derivative(op: str, device: str, rng) -> None:
    fn, sampler = UNARY[op]
    assert gradgradcheck(fn, (leaf(sampler(rng, (4,)), device),))


def test_unary_methods_and_operators(device: str, rng) -> None:
    x = leaf(rng.uniform(0.5, 2, (2, 2)), device)
    assert gradcheck(lambda t: -t.exp().log1p().sqrt().abs(), (x,))


# -- binary --------------------------------------------------------------------------------


def _operands(name: str, rng: np.random.Generator, a_shape: tuple, b_shape: tuple):
    """Candidate inputs: b != 0 for the divisions, a > 0 for pow."""
    a = rng.uniform(-2, 2, a_shape)
    b = rng.uniform(-2, 2, b_shape)
    if name in ("div", "remainder", "fmod", "floor_divide", "div_trunc", "div_floor"):
        b = signed(rng, b_shape, 0.5, 2.0)
    if name == "pow":
        a = rng.uniform(0.5, 2.0, a_shape)
    return a, b


def _fits(name: str, a: np.ndarray, b: np.ndarray) -> bool:
    """Whether the pair stays clear of the op's non-differentiable points: a and b apart
    for maximum/minimum, a/b away from the integers where remainder and fmod jump."""
    if name in ("maximum", "minimum", "fmax", "fmin"):
        return bool(np.all(np.abs(a - b) > 0.05))
    if name == "copysign":  # |a| has a kink at 0 and the sign of b flips at 0
        return bool(np.all(np.abs(a) > 0.05) and np.all(np.abs(b) > 0.05))
    if name in ("atan2", "hypot"):  # singular at the origin
        return bool(np.all(np.hypot(a, b) > 0.2))
    if name in ("remainder", "fmod", "floor_divide", "div_trunc", "div_floor"):
        ratio = a / b
        return bool(np.all(np.abs(ratio - np.round(ratio)) > 0.05))
    return True


BINARY = {
    "add": ember.add, "sub": ember.sub, "mul": ember.mul, "div": ember.div, "pow": ember.pow,
    "maximum": ember.maximum, "minimum": ember.minimum, "remainder": ember.remainder,
    "fmod": ember.fmod, "floor_divide": ember.floor_divide,
    "div_trunc": lambda a, b: ember.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda a, b: ember.div(a, b, rounding_mode="floor"),
    "atan2": ember.atan2, "hypot": ember.hypot, "copysign": ember.copysign,
    "fmax": ember.fmax, "fmin": ember.fmin,
}  # fmt: skip
PAIRS = [((4,), (4,)), ((), ()), ((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((3,), ())]


def _pair(name: str, rng: np.random.Generator, a_shape: tuple, b_shape: tuple):
    for _ in range(1000):
        a, b = _operands(name, rng, a_shape, b_shape)
        if _fits(name, a, b):
            return a, b
    raise AssertionError("could not sample differentiable operands")


@pytest.mark.parametrize("shapes", PAIRS, ids=lambda p: f"{p[0]}-{p[1]}")
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_gradient(op: str, shapes: tuple, device: str, rng) -> None:
    a, b = _pair(op, rng, *shapes)
    assert gradcheck(BINARY[op], (leaf(a, device), leaf(b, device)))


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_gradient_one_operand(op: str, device: str, rng) -> None:
    """Only one operand requires grad; the other is a constant tensor."""
    a, b = _pair(op, rng, (2, 3), (2, 3))
    constant = ember.tensor(b, dtype=F64, device=device)
    assert gradcheck(lambda x: BINARY[op](x, constant), (leaf(a, device),))
    constant = ember.tensor(a, dtype=F64, device=device)
    assert gradcheck(lambda y: BINARY[op](constant, y), (leaf(b, device),))


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_gradient_noncontiguous(op: str, device: str, rng) -> None:
    a, b = _pair(op, rng, (3, 2), (3, 2))
    x, y = leaf(a, device, "transposed"), leaf(b, device)
    assert gradcheck(BINARY[op], (x, y))


SCALARS = {
    "add": 1.5, "sub": -0.5, "mul": 3, "div": 0.25, "pow": 3, "maximum": 0.1,
    "minimum": -0.1, "remainder": 0.7, "fmod": 0.7, "floor_divide": 0.7, "div_trunc": 0.7,
    "div_floor": 0.7, "atan2": 0.7, "hypot": 0.7, "copysign": -0.5, "fmax": 0.1, "fmin": -0.1,
}  # fmt: skip


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_gradient_scalar_right(op: str, device: str, rng) -> None:
    scalar = SCALARS[op]
    a, _ = _pair(op, rng, (5,), ())
    if op in ("maximum", "minimum", "fmax", "fmin"):
        a = away_from(a, scalar)
    if op == "copysign":
        a = away_from(a, 0.0)
    if op in ("remainder", "fmod", "floor_divide", "div_trunc", "div_floor"):
        a = (rng.integers(-2, 3, (5,)) + rng.uniform(0.2, 0.8, (5,))) * scalar
    if op in ("maximum", "minimum"):
        fn = lambda x: BINARY[op](x, ember.tensor(scalar, dtype=F64, device=device))  # noqa: E731
    else:
        fn = lambda x: BINARY[op](x, scalar)  # noqa: E731
    assert gradcheck(fn, (leaf(a, device),))


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "pow"])
def test_binary_gradient_scalar_left(op: str, device: str, rng) -> None:
    b = signed(rng, (5,), 0.5, 2.0)
    assert gradcheck(lambda y: BINARY[op](2.5, y), (leaf(b, device),))


@pytest.mark.parametrize("exponent", [0, 1, 2, 0.5, -1.5])
def test_pow_scalar_exponents(exponent: float, device: str, rng) -> None:
    assert gradcheck(lambda x: x**exponent, (leaf(rng.uniform(0.5, 2, (4,)), device),))


def test_pow_zero_base_scalar(device: str, rng) -> None:
    """0 ** y: the gradient wrt y is 0 where y >= 0, as in PyTorch."""
    y = leaf(rng.uniform(0.5, 2, (3,)), device)
    (grad,) = ember.autograd.grad(ember.pow(0.0, y), y, ember.ones(3, dtype=F64, device=device))
    np.testing.assert_array_equal(grad.numpy(force=True), np.zeros(3))


@pytest.mark.parametrize("op", ["add", "sub"])
def test_alpha(op: str, device: str, rng) -> None:
    a, b = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (3,))
    fn = lambda x, y: BINARY[op](x, y, alpha=-2.5)  # noqa: E731
    assert gradcheck(fn, (leaf(a, device), leaf(b, device)))


def test_operators(device: str, rng) -> None:
    a, b = rng.uniform(0.5, 2, (3,)), rng.uniform(0.5, 2, (2, 3))
    fn = lambda x, y: (x + y) * (x - y) / (1.0 + y) ** 2 - 3 * x  # noqa: E731
    assert gradcheck(fn, (leaf(a, device), leaf(b, device)))


@pytest.mark.parametrize("op", ["mul", "div", "pow", "maximum", "add", "sub"])
def test_binary_second_derivative(op: str, device: str, rng) -> None:
    a, b = _pair(op, rng, (3, 1), (1, 2))
    assert gradgradcheck(BINARY[op], (leaf(a, device), leaf(b, device)))


def test_promoted_operand_gradient_dtype(device: str) -> None:
    """A float32 operand of a float64 op gets a float32 gradient."""
    x = ember.ones(3, dtype=ember.float32, device=device).requires_grad_()
    y = ember.ones(3, dtype=F64, device=device).requires_grad_()
    (x * y).backward(ember.ones(3, dtype=F64, device=device))
    assert x.grad.dtype is ember.float32
    assert y.grad.dtype is F64


# -- where and clamp -----------------------------------------------------------------------


def test_where_both_branches(device: str, rng) -> None:
    condition = ember.tensor(rng.random((3, 4)) < 0.5, device=device)
    a, b = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (4,))
    fn = lambda x, y: ember.where(condition, x, y)  # noqa: E731
    assert gradcheck(fn, (leaf(a, device), leaf(b, device)))
    assert gradgradcheck(lambda x, y: fn(x, y) * fn(y, x), (leaf(a, device), leaf(b, device)))


def test_where_broadcast_condition_and_scalars(device: str, rng) -> None:
    condition = ember.tensor(rng.random((3, 1)) < 0.5, device=device)
    x = leaf(rng.uniform(-1, 1, (3, 4)), device)
    assert gradcheck(lambda t: ember.where(condition, t, 0.0), (x,))
    assert gradcheck(lambda t: ember.where(condition, 2.0, t), (x,))
    assert gradcheck(lambda t: t.where(condition, -t), (x,))


CLAMPS = {
    "both": (-0.5, 0.5), "min": (-0.5, None), "max": (None, 0.5), "crossed": (0.5, -0.5),
}  # fmt: skip


@pytest.mark.parametrize("bounds", sorted(CLAMPS))
def test_clamp_scalar_bounds(bounds: str, device: str, rng) -> None:
    low, high = CLAMPS[bounds]
    values = away_from(away_from(rng.uniform(-1, 1, (3, 4)), -0.5), 0.5)
    assert gradcheck(lambda t: ember.clamp(t, low, high), (leaf(values, device),))
    assert gradcheck(lambda t: t.clamp(min=low, max=high), (leaf(values, device),))


@pytest.mark.parametrize("bounds", ["both", "min", "max"])
def test_clamp_tensor_bounds(bounds: str, device: str, rng) -> None:
    values = rng.uniform(-1, 1, (3, 4))
    low = rng.uniform(-1, 0, (4,))
    high = rng.uniform(0, 1, (3, 1))
    values = away_from(
        away_from(values, np.broadcast_to(low, (3, 4))), np.broadcast_to(high, (3, 4))
    )
    inputs = [leaf(values, device)]
    use_low, use_high = bounds in ("both", "min"), bounds in ("both", "max")
    if use_low:
        inputs.append(leaf(low, device))
    if use_high:
        inputs.append(leaf(high, device))

    def fn(x: ember.Tensor, *rest: ember.Tensor) -> ember.Tensor:
        it = iter(rest)
        return ember.clamp(x, next(it) if use_low else None, next(it) if use_high else None)

    assert gradcheck(fn, tuple(inputs))


def test_clamp_crossed_tensor_bounds(device: str, rng) -> None:
    """min > max: the result is max, so max takes the whole gradient."""
    x = leaf(rng.uniform(-1, 1, (4,)), device)
    low, high = leaf(np.full(4, 0.6), device), leaf(np.full(4, -0.6), device)
    assert gradcheck(lambda a, b, c: ember.clamp(a, b, c), (x, low, high))


# -- in-place ops inside a graph -------------------------------------------------------------

INPLACE: dict[str, Callable[[ember.Tensor, ember.Tensor], ember.Tensor]] = {
    "add_": lambda t, y: t.add_(y, alpha=2),
    "sub_": lambda t, y: t.sub_(y),
    "mul_": lambda t, y: t.mul_(y),
    "div_": lambda t, y: t.div_(y),
    "pow_": lambda t, y: t.pow_(2),
    "iadd": lambda t, y: t.__iadd__(y),
    "imul": lambda t, y: t.__imul__(y),
    "exp_": lambda t, y: t.exp_(),
    "relu_": lambda t, y: t.relu_(),
    "clamp_": lambda t, y: t.clamp_(-0.5, 0.5),
    "self_mul_": lambda t, y: t.mul_(t),
}


@pytest.mark.parametrize("op", sorted(INPLACE))
def test_inplace_gradient(op: str, device: str, rng) -> None:
    """The tensor written in place continues the graph: gradients flow through the old
    values to x and through the operand to y."""
    a = away_from(away_from(signed(rng, (2, 3), 0.2, 1.0), -0.5), 0.5)
    b = signed(rng, (3,), 0.5, 2.0)

    def fn(x: ember.Tensor, y: ember.Tensor) -> ember.Tensor:
        t = x * 1.5
        out = INPLACE[op](t, y)
        assert out is t and t.grad_fn is not None
        return t * y

    assert gradcheck(fn, (leaf(a, device), leaf(b, device)))


def test_inplace_second_derivative(device: str, rng) -> None:
    def fn(x: ember.Tensor) -> ember.Tensor:
        t = x * x
        t.mul_(x)
        return t.exp_()

    assert gradgradcheck(fn, (leaf(rng.uniform(-0.5, 0.5, (3,)), device),))


# -- PyTorch's conventions at non-differentiable points --------------------------------------


def _torch_grads(torch: Any, fn: Callable[..., Any], arrays: list[np.ndarray]) -> list[np.ndarray]:
    leaves = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    fn(torch, *leaves).sum().backward()
    return [t.grad.numpy(force=True) for t in leaves]


def _ember_grads(fn: Callable[..., Any], arrays: list[np.ndarray], device: str):
    leaves = [leaf(a, device) for a in arrays]
    out = fn(ember, *leaves)
    out.backward(ember.ones_like(out))
    return [t.grad.numpy(force=True) for t in leaves]


KINKS: dict[str, tuple[Callable[..., Any], list[list[float]]]] = {
    "abs": (lambda lib, x: lib.abs(x), [[0.0, -1.0, 2.0]]),
    "relu": (lambda lib, x: lib.relu(x), [[0.0, -1.0, 2.0]]),
    "clamp_edges": (lambda lib, x: lib.clamp(x, -1.0, 1.0), [[-1.0, 1.0, 0.0, 2.0, -2.0]]),
    "clamp_min_edge": (lambda lib, x: lib.clamp(x, min=0.0), [[0.0, 1.0, -1.0]]),
    "maximum_ties": (lambda lib, x, y: lib.maximum(x, y), [[1.0, 2.0, 3.0], [1.0, 0.0, 3.0]]),
    "minimum_ties": (lambda lib, x, y: lib.minimum(x, y), [[1.0, 2.0, 3.0], [1.0, 0.0, 3.0]]),
    "pow_zero_exponent": (lambda lib, x: x**0, [[0.0, 2.0]]),
    "pow_zero_base": (lambda lib, x, y: lib.pow(x, y), [[0.0, 0.0, 2.0], [0.0, 2.0, 1.0]]),
    "floor": (lambda lib, x: lib.floor(x), [[1.0, -0.5]]),
    "sign": (lambda lib, x: lib.sign(x), [[0.0, -0.5]]),
}


@pytest.mark.parametrize("case", sorted(KINKS))
def test_matches_torch_at_kinks(case: str, device: str) -> None:
    torch = pytest.importorskip("torch")
    fn, values = KINKS[case]
    arrays = [np.array(v) for v in values]
    expected = _torch_grads(torch, fn, arrays)
    for got, want in zip(_ember_grads(fn, arrays, device), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=0, atol=0)
