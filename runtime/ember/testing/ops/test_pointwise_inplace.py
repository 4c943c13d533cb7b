"""In-place forms of the elementwise math (t.acos_(), ember.atan2_(t, u), t.eq_(u), ...)
against PyTorch: values, the returned tensor, views writing through to their base, the
dtype rule (a result needing promotion raises and leaves the tensor intact), autograd
(a leaf requiring grad raises; inside a graph the gradient is PyTorch's)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember

from ._reference import FLOATS, assert_close, host, make, pid

torch = pytest.importorskip("torch")

#: name -> input domain (low, high) of the float values it is tested on
UNARY: dict[str, tuple[float, float]] = {
    **dict.fromkeys(["acos", "asin", "atanh", "arccos", "arcsin", "arctanh"], (-0.9, 0.9)),
    **dict.fromkeys(["acosh", "arccosh"], (1.1, 3.0)),
    **dict.fromkeys(["log", "log2", "log10", "sqrt", "rsqrt"], (0.2, 3.0)),
    "logit": (0.05, 0.95),
    **dict.fromkeys(
        ["atan", "arctan", "sinh", "cosh", "tan", "asinh", "arcsinh", "exp2", "expm1", "log1p",
         "sin", "cos", "tanh", "sigmoid", "erf", "floor", "ceil", "round", "trunc", "fix", "frac",
         "abs", "absolute", "neg", "negative", "sign", "sgn", "square", "reciprocal", "sinc",
         "deg2rad", "rad2deg", "nan_to_num"],
        (-0.9, 0.9),
    ),
}  # fmt: skip
#: ops whose in-place form on an integer tensor must raise (the result is floating)
FLOATING = [
    "acos", "asinh", "log2", "exp2", "sqrt", "sigmoid", "sinc", "deg2rad", "logit", "frac",
    "reciprocal",
]  # fmt: skip


def _values(name: str, rng: np.random.Generator, shape: tuple[int, ...] = (2, 3)) -> np.ndarray:
    low, high = UNARY[name]
    values = rng.uniform(low, high, shape)
    if name == "reciprocal":
        values = np.where(np.abs(values) < 0.2, 0.5, values)
    return values


def _to_torch(values: np.ndarray, dtype: ember.dtype) -> Any:
    """`values` as a torch tensor of `dtype` (torch reads no ml_dtypes bfloat16 arrays, so
    bfloat16 goes through float32, which holds every bfloat16 value exactly)."""
    if dtype is ember.bfloat16:
        return torch.tensor(values.astype(np.float32)).to(torch.bfloat16)
    return torch.tensor(values)


def _from_torch(tensor: Any) -> np.ndarray:
    """A torch tensor's values as NumPy (torch.bfloat16 widened exactly to float32)."""
    return tensor.float().numpy() if tensor.dtype == torch.bfloat16 else tensor.numpy()


@pytest.mark.parametrize("dtype", FLOATS, ids=pid)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_inplace_matches_torch(device: str, name: str, dtype: ember.dtype, rng) -> None:
    values = _values(name, rng).astype(dtype.numpy)
    want = _from_torch(getattr(_to_torch(values, dtype), name + "_")())
    t = make(values, device)
    assert getattr(t, name + "_")() is t
    assert_close(t, want.astype(np.float64), dtype)
    if hasattr(torch, name + "_"):
        u = make(values, device)
        assert getattr(ember, name + "_")(u) is u
        assert_close(u, want.astype(np.float64), dtype)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_inplace_on_a_view_writes_the_base(device: str, name: str, rng) -> None:
    values = _values(name, rng, (4, 3))
    base = make(values, device)
    getattr(base[1:3, ::2], name + "_")()
    want = torch.tensor(values)
    getattr(want[1:3, ::2], name + "_")()
    assert_close(base, want.numpy(), ember.float64)


@pytest.mark.parametrize("name", FLOATING)
def test_unary_inplace_integer_tensor_raises(device: str, name: str) -> None:
    t = make([1, 2, 3], device)
    with pytest.raises(RuntimeError):
        getattr(t, name + "_")()
    np.testing.assert_array_equal(host(t), [1, 2, 3])


@pytest.mark.parametrize("name", ["acos", "sinh", "exp2", "sinc", "logit", "frac", "sign"])
def test_unary_inplace_on_a_leaf_requiring_grad_raises(device: str, name: str) -> None:
    x = make([0.25, 0.5], device, ember.float64).requires_grad_()
    with pytest.raises(RuntimeError, match="leaf Variable"):
        getattr(x, name + "_")()
    with pytest.raises(RuntimeError, match="leaf Variable"):
        getattr(x[:1], name + "_")()
    with ember.no_grad():
        getattr(x, name + "_")()  # allowed outside autograd, as in PyTorch


GRAD_UNARY = ["acos", "atan", "sinh", "tan", "log10", "exp2", "sinc", "logit", "frac",
              "deg2rad", "nan_to_num", "square", "reciprocal", "expm1"]  # fmt: skip


@pytest.mark.parametrize("name", GRAD_UNARY)
def test_unary_inplace_inside_a_graph(device: str, name: str, rng) -> None:
    values = _values(name, rng, (5,)) * 0.9 + 0.05
    weights = rng.uniform(-1, 1, (5,))
    x = make(values, device, ember.float64).requires_grad_()
    y = x * 2.0 if name != "logit" else x * 1.0
    getattr(y, name + "_")()
    (y * make(weights, device)).sum().backward()
    tx = torch.tensor(values, requires_grad=True)
    ty = tx * 2.0 if name != "logit" else tx * 1.0
    getattr(ty, name + "_")()
    (ty * torch.tensor(weights)).sum().backward()
    assert x.grad is not None
    assert_close(x.grad, tx.grad.numpy(), ember.float64)


# -- binary --------------------------------------------------------------------------------


def _pair(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    a = rng.uniform(0.5, 2.0, (3, 4)) * rng.choice([-1, 1], (3, 4))
    b = rng.uniform(0.5, 2.0, (4,)) * rng.choice([-1, 1], (4,))
    return a, b


#: name -> (ember call, torch call) on (t, other), both in place
BINARY: dict[str, Any] = {
    name: (
        lambda t, o, name=name: getattr(t, name + "_")(o),
        lambda t, o, name=name: getattr(t, name + "_")(o),
    )
    for name in ["atan2", "arctan2", "hypot", "copysign", "nextafter", "fmod", "remainder",
                 "floor_divide", "xlogy", "multiply", "subtract", "divide", "true_divide",
                 "clamp_min", "clamp_max", "eq", "ne", "lt", "le", "gt", "ge", "greater",
                 "greater_equal", "less", "less_equal", "not_equal", "logical_and",
                 "logical_or", "logical_xor"]
}  # fmt: skip
BINARY["lerp"] = (lambda t, o: t.lerp_(o, 0.3), lambda t, o: t.lerp_(o, 0.3))
BINARY["addcmul"] = (lambda t, o: t.addcmul_(o, o, value=2), lambda t, o: t.addcmul_(o, o, value=2))
BINARY["addcdiv"] = (lambda t, o: t.addcdiv_(o, t), lambda t, o: t.addcdiv_(o, t))
BINARY["clip"] = (lambda t, o: t.clip_(o * 0 - 1, o), lambda t, o: t.clip_(o * 0 - 1, o))
BINARY["divide_floor"] = (
    lambda t, o: t.divide_(o, rounding_mode="floor"),
    lambda t, o: t.divide_(o, rounding_mode="floor"),
)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_inplace_matches_torch(device: str, name: str, rng) -> None:
    a, b = _pair(rng)
    if name == "xlogy":
        b = np.abs(b)
    ours, theirs = BINARY[name]
    t = make(a, device)
    assert ours(t, make(b, device)) is t
    want = torch.tensor(a)
    theirs(want, torch.tensor(b))
    assert_close(t, want.numpy(), ember.float64)


@pytest.mark.parametrize("name", ["atan2", "xlogy", "copysign", "hypot", "fmod", "ldexp"])
def test_binary_inplace_function_forms(device: str, name: str, rng) -> None:
    a, b = _pair(rng)
    a, b = np.abs(a), (np.round(b) if name == "ldexp" else b)
    t = make(a, device)
    assert getattr(ember, name + "_")(t, make(b, device)) is t
    want = getattr(torch.tensor(a), name + "_")(torch.tensor(b))
    assert_close(t, want.numpy(), ember.float64)


def test_comparison_inplace_keeps_the_dtype(device: str) -> None:
    t = make([1.0, 2.0, 3.0], device)
    t.lt_(2.5)
    assert t.dtype is ember.float32
    np.testing.assert_array_equal(host(t), [1.0, 1.0, 0.0])
    i = make([1, 5, 3], device)
    ember.ge_(i, 3)
    np.testing.assert_array_equal(host(i), [0, 1, 1])


@pytest.mark.parametrize("dtype", [ember.int64, ember.int8, ember.uint8], ids=pid)
def test_integer_inplace_ops(device: str, dtype: ember.dtype, rng) -> None:
    a = rng.integers(1, 20, (3, 4)).astype(dtype.numpy)
    b = rng.integers(1, 4, (4,)).astype(dtype.numpy)
    for name in ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                 "bitwise_right_shift", "gcd", "lcm", "remainder", "floor_divide"]:  # fmt: skip
        t, want = make(a, device), torch.tensor(a)
        getattr(t, name + "_")(make(b, device))
        getattr(want, name + "_")(torch.tensor(b))
        np.testing.assert_array_equal(host(t), want.numpy(), err_msg=name)
    t, want = make(a, device), torch.tensor(a)
    t.bitwise_not_()
    want.bitwise_not_()
    np.testing.assert_array_equal(host(t), want.numpy())
    t <<= 1
    np.testing.assert_array_equal(host(t), (want << 1).numpy())


def test_inplace_needing_promotion_raises_and_keeps_values(device: str) -> None:
    for call in (
        lambda t: t.atan2_(make([1.0, 1.0], device)),
        lambda t: t.xlogy_(2.0),
        lambda t: t.hypot_(make([1.0, 2.0], device)),
        lambda t: t.lerp_(make([1.0, 2.0], device), 0.5),
        lambda t: t.float_power_(2),
        lambda t: t.clamp_min_(0.5),
    ):
        t = make([1, 2], device)
        with pytest.raises(RuntimeError):
            call(t)
        np.testing.assert_array_equal(host(t), [1, 2])
    with pytest.raises(RuntimeError, match="float64"):
        make([1.0, 2.0], device).float_power_(2)
    t = make([1.0, 2.0], device, ember.float64)
    t.float_power_(2)
    np.testing.assert_array_equal(host(t), [1.0, 4.0])


def test_inplace_broadcast_to_a_larger_shape_raises(device: str) -> None:
    t = make([1.0, 2.0, 3.0], device)
    with pytest.raises(RuntimeError, match="shape"):
        t.atan2_(make(np.ones((2, 3)), device))
    with pytest.raises(RuntimeError, match="shape"):
        t.lerp_(make(np.ones((2, 3), np.float32), device), 0.5)
    np.testing.assert_array_equal(host(t), [1.0, 2.0, 3.0])


def test_binary_inplace_on_a_view_writes_the_base(device: str, rng) -> None:
    a, b = _pair(rng)
    base = make(a, device)
    base[:, 1].atan2_(make(b[:3], device))
    base[0].lerp_(make(b, device), 0.25)
    want = torch.tensor(a)
    want[:, 1].atan2_(torch.tensor(b[:3]))
    want[0].lerp_(torch.tensor(b), 0.25)
    assert_close(base, want.numpy(), ember.float64)


@pytest.mark.parametrize("name", ["atan2", "hypot", "copysign", "xlogy", "lerp", "addcmul",
                                  "addcdiv", "clamp_min"])  # fmt: skip
def test_binary_inplace_inside_a_graph(device: str, name: str, rng) -> None:
    a, b = _pair(rng)
    a, b = np.abs(a), b[None, :].repeat(3, 0)
    calls = {
        "lerp": lambda t, o: t.lerp_(o, o * 0.5),
        "addcmul": lambda t, o: t.addcmul_(o, o, value=0.5),
        "addcdiv": lambda t, o: t.addcdiv_(o, t * 1.0 + 3.0),
        "clamp_min": lambda t, o: t.clamp_min_(o),
    }
    call = calls.get(name, lambda t, o: getattr(t, name + "_")(o))
    grads = []
    for wrap in (lambda v: make(v, device, ember.float64), torch.tensor):
        x, y = wrap(a).requires_grad_(), wrap(b).requires_grad_()
        z = x * 1.5
        call(z, y)
        (z * z).sum().backward()
        grads.append((x.grad, y.grad))
    (gx, gy), (tx, ty) = grads
    assert_close(gx, tx.numpy(), ember.float64)
    assert_close(gy, ty.numpy(), ember.float64)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        call(make(a, device, ember.float64).requires_grad_(), make(b, device))
