"""The composites of the smallest primitive set, run for real.

cpu registers its own kernels for every composite op, so each test here removes the
device's kernel of the ops under test (`composites` below) and compares what the composite
computes against a NumPy float64 reference written from the documented semantics, and
against the device's own kernel; gradients go through the composites too (gradcheck on
finite differences, and the native backward).
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember._dispatch import OPS, Op
from ember._ops import names
from ember.autograd import gradcheck
from ember.testing.ops._reference import FLOATS, INTS, assert_close, host, laid_out, make

COMPOSITE_OPS: dict[str, Op] = {
    op.name: op
    for op in (
        names.MM, names.REDUCTIONS["any"], names.REDUCTIONS["all"], names.TAKE,
        names.INDEX_SELECT, names.SCATTER, names.SCATTER_ADD, names.MAX_POOL2D,
        names.MAX_POOL2D_BACKWARD, names.AVG_POOL2D, names.AVG_POOL2D_BACKWARD,
        names.ADAPTIVE_AVG_POOL2D, names.ADAPTIVE_AVG_POOL2D_BACKWARD,
    )
}  # fmt: skip


# cpu unless EMBER_TEST_DEVICES names others (as for the conformance suite).
DEVICES = [
    name.strip() for name in os.environ.get("EMBER_TEST_DEVICES", "cpu").split(",") if name.strip()
]


@pytest.fixture(params=DEVICES)
def device(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@contextlib.contextmanager
def composites(device: str) -> Iterator[None]:
    """Within: the device runs every op of COMPOSITE_OPS through its composite."""
    kind = ember.device(device).type
    removed = {op: op.kernels.pop(kind) for op in COMPOSITE_OPS.values() if kind in op.kernels}
    try:
        yield
    finally:
        for op, kernel in removed.items():
            op.kernels[kind] = kernel


def native_and_composite(device: str, fn: Callable[[], Any]) -> tuple[Any, Any]:
    """fn() with the device's own kernels, then through the composites."""
    native = fn()
    with composites(device):
        return native, fn()


def same(a: Any, b: Any) -> None:
    """The composite's result equals the native kernel's (float: within its tolerance)."""
    pairs = zip(a, b, strict=True) if isinstance(a, tuple) else [(a, b)]
    for x, y in pairs:
        assert x.dtype is y.dtype and tuple(x.shape) == tuple(y.shape)
        assert_close(y, host(x).astype(np.float64) if x.dtype.is_floating_point else host(x))


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


def values(shape: tuple[int, ...], dt: ember.dtype, rng: np.random.Generator) -> np.ndarray:
    if dt is ember.bool:
        return rng.random(shape) < 0.5
    if dt.is_floating_point:
        return rng.standard_normal(shape).astype(dt.numpy)
    low = 0 if dt is ember.uint8 else -5
    return rng.integers(low, 6, size=shape).astype(dt.numpy)


# -- the primitive set ----------------------------------------------------------------------

ELEMENTWISE = {*ember.plugins.ops.UNARY, *ember.plugins.ops.BINARY, "where", "copy_"}
HAND_WRITTEN = {
    "fill_", "arange_", "sum", "prod", "amax", "amin", "argmax", "argmin", "cumsum", "bmm",
    "gather", "index_put_", "nonzero", "uniform_", "normal_", "random_", "randperm_",
    "im2col", "col2im",
}  # fmt: skip


def test_the_hand_written_primitives_are_the_smallest_set() -> None:
    primitives = {name for name, op in OPS.items() if not op.composite}
    assert primitives - ELEMENTWISE == HAND_WRITTEN
    assert all(op.composite for op in COMPOSITE_OPS.values())


def test_cpu_keeps_its_own_kernel_of_every_composite() -> None:
    """cpu's speed is unchanged: its kernels override the composites."""
    from ember._dispatch import REGISTRY

    ember.ones(1)  # loads the plugins
    assert set(COMPOSITE_OPS) <= set(REGISTRY.coverage("cpu").native)
    with composites("cpu"):
        assert not any("cpu" in op.kernels for op in COMPOSITE_OPS.values())
    assert all("cpu" in op.kernels for op in COMPOSITE_OPS.values())


# -- mm -------------------------------------------------------------------------------------

MM_DTYPES = (*FLOATS, ember.int32, ember.int64)


# (layout of a, (m, k, n)); an expanded a needs two rows to repeat one.
MM_CASES = [
    (layout, mkn)
    for layout in ("contiguous", "transposed", "strided", "expanded")
    for mkn in ((3, 4, 5), (1, 1, 1), (0, 3, 2), (2, 0, 3), (4, 3, 0))
    if layout != "expanded" or mkn[0] >= 2
]


@pytest.mark.parametrize("dt", MM_DTYPES, ids=str)
@pytest.mark.parametrize(("layout", "mkn"), MM_CASES)
def test_mm(device: str, dt: ember.dtype, layout: str, mkn: tuple[int, int, int],
            rng: np.random.Generator) -> None:  # fmt: skip
    m, k, n = mkn
    a, a_values = laid_out(values((m, k), dt, rng), layout, device)
    b, b_values = laid_out(values((k, n), dt, rng), "transposed", device)
    native, composite = native_and_composite(device, lambda: ember.mm(a, b))
    expected = a_values.astype(np.float64) @ b_values.astype(np.float64)
    assert_close(composite, expected, dt, rtol=2e-2 if dt is ember.float16 else None)
    same(native, composite)


def test_mm_out_and_matmul_shapes(device: str, rng: np.random.Generator) -> None:
    a = make(values((3, 4), ember.float64, rng), device)
    b = make(values((4, 2), ember.float64, rng), device)
    v = make(values((4,), ember.float64, rng), device)
    out = ember.empty(2, 3, dtype=ember.float64, device=device).t()
    with composites(device):
        ember.mm(a, b, out=out)
        assert_close(out, host(a) @ host(b))
        assert_close(a @ v, host(a) @ host(v))
        assert_close(v @ v, host(v) @ host(v))


def test_mm_gradients(device: str, rng: np.random.Generator) -> None:
    a = make(values((3, 4), ember.float64, rng), device).requires_grad_()
    b = make(values((4, 2), ember.float64, rng), device).requires_grad_()
    with composites(device):
        assert gradcheck(ember.mm, (a, b))


def test_mm_without_bmm_names_the_primitive(device: str) -> None:
    kind = ember.device(device).type
    a = ember.ones(2, 2, device=device)
    bmm = names.BMM.kernels.pop(kind)
    try:
        with composites(device), pytest.raises(NotImplementedError, match="bmm"):
            ember.mm(a, a)
    finally:
        names.BMM.kernels[kind] = bmm


# -- any / all ------------------------------------------------------------------------------

LOGICAL_CASES = [
    ((), None), ((0,), None), ((3, 0), 1), ((3, 0), 0), ((2, 3, 4), None), ((2, 3, 4), 1),
    ((2, 3, 4), (0, 2)), ((2, 3, 4), -1), ((5,), 0),
]  # fmt: skip


@pytest.mark.parametrize("name", ["any", "all"])
@pytest.mark.parametrize("dt", [ember.bool, *INTS, *FLOATS], ids=str)
@pytest.mark.parametrize(("shape", "dim"), LOGICAL_CASES)
@pytest.mark.parametrize("keepdim", [False, True])
def test_any_all(device: str, name: str, dt: ember.dtype, shape: tuple[int, ...], dim: Any,
                 keepdim: bool, rng: np.random.Generator) -> None:  # fmt: skip
    data = values(shape, dt, rng)
    if dt.is_floating_point and data.size:
        data.flat[0] = np.nan  # NaN is non-zero: true
        data.flat[-1] = 0.0
    layout = "transposed" if len(shape) >= 2 else "contiguous"
    t, data = laid_out(data, layout, device)
    fn = getattr(ember, name)

    def call() -> ember.Tensor:
        return fn(t) if dim is None else fn(t, dim, keepdim)

    native, composite = native_and_composite(device, call)
    axis = None if dim is None else dim
    expected = getattr(np, name)(data != 0, axis=axis, keepdims=keepdim and dim is not None)
    out_dtype = ember.uint8 if dt is ember.uint8 else ember.bool
    assert_close(composite, expected, out_dtype)
    same(native, composite)


# -- take / index_select ----------------------------------------------------------------------


@pytest.mark.parametrize("dt", [ember.bool, *INTS, *FLOATS], ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided", "expanded"])
def test_take(device: str, dt: ember.dtype, layout: str, rng: np.random.Generator) -> None:
    t, data = laid_out(values((3, 4), dt, rng), layout, device)
    index = np.array([[0, 11, -1], [5, 5, -12]])
    native, composite = native_and_composite(device, lambda: ember.take(t, make(index, device)))
    assert_close(composite, data.reshape(-1)[index], dt)
    same(native, composite)


def test_take_edges(device: str) -> None:
    scalar = make(np.float32(3.5), device)
    empty = make(np.zeros((0,), np.int64), device)
    with composites(device):
        assert_close(ember.take(scalar, make([0, 0, -1], device)), [3.5, 3.5, 3.5])
        assert tuple(ember.take(make(np.ones((2, 0)), device), empty).shape) == (0,)
        with pytest.raises(IndexError, match="out of range"):
            ember.take(scalar, make([1], device))


@pytest.mark.parametrize("dt", [ember.bool, *INTS, *FLOATS], ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided", "expanded"])
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_index_select(device: str, dt: ember.dtype, layout: str, dim: int,
                      rng: np.random.Generator) -> None:  # fmt: skip
    t, data = laid_out(values((3, 4, 5), dt, rng), layout, device)
    positions = np.array([2, 0, 2, 1, 0, 1])
    # A strided index: every other element of a longer one.
    index = make(np.repeat(positions, 2), device)[::2]
    native, composite = native_and_composite(device, lambda: ember.index_select(t, dim, index))
    assert_close(composite, np.take(data, positions, axis=dim), dt)
    same(native, composite)


def test_index_select_edges_and_advanced_indexing(device: str, rng: np.random.Generator) -> None:
    data = values((4, 5), ember.float32, rng)
    t = make(data, device)
    with composites(device):
        assert_close(ember.index_select(make(np.float32(2.0), device), 0, make([0], device)), 2.0)
        assert tuple(ember.index_select(t, 1, make(np.zeros(0, np.int64), device)).shape) == (4, 0)
        rows = np.array([[3, 0], [1, 1]])
        assert_close(t[make(rows, device)], data[rows])
        assert_close(t[:, make([4, -1, 0], device)], data[:, [4, -1, 0]])
        assert_close(t[make([0, 3], device), make([1, 4], device)], data[[0, 3], [1, 4]])


# -- scatter_ / scatter_add_ -------------------------------------------------------------------


def scatter_reference(target: np.ndarray, dim: int, index: np.ndarray, src: np.ndarray,
                      add: bool) -> np.ndarray:  # fmt: skip
    out = target.copy()
    for position in itertools.product(*(range(n) for n in index.shape)):
        at = list(position)
        at[dim] = index[position]
        if add:
            out[tuple(at)] += src[position]
        else:
            out[tuple(at)] = src[position]
    return out


@pytest.mark.parametrize("add", [False, True], ids=["scatter_", "scatter_add_"])
@pytest.mark.parametrize("dt", [*INTS, *FLOATS], ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("target_layout", ["contiguous", "transposed"])
def test_scatter(device: str, add: bool, dt: ember.dtype, dim: int, target_layout: str,
                 rng: np.random.Generator) -> None:  # fmt: skip
    shape = (4, 5, 3)
    index_shape = (3, 4, 2)
    dim %= 3
    if add:  # duplicates on purpose: they add up
        index = rng.integers(0, shape[dim], size=index_shape)
    else:  # distinct positions along dim (which duplicate wins is unspecified)
        wide = (*index_shape[:dim], shape[dim], *index_shape[dim + 1 :])
        index = np.argsort(rng.random(wide), axis=dim).take(range(index_shape[dim]), axis=dim)
    base = values(shape, dt, rng)
    src_values = values((4, 5, 4), dt, rng)  # larger than index: cut to it

    def run() -> ember.Tensor:
        target, _ = laid_out(base, target_layout, device)
        src, _ = laid_out(src_values, "strided", device)
        method = target.scatter_add_ if add else target.scatter_
        result = method(dim, make(index, device), src)
        assert result is target
        return target

    native, composite = native_and_composite(device, run)
    expected = scatter_reference(base.astype(np.float64), dim, index, src_values, add)
    assert_close(composite, expected, dt)
    same(native, composite)


def test_scatter_scalar_and_edges(device: str) -> None:
    index = make([[0, 2], [1, 0]], device)
    with composites(device):
        out = ember.zeros(2, 3, device=device).scatter(1, index, 7.0)
        assert_close(out, [[7.0, 0.0, 7.0], [7.0, 7.0, 0.0]])
        zero_d = make(np.float32(1.0), device).scatter_add(
            0, make(np.int64(0), device), make(np.float32(2.0), device)
        )
        assert_close(zero_d, 3.0)
        empty = make(np.zeros((2, 0), np.int64), device)
        assert_close(ember.ones(2, 3, device=device).scatter(1, empty, 5.0), np.ones((2, 3)))
        with pytest.raises(IndexError, match="out of bounds"):
            ember.zeros(2, 3, device=device).scatter(1, make([[3]], device), 1.0)


def test_gather_scatter_gradients(device: str, rng: np.random.Generator) -> None:
    x = make(values((3, 4), ember.float64, rng), device).requires_grad_()
    src = make(values((2, 4), ember.float64, rng), device).requires_grad_()
    index = make([[0, 1, 2, 0], [2, 0, 1, 1]], device)
    with composites(device):
        assert gradcheck(lambda t: t.gather(0, index), (x,))
        assert gradcheck(lambda t, s: t.scatter_add(0, index, s), (x, src))
        assert gradcheck(lambda t, s: t.scatter(0, index[:1], s), (x, src))
        assert gradcheck(lambda t: ember.take(t, make([5, 5, 0], device)), (x,))
        assert gradcheck(lambda t: ember.index_select(t, 1, make([3, 3, 1], device)), (x,))
        assert gradcheck(lambda t: t[make([2, 0, 2], device)], (x,))


# -- pooling: references from the documented rules ---------------------------------------------

Pair = tuple[int, int]


def max_pool_reference(x: np.ndarray, out_hw: Pair, k: Pair, s: Pair, p: Pair,
                       d: Pair) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The first maximum of each window, or its last NaN; indices y * W + x."""
    n, c, h, w = x.shape
    values = np.zeros((n, c, *out_hw))
    indices = np.zeros((n, c, *out_hw), np.int64)
    for b, ch, oy, ox in itertools.product(range(n), range(c), *map(range, out_hw)):
        best, at = -np.inf, -1
        for i, j in itertools.product(range(k[0]), range(k[1])):
            y, xx = oy * s[0] - p[0] + i * d[0], ox * s[1] - p[1] + j * d[1]
            if not (0 <= y < h and 0 <= xx < w):
                continue
            v = float(x[b, ch, y, xx])
            if at < 0 or v > best or v != v:
                best, at = v, y * w + xx
        values[b, ch, oy, ox], indices[b, ch, oy, ox] = best, at
    return values, indices


def avg_pool_reference(x: np.ndarray, out_hw: Pair, k: Pair, s: Pair, p: Pair,
                       count_include_pad: bool, divisor: int | None) -> np.ndarray:  # fmt: skip
    n, c, h, w = x.shape
    integer = x.dtype.kind in "iu"
    out = np.zeros((n, c, *out_hw), np.int64 if integer else np.float64)
    for oy, ox in itertools.product(*map(range, out_hw)):
        y0, x0 = oy * s[0] - p[0], ox * s[1] - p[1]
        y1, x1 = min(y0 + k[0], h + p[0]), min(x0 + k[1], w + p[1])
        padded = (y1 - y0) * (x1 - x0)
        y0, x0, y1, x1 = max(y0, 0), max(x0, 0), min(y1, h), min(x1, w)
        if y0 >= y1 or x0 >= x1:
            continue
        by = divisor or (padded if count_include_pad else (y1 - y0) * (x1 - x0))
        total = x[:, :, y0:y1, x0:x1].astype(np.int64 if integer else np.float64).sum((2, 3))
        out[:, :, oy, ox] = np.sign(total) * (np.abs(total) // by) if integer else total / by
    return out


def adaptive_reference(x: np.ndarray, out_hw: Pair) -> np.ndarray:
    h, w = x.shape[-2:]
    out = np.zeros((*x.shape[:-2], *out_hw))
    for i, j in itertools.product(*map(range, out_hw)):
        rows = slice(i * h // out_hw[0], -(-(i + 1) * h // out_hw[0]))
        cols = slice(j * w // out_hw[1], -(-(j + 1) * w // out_hw[1]))
        out[..., i, j] = x[..., rows, cols].astype(np.float64).mean((-2, -1))
    return out


def pair(v: Any) -> Pair:
    return (v, v) if isinstance(v, int) else tuple(v)


# kernel_size, stride, padding, dilation, ceil_mode
MAX_GEOMETRIES = [
    (2, None, 0, 1, False), (3, 2, 1, 1, False), (3, 2, 1, 1, True),
    ((3, 2), (2, 1), (1, 0), (2, 1), True), (2, 3, 1, 1, True), (1, 1, 0, 1, False),
    ((2, 3), 2, (1, 1), (1, 2), False),
]  # fmt: skip


@pytest.mark.parametrize("dt", [*FLOATS, *INTS], ids=str)
@pytest.mark.parametrize("geometry", MAX_GEOMETRIES, ids=str)
def test_max_pool2d(device: str, dt: ember.dtype, geometry: tuple[Any, ...],
                    rng: np.random.Generator) -> None:  # fmt: skip
    k, s, p, d, ceil_mode = geometry
    if dt.is_floating_point:
        data = rng.choice([-2.0, -1.0, 0.5, 2.0, -np.inf, np.nan], size=(2, 3, 7, 6))
        data[0, 0] = -np.inf  # a plane of -inf: each index is the window's first pixel
        data[0, 1] = np.nan  # all NaN: the last NaN of each window
        data = data.astype(dt.numpy)
    else:
        data = rng.integers(0 if dt is ember.uint8 else -3, 3, size=(2, 3, 7, 6)).astype(dt.numpy)
        data[1, 2] = np.iinfo(dt.numpy).min  # the dtype's lowest everywhere: the padding's value
    x = make(data, device)

    def run() -> tuple[ember.Tensor, ember.Tensor]:
        return F.max_pool2d(x, k, s, p, d, ceil_mode, return_indices=True)

    native, composite = native_and_composite(device, run)
    out_hw = tuple(composite[0].shape[2:])
    s = k if s is None else s
    want, want_indices = max_pool_reference(data, out_hw, pair(k), pair(s), pair(p), pair(d))
    assert_close(composite[0], want, dt)
    assert_close(composite[1], want_indices, ember.int64)
    same(native, composite)


def test_max_pool2d_unbatched_strided_and_empty(device: str, rng: np.random.Generator) -> None:
    data = rng.standard_normal((3, 8, 6)).astype(np.float32)
    x = make(np.ascontiguousarray(data.transpose(0, 2, 1)), device).transpose(1, 2)
    with composites(device):
        out, idx = F.max_pool2d(x, 2, return_indices=True)
        want, want_idx = max_pool_reference(data[None], (4, 3), (2, 2), (2, 2), (0, 0), (1, 1))
        assert_close(out, want[0])
        assert_close(idx, want_idx[0])
        empty = F.max_pool2d(ember.zeros(0, 2, 4, 4, device=device), 2)
        assert tuple(empty.shape) == (0, 2, 2, 2)


@pytest.mark.parametrize("geometry", MAX_GEOMETRIES[:4], ids=str)
def test_max_pool2d_gradients(device: str, geometry: tuple[Any, ...],
                              rng: np.random.Generator) -> None:  # fmt: skip
    # Distinct values: finite differences never cross a tie.
    data = rng.permutation(2 * 7 * 6).reshape(1, 2, 7, 6).astype(np.float64) / 10
    x = make(data, device).requires_grad_()

    def pool(t: ember.Tensor) -> ember.Tensor:
        return F.max_pool2d(t, *geometry)

    with composites(device):
        assert gradcheck(pool, (x,))
    native, composite = native_and_composite(device, lambda: _grad(pool, x))
    same(native, composite)


def _grad(fn: Callable[[ember.Tensor], ember.Tensor], x: ember.Tensor) -> ember.Tensor:
    """d/dx of sum(fn(x) * w) for a fixed w of distinct weights."""
    (grad,) = ember.autograd.grad(_weighted(fn(x)), x)
    assert grad is not None
    return grad


def _weighted(out: ember.Tensor) -> ember.Tensor:
    weights = ember.arange(out.numel(), dtype=out.dtype, device=out.device).reshape(out.shape)
    return (out * (weights + 1.0)).sum()


def test_max_pool2d_gradient_goes_to_the_one_returned_index(device: str) -> None:
    x = make(np.ones((1, 1, 2, 2)), device).requires_grad_()
    with composites(device):
        F.max_pool2d(x, 2).sum().backward()
    assert_close(x.grad, [[[[1.0, 0.0], [0.0, 0.0]]]])


# kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
AVG_GEOMETRIES = [
    (2, None, 0, False, True, None), (3, 2, 1, False, True, None), (3, 2, 1, True, True, None),
    (3, 2, 1, True, False, None), ((3, 2), (2, 1), (1, 0), True, True, 5),
    ((2, 4), 3, (1, 2), True, False, None), (1, 1, 0, False, True, 3),
]  # fmt: skip


@pytest.mark.parametrize("dt", [*FLOATS, ember.int64], ids=str)
@pytest.mark.parametrize("geometry", AVG_GEOMETRIES, ids=str)
def test_avg_pool2d(device: str, dt: ember.dtype, geometry: tuple[Any, ...],
                    rng: np.random.Generator) -> None:  # fmt: skip
    k, s, p, _, include_pad, divisor = geometry
    data = values((2, 3, 7, 6), dt, rng) * (7 if dt is ember.int64 else 1)
    x = make(data, device)
    native, composite = native_and_composite(device, lambda: F.avg_pool2d(x, *geometry))
    s = k if s is None else s
    want = avg_pool_reference(data, tuple(composite.shape[2:]), pair(k), pair(s), pair(p),
                              include_pad, divisor)  # fmt: skip
    assert_close(composite, want, dt)
    same(native, composite)


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("geometry", AVG_GEOMETRIES, ids=str)
def test_avg_pool2d_gradients(device: str, dt: ember.dtype, geometry: tuple[Any, ...],
                              rng: np.random.Generator) -> None:  # fmt: skip
    x = make(values((2, 2, 7, 6), dt, rng), device).requires_grad_()

    def pool(t: ember.Tensor) -> ember.Tensor:
        return F.avg_pool2d(t, *geometry)

    if dt is ember.float64:
        # Finite differences over a smaller input: one evaluation per element.
        small = make(values((1, 1, 6, 5), dt, rng), device).requires_grad_()
        with composites(device):
            assert gradcheck(pool, (small,))
            assert ember.autograd.gradgradcheck(pool, (small,))
    native, composite = native_and_composite(device, lambda: _grad(pool, x))
    same(native, composite)


ADAPTIVE_SIZES = [(1, 1), (3, 4), (7, 6), (9, 10), (2, None), 5]


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("size", ADAPTIVE_SIZES, ids=str)
def test_adaptive_avg_pool2d(device: str, dt: ember.dtype, size: Any,
                             rng: np.random.Generator) -> None:  # fmt: skip
    data = values((2, 3, 7, 6), dt, rng)
    x = make(data, device)
    native, composite = native_and_composite(device, lambda: F.adaptive_avg_pool2d(x, size))
    out_hw = tuple(composite.shape[2:])
    assert_close(composite, adaptive_reference(data, out_hw), dt)
    same(native, composite)
    if dt is ember.float64:
        t = make(values((1, 1, 7, 6), dt, rng), device).requires_grad_()
        with composites(device):
            assert gradcheck(lambda v: F.adaptive_avg_pool2d(v, size), (t,))
            assert ember.autograd.gradgradcheck(lambda v: F.adaptive_avg_pool2d(v, size), (t,))
    grads = native_and_composite(
        device, lambda: _grad(lambda v: F.adaptive_avg_pool2d(v, size), x.detach().requires_grad_())
    )
    same(*grads)


def test_adaptive_avg_pool2d_edges(device: str, rng: np.random.Generator) -> None:
    data = values((3, 5, 4), ember.float32, rng)
    with composites(device):
        unbatched = F.adaptive_avg_pool2d(make(data, device), (2, 3))
        assert_close(unbatched, adaptive_reference(data, (2, 3)))
        x = ember.ones(2, 3, 4, 4, device=device, requires_grad=True)
        empty = F.adaptive_avg_pool2d(x, (0, 2))
        assert tuple(empty.shape) == (2, 3, 0, 2)
        empty.sum().backward()
        assert_close(x.grad, np.zeros((2, 3, 4, 4)))
