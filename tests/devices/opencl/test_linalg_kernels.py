"""The opencl device's mm/bmm, im2col/col2im and pooling kernels against the cpu device's.

Each kernel runs on both devices over the same data. Matrix products are checked in every
operand layout (row-major, transposed, stepped with an offset, broadcast batch) and at
sizes on both sides of the GEMM's tile and k-slice edges; integers must be identical
(wrapping included), floats close to a float64 NumPy product. The convolution and pooling
kernels must match the cpu device bit for bit, the whole output storage compared: their
backward kernels are gathers that add in the cpu's order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from ember import _dtype
from ember._dispatch import OPS
from ember._ops._launch import copy
from ember._ops.linalg import plan_for
from ember._tensor import Tensor, empty_tensor, make_view

from . import _twins as twins
from ._twins import DEVICES, Pair

if "opencl" not in ember.devices() or not ember.device_count("opencl"):
    pytest.skip("no opencl device", allow_module_level=True)

pytest.importorskip("ember_opencl.kernels_linalg")

FLOATS = ["float16", "float32", "float64"]
INTEGERS = ["uint8", "int8", "int32", "int64"]


def pair(arr: np.ndarray, layout: str = "contiguous") -> Pair:
    """Twins of `arr`; "transposed" here swaps the last two dims (a matrix's transpose)."""
    return twins.pair(arr, "swapped" if layout == "transposed" else layout)


def run(op: str, *args: Any) -> None:
    """Op `op`'s kernel on each device; Pair arguments give each device its own tensor."""
    for i, dev in enumerate(DEVICES):
        OPS[op].kernels[dev.type](*(a[i] if _is_pair(a) else a for a in args))


def product(op: str, out: Tensor, a: Tensor, b: Tensor) -> None:
    """The kernel of `op` on out's device, called as the runtime calls it."""
    kernel = OPS[op].kernels[out._device.type]
    kernel(out._storage, a._storage, b._storage, plan_for(out, a, b))


def _is_pair(a: Any) -> bool:
    return isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], Tensor)


def sample(name: str, shape: tuple[int, ...], seed: int = 0, low: int = -50) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if name in FLOATS:
        return rng.standard_normal(shape).astype(name)
    return rng.integers(0 if name == "uint8" else low, 50, shape).astype(name)


def empty_pair(shape: tuple[int, ...], name: str, fill: float = 0) -> Pair:
    """Outputs on both devices, pre-filled so that untouched elements compare equal."""
    values = np.full(shape, fill, _dtype.BY_NAME[name].numpy)
    return ember.tensor(values), ember.tensor(values, device="opencl")


def storages(p: Pair) -> tuple[np.ndarray, np.ndarray]:
    """Both tensors' whole storages as arrays (what each kernel may have written)."""
    arrays = []
    for t in p:
        n = t._storage.nbytes // t._dtype.itemsize
        arrays.append(make_view(t, 0, (n,), (1,)).cpu().numpy())
    return arrays[0], arrays[1]


def assert_same(p: Pair) -> None:
    want, got = storages(p)
    np.testing.assert_array_equal(got, want)


# --- mm and bmm ----------------------------------------------------------------------------

# (M, K, N): tiny, ragged tile edges, k past one 256-deep slice; on a 2-unit CPU device
# they run on each of the GEMM's tilings (16x32, 32x32 and 64x64 tiles).
SHAPES = [(1, 1, 1), (5, 7, 3), (70, 130, 33), (33, 300, 65), (96, 300, 80), (130, 40, 140)]
LAYOUTS = ["contiguous", "transposed", "stepped"]


def _reference(a: np.ndarray, b: np.ndarray, name: str) -> np.ndarray:
    if name in FLOATS:
        return np.matmul(a.astype(np.float64), b.astype(np.float64))
    return np.matmul(a.astype(np.int64), b.astype(np.int64)).astype(name)  # wraps


def _check_product(out: Tensor, want: np.ndarray, name: str, k: int) -> None:
    got = out.cpu().numpy()
    if name not in FLOATS:
        np.testing.assert_array_equal(got, want)
        return
    tolerance = {"float16": 1e-2, "float32": 1e-6, "float64": 1e-14}[name] * np.sqrt(k)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("name", FLOATS + INTEGERS)
@pytest.mark.parametrize("layouts", [(a, b) for a in LAYOUTS for b in LAYOUTS])
def test_mm(name: str, layouts: tuple[str, str]) -> None:
    for m, k, n in SHAPES:
        a_np = sample(name, (m, k), 1, low=-100)
        b_np = sample(name, (k, n), 2, low=-100)  # int8/uint8 products wrap
        a, b = pair(a_np, layouts[0])[1], pair(b_np, layouts[1])[1]
        out = empty_tensor((m, n), _dtype.BY_NAME[name], DEVICES[1])
        product("mm", out, a, b)
        _check_product(out, _reference(a_np, b_np, name), name, k)


@pytest.mark.parametrize("name", ["float32", "float64", "int64", "float16"])
@pytest.mark.parametrize("layouts", [("contiguous", "transposed"), ("broadcast", "stepped"),
                                     ("transposed", "broadcast")])  # fmt: skip
def test_bmm(name: str, layouts: tuple[str, str]) -> None:
    for m, k, n in SHAPES[1:4]:
        a_np, b_np = sample(name, (3, m, k), 3), sample(name, (3, k, n), 4)
        if layouts[0] == "broadcast":
            a_np[:] = a_np[0]
        if layouts[1] == "broadcast":
            b_np[:] = b_np[0]
        a, b = pair(a_np, layouts[0])[1], pair(b_np, layouts[1])[1]
        out = empty_tensor((3, m, n), _dtype.BY_NAME[name], DEVICES[1])
        product("bmm", out, a, b)
        _check_product(out, _reference(a_np, b_np, name), name, k)


def test_mm_writes_only_its_output_view() -> None:
    a, b = pair(sample("float32", (9, 4))), pair(sample("float32", (4, 6)))
    base = empty_pair((3 + 9 * 6 + 5,), "float32", fill=7.0)
    out = tuple(make_view(t, 3, (9, 6), (6, 1)) for t in base)
    for i in range(2):
        product("mm", out[i], a[i], b[i])
    want, got = storages(base)
    np.testing.assert_array_equal(got[:3], 7.0)
    np.testing.assert_array_equal(got[-5:], 7.0)
    np.testing.assert_allclose(got, want, rtol=1e-6)


# --- im2col and col2im ------------------------------------------------------------------------

GEOMETRIES = [
    # kernel, out, stride, padding, dilation for a 5 x 6 image
    ((3, 3), (3, 4), (1, 1), (0, 0), (1, 1)),
    ((3, 2), (3, 4), (2, 2), (1, 1), (1, 1)),
    ((2, 3), (5, 4), (1, 2), (1, 2), (2, 1)),  # asymmetric: padding (1, 2) top/left only
    ((1, 1), (2, 2), (3, 3), (0, 0), (1, 1)),
    ((3, 3), (6, 7), (1, 1), (2, 2), (1, 1)),  # windows reaching past every border
]


def _columns(shape: tuple[int, ...], name: str, batch_inside: bool) -> Pair:
    """(N, C, kh, kw, Ho, Wo) views on both devices, plain or batch-in-columns."""
    if not batch_inside:
        return empty_pair(shape, name, fill=3)
    n, c, kh, kw, oh, ow = shape
    made = []
    for base in empty_pair((c, kh, kw, n, oh, ow), name, fill=3):
        s = base._strides
        made.append(make_view(base, 0, shape, (s[3], s[0], s[1], s[2], s[4], s[5])))
    return made[0], made[1]


@pytest.mark.parametrize("name", ["uint8", "float16", "float32", "int64"])
@pytest.mark.parametrize("geometry", range(len(GEOMETRIES)))
@pytest.mark.parametrize("batch_inside", [False, True])
def test_im2col(name: str, geometry: int, batch_inside: bool) -> None:
    k, out_hw, s, p, d = GEOMETRIES[geometry]
    x = pair(sample(name, (2, 3, 5, 6)))
    cols = _columns((2, 3, *k, *out_hw), name, batch_inside)
    run("im2col", cols, x, s, p, d)
    assert_same(cols)


@pytest.mark.parametrize("name", ["float32", "float64", "int8", "uint8", "int32", "int64"])
@pytest.mark.parametrize("geometry", range(len(GEOMETRIES)))
@pytest.mark.parametrize("batch_inside", [False, True])
def test_col2im(name: str, geometry: int, batch_inside: bool) -> None:
    k, out_hw, s, p, d = GEOMETRIES[geometry]
    values = sample(name, (2, 3, *k, *out_hw), geometry)
    if name in ("int8", "uint8"):
        values = (values.astype(np.int64) * 5).astype(name)  # sums wrap around
    cols = _columns(values.shape, name, batch_inside)
    for t in cols:  # fill the views with the values through the cpu
        t_values = ember.tensor(values, device=str(t._device))
        copy(t, t_values)
    image = empty_pair((2, 3, 5, 6), name, fill=9)
    run("col2im", image, cols, s, p, d)
    assert_same(image)


# --- pooling ----------------------------------------------------------------------------------


def _out_size(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


POOLS = [
    # kernel, stride, padding, dilation, ceil_mode on a 7 x 9 plane
    ((2, 2), (2, 2), (0, 0), (1, 1), False),
    ((3, 3), (2, 2), (1, 1), (1, 1), True),
    ((3, 2), (1, 2), (1, 1), (2, 1), False),
    ((2, 3), (3, 2), (1, 0), (1, 2), True),
    ((4, 4), (1, 1), (2, 2), (1, 1), False),
]


def _pool_out(x: Pair, geometry: int) -> tuple[int, int]:
    k, s, p, d, ceil_mode = POOLS[geometry]
    h, w = x[0]._shape[2:]
    return (
        _out_size(h, k[0], s[0], p[0], d[0], ceil_mode),
        _out_size(w, k[1], s[1], p[1], d[1], ceil_mode),
    )


@pytest.mark.parametrize("name", FLOATS + INTEGERS)
@pytest.mark.parametrize("geometry", range(len(POOLS)))
def test_max_pool2d_and_backward(name: str, geometry: int) -> None:
    k, s, p, d, _ = POOLS[geometry]
    values = sample(name, (2, 3, 7, 9), geometry, low=-5)  # ties
    if name in FLOATS:
        values[0, 0, 1, 1] = values[0, 1, 2, 4] = values[0, 1, 2, 5] = np.nan
        values[1, 2] = -np.inf
    x = pair(values)
    oh, ow = _pool_out(x, geometry)
    out, indices = empty_pair((2, 3, oh, ow), name), empty_pair((2, 3, oh, ow), "int64")
    run("max_pool2d", out, indices, x, k, s, p, d)
    assert_same(out)
    assert_same(indices)
    if name in FLOATS:
        grad_input = empty_pair((2, 3, 7, 9), name, fill=5)
        run("max_pool2d_backward", grad_input, pair(sample(name, (2, 3, oh, ow), 7)), indices)
        assert_same(grad_input)


def test_max_pool2d_backward_splits_large_planes() -> None:
    """Few planes of many pixels: runs of one plane rescan its indices."""
    x = pair(sample("float32", (1, 1, 40, 50)))
    out, indices = empty_pair((1, 1, 38, 48), "float32"), empty_pair((1, 1, 38, 48), "int64")
    run("max_pool2d", out, indices, x, (3, 3), (1, 1), (0, 0), (1, 1))
    grad_input = empty_pair((1, 1, 40, 50), "float32", fill=5)
    run("max_pool2d_backward", grad_input, pair(sample("float32", (1, 1, 38, 48), 3)), indices)
    assert_same(grad_input)


@pytest.mark.parametrize("name", FLOATS + INTEGERS)
@pytest.mark.parametrize("geometry", [0, 1, 3, 4])  # avg pooling has no dilation
@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("divisor", [None, 3])
def test_avg_pool2d_and_backward(
    name: str, geometry: int, count_include_pad: bool, divisor: int | None
) -> None:
    k, s, p, _, _ = POOLS[geometry]
    x = pair(sample(name, (2, 3, 7, 9), geometry))
    oh, ow = _pool_out(x, geometry)
    out = empty_pair((2, 3, oh, ow), name)
    args = (k, s, p, count_include_pad, divisor)
    run("avg_pool2d", out, x, *args)
    assert_same(out)
    if name in FLOATS:
        grad_input = empty_pair((2, 3, 7, 9), name, fill=5)
        run("avg_pool2d_backward", grad_input, pair(sample(name, (2, 3, oh, ow), 8)), *args)
        assert_same(grad_input)


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("sizes", [((7, 5), (3, 4)), ((3, 4), (5, 7)), ((6, 6), (6, 1)),
                                   ((5, 5), (0, 2))])  # fmt: skip
def test_adaptive_avg_pool2d_and_backward(
    name: str, sizes: tuple[tuple[int, int], tuple[int, int]]
) -> None:
    (h, w), (oh, ow) = sizes
    x = pair(sample(name, (2, 2, h, w)))
    out = empty_pair((2, 2, oh, ow), name)
    run("adaptive_avg_pool2d", out, x)
    assert_same(out)
    grad_input = empty_pair((2, 2, h, w), name, fill=5)
    run("adaptive_avg_pool2d_backward", grad_input, pair(sample(name, (2, 2, oh, ow), 9)))
    assert_same(grad_input)
