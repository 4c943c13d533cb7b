"""The cpu device's fused softmax and log_softmax kernels against NumPy float64.

Kernels are called directly (output first) on contiguous, transposed and stepped inputs of
every floating dtype, along every dim, so that each of the C side's three loops runs
(contiguous rows, columns side by side, strided rows); then the edge values (-inf, +inf,
NaN, huge magnitudes), zero-size and 0-d inputs, the thread split, and the gradients that
ember.nn.functional records around the kernels, against finite differences.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember._tensor import Tensor, empty_tensor

from ._layouts import CPU, kernel, tensor

FLOATS = ["float16", "float32", "float64"]
LAYOUTS = ["contiguous", "transposed", "stepped"]
KINDS = ["softmax", "log_softmax"]
# Tolerances relative to the value, and to the row's spread for log_softmax, whose
# x - max carries the rounding of x.
RTOL = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-13}

# (shape, dim): with the layouts above these reach every loop of csrc/softmax.c.
CASES = [
    ((7,), 0),
    ((5, 9), 1),
    ((5, 9), 0),
    ((3, 40), 0),  # columns when contiguous
    ((40, 3), 1),
    ((2, 6, 4, 5), 1),  # columns over the 20 trailing positions
    ((2, 6, 4, 5), 3),
    ((2, 6, 4, 5), -4),
    ((4, 1, 17), 1),  # a dim of size 1
    ((1, 33), 0),
]


def reference(kind: str, arr: np.ndarray, dim: int) -> np.ndarray:
    """Softmax or log-softmax in float64; NaN rows where PyTorch gives NaN."""
    x = arr.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        shifted = x - x.max(axis=dim, keepdims=True)
        total = np.exp(shifted).sum(axis=dim, keepdims=True)
        return shifted - np.log(total) if kind == "log_softmax" else np.exp(shifted) / total


def run(kind: str, a: Tensor, dim: int) -> np.ndarray:
    out = empty_tensor(a._shape, a._dtype, CPU)
    kernel(kind)(out, a, dim % a.ndim if a.ndim else 0)
    return out.numpy().copy()


def assert_matches(got: np.ndarray, want: np.ndarray, kind: str, arr: np.ndarray, dim: int) -> None:
    assert got.shape == want.shape and got.dtype == arr.dtype
    rtol = RTOL[arr.dtype.name]
    wide = got.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(wide), np.isnan(want))
    infinite = np.isinf(want)  # log_softmax of a -inf entry
    np.testing.assert_array_equal(wide[infinite], want[infinite])
    finite = np.isfinite(want)
    if kind == "softmax":
        atol = rtol * np.ones_like(want)
    else:
        x = np.where(np.isfinite(arr), arr.astype(np.float64), 0)
        spread = np.abs(x).max(axis=dim, keepdims=True) if x.size else x
        atol = rtol * (1 + np.broadcast_to(spread, want.shape))
    assert np.all(np.abs(wide[finite] - want[finite]) <= atol[finite] + rtol * np.abs(want[finite]))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_kernels_match_numpy(kind: str, name: str, layout: str) -> None:
    rng = np.random.default_rng(0)
    for shape, dim in CASES:
        arr = (3 * rng.standard_normal(shape)).astype(name)
        got = run(kind, tensor(arr, layout), dim)
        assert_matches(got, reference(kind, arr, dim), kind, arr, dim)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize(
    "shape, dim",
    [((2, 5000), 1), ((5000, 2), 0), ((3, 2100), 0), ((2100, 3), 1), ((9, 3, 700), 0)],
)
def test_long_rows_and_wide_columns(kind: str, name: str, shape: tuple, dim: int) -> None:
    """Rows past one summing block (and float16's conversion chunk), column sets past
    one chunk of side-by-side rows."""
    arr = (4 * np.random.default_rng(1).standard_normal(shape)).astype(name)
    for layout in ("contiguous", "transposed"):
        got = run(kind, tensor(arr, layout), dim)
        assert_matches(got, reference(kind, arr, dim), kind, arr, dim)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", FLOATS)
def test_every_short_row_length(kind: str, name: str) -> None:
    """Lengths around the vector width: whole vectors, scalar tails, and both."""
    rng = np.random.default_rng(7)
    for n in range(1, 50):
        arr = (3 * rng.standard_normal((3, n))).astype(name)
        assert_matches(run(kind, tensor(arr), 1), reference(kind, arr, 1), kind, arr, 1)


def special_rows(name: str) -> np.ndarray:
    """20 rows of 40: all -inf, some -inf, a +inf, a NaN, huge magnitudes, then normal."""
    huge = 3e4 if name == "float16" else 1e30  # x - max stays finite in float16
    arr = np.random.default_rng(2).standard_normal((20, 40))
    arr[0] = -np.inf
    arr[1, ::3] = -np.inf
    arr[2, 5] = np.inf
    arr[3, 7] = np.nan
    arr[4, :] = np.linspace(-huge, huge, 40)
    arr[5, :] = huge
    arr[5, 9] = -huge
    arr[6, :39] = -np.inf  # one finite element: softmax 1, log-softmax 0 there
    return arr.astype(name)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", FLOATS)
def test_infinities_nan_and_huge_values(kind: str, name: str) -> None:
    arr = special_rows(name)
    for layout in LAYOUTS:  # rows contiguous, rows strided
        assert_matches(run(kind, tensor(arr, layout), 1), reference(kind, arr, 1), kind, arr, 1)
    columns = np.ascontiguousarray(arr.T)  # the same rows as 20 side-by-side columns
    assert_matches(run(kind, tensor(columns), 0), reference(kind, columns, 0), kind, columns, 0)
    got = run(kind, tensor(arr), 1)
    assert np.isnan(got).any(axis=1).tolist() == [True, False, True, True] + [False] * 16
    zero = 0 if kind == "softmax" else -np.inf
    assert (got[1, ::3] == zero).all() and np.isfinite(got[1, 1::3]).all()
    assert (got[6, :39] == zero).all() and got[6, 39] == (1 if kind == "softmax" else 0)


@pytest.mark.parametrize("kind", KINDS)
def test_special_rows_match_torch(kind: str) -> None:
    torch = pytest.importorskip("torch")
    arr = special_rows("float32")
    want = getattr(torch, kind)(torch.from_numpy(arr), 1).numpy()
    got = run(kind, tensor(arr), 1)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape, dim", [((0, 5), 1), ((5, 0), 1), ((5, 0), 0), ((2, 0, 3), 0)])
def test_zero_size_inputs(kind: str, shape: tuple, dim: int) -> None:
    for layout in ("contiguous", "transposed"):
        assert run(kind, tensor(np.ones(shape, np.float32), layout), dim).shape == shape
    assert getattr(F, kind)(ember.ones(*shape), dim).shape == shape


@pytest.mark.parametrize("name", FLOATS)
def test_zero_dim_input(name: str) -> None:
    arr = np.array(2.5, name)
    assert run("softmax", tensor(arr), 0) == 1
    assert run("log_softmax", tensor(arr), 0) == 0


def test_integer_input_is_rejected() -> None:
    with pytest.raises(RuntimeError, match=r"softmax: .*floating"):
        run("softmax", tensor(np.arange(6, dtype=np.int32).reshape(2, 3)), 0)


def test_too_many_dims() -> None:
    with pytest.raises(RuntimeError, match="at most 16 dims"):
        run("log_softmax", tensor(np.ones((1,) * 17, np.float32)), 0)


@pytest.fixture
def threads() -> Iterator[Callable[[int], None]]:
    before = ember.get_num_threads()
    try:
        yield ember.set_num_threads
    finally:
        ember.set_num_threads(before)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape, dim", [((300, 200), 1), ((200, 300), 0), ((300, 200), 0)])
def test_results_do_not_depend_on_threads(
    kind: str, shape: tuple, dim: int, threads: Callable[[int], None]
) -> None:
    """Above the parallel grain: rows, column chunks and strided rows split across threads."""
    arr = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    results = []
    for count in (3, 1):
        threads(count)
        results.append(run(kind, tensor(arr, "stepped" if dim == 0 else "contiguous"), dim))
    np.testing.assert_array_equal(results[0], results[1])
    assert_matches(results[0], reference(kind, arr, dim), kind, arr, dim)


# -- the functional ops around the kernels ---------------------------------------------------


def test_functional_ops_use_the_fused_kernels() -> None:
    assert kernel("softmax").__name__ == "cpu_softmax"
    assert kernel("log_softmax").__name__ == "cpu_log_softmax"


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_gradients_match_finite_differences(fn: Any, dim: int) -> None:
    x = np.random.default_rng(4).standard_normal((3, 4, 5))
    t = ember.tensor(x, dtype=ember.float64).requires_grad_()
    assert ember.autograd.gradcheck(lambda a: fn(a, dim), (t,), eps=1e-6, atol=1e-7, rtol=1e-5)


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
def test_gradients_of_non_contiguous_inputs(fn: Any) -> None:
    x = np.random.default_rng(5).standard_normal((6, 4))
    t = ember.tensor(x, dtype=ember.float64).requires_grad_()
    assert ember.autograd.gradcheck(lambda a: fn(a.t(), 1), (t,), eps=1e-6, atol=1e-7, rtol=1e-5)
    second = ember.autograd.gradgradcheck
    assert second(lambda a: fn(a.t(), 0), (t,), eps=1e-6, atol=1e-6, rtol=1e-4)


def test_cross_entropy_gradient_runs_through_log_softmax() -> None:
    x = np.random.default_rng(6).standard_normal((5, 7))
    target = ember.tensor(np.array([0, 3, 6, 2, 2]))
    t = ember.tensor(x, dtype=ember.float64).requires_grad_()
    F.cross_entropy(t, target).backward()
    shifted = x - x.max(axis=1, keepdims=True)
    probabilities = np.exp(shifted) / np.exp(shifted).sum(axis=1, keepdims=True)
    probabilities[np.arange(5), [0, 3, 6, 2, 2]] -= 1
    assert t.grad is not None
    np.testing.assert_allclose(t.grad.numpy(), probabilities / 5, rtol=1e-12, atol=1e-15)
