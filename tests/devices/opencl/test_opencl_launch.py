"""_launch: kernel cache, argument kinds, prelude and the geometry struct of plans."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import ember
from ember._plan import elementwise_plan
from ember_opencl import _launch

SOURCE = (
    _launch.GEOMETRY_C
    + _launch.prelude(ember.float16, "H")
    + """
__kernel void gather2d(__global float* out, long out_off, __global const float* a, long a_off,
                       long n, EmGeometry g) {
    const long i = get_global_id(0);
    if (i < n) out[out_off + em_offset(g, 0, i)] = a[a_off + em_offset(g, 1, i)];
}
__kernel void scale(__global float* out, long n, float factor, int shift) {
    const long i = get_global_id(0);
    if (i < n) out[i] = out[i] * factor + shift;
}
__kernel void halves(__global H_T* out, long n) {
    const long i = get_global_id(0);
    if (i < n) H_STORE(out, i, H_LOAD(out, i) * 3.0f);
}
"""
)


def _unpack(packed: bytes) -> tuple[int, list[int], list[list[int]]]:
    values = struct.unpack(f"{1 + 16 + 64}q", packed)
    nd = values[0]
    shape = list(values[1 : 1 + nd])
    strides = [list(values[17 + 16 * k : 17 + 16 * k + nd]) for k in range(4)]
    return nd, shape, strides


def test_plan_geometry_packs_the_plans_coalesced_dims() -> None:
    dtypes = (ember.float32,) * 3
    plan = elementwise_plan(
        (2, 1, 3, 4), ((12, 12, 4, 1), (0, 0, 4, 1), (1, 1, 2, 6)), (0,) * 3, dtypes
    )
    packed = _launch.plan_geometry(plan)
    assert len(packed) == 8 * (1 + 16 + 4 * 16)
    nd, shape, strides = _unpack(packed)
    assert (nd, shape) == (plan.ndim, list(plan.shape))
    assert strides[:3] == [list(s) for s in plan.strides]
    assert strides[3] == [0] * nd


def test_geometry_packs_dims_as_given() -> None:
    nd, shape, strides = _unpack(_launch.geometry((3, 1, 4), (4, 4, 1), (0, 0, 1), (1, 3, 3)))
    assert (nd, shape) == (3, [3, 1, 4])
    assert strides[:3] == [[4, 4, 1], [0, 0, 1], [1, 3, 3]]


def test_geometry_rejects_too_many_dims() -> None:
    shape = (2,) * 17
    transposed = tuple(2**k for k in range(17))  # no two neighbours merge
    contiguous = tuple(reversed(transposed))
    with pytest.raises(RuntimeError, match="at most 16"):
        _launch.geometry(shape, contiguous, transposed)


def test_kernels_are_cached_per_device_source_and_name() -> None:
    dev = ember.device("opencl:0")
    k = _launch.kernel(dev, SOURCE, "scale")
    assert _launch.kernel(dev, SOURCE, "scale") is k
    assert _launch.kernel(dev, SOURCE, "gather2d") is not k


def test_launch_takes_python_ints_numpy_scalars_and_structs() -> None:
    dev = ember.device("opencl:0")
    a = ember.tensor(np.arange(12, dtype=np.float32).reshape(3, 4), device=dev)
    out = ember.zeros(4, 3, device=dev)
    g = _launch.geometry((4, 3), out._strides, (1, 4))  # out = a.T
    k = _launch.kernel(dev, SOURCE, "gather2d")
    args = [*_launch.at(out), *_launch.at(a), 12, g]
    event = _launch.launch(dev, k, (64,), args, (_launch.LOCAL_SIZE,))
    event.wait()
    np.testing.assert_array_equal(out.cpu().numpy(), np.arange(12.0).reshape(3, 4).T)
    scale = _launch.kernel(dev, SOURCE, "scale")
    _launch.launch(dev, scale, (64,), [_launch.mem(out), 12, np.float32(2.0), np.int32(1)], (64,))
    np.testing.assert_array_equal(out.cpu().numpy(), np.arange(12.0).reshape(3, 4).T * 2 + 1)


def test_empty_launch_enqueues_nothing() -> None:
    dev = ember.device("opencl:0")
    k = _launch.kernel(dev, SOURCE, "scale")
    event = _launch.launch(dev, k, (0,), [None, 0, np.float32(1), np.int32(0)])
    event.wait()


def test_half_prelude_goes_through_vload_half() -> None:
    dev = ember.device("opencl:0")
    t = ember.tensor(np.array([1.0, 0.5, -2.0, 1000.0], np.float16), device=dev)
    k = _launch.kernel(dev, SOURCE, "halves")
    _launch.launch(dev, k, (64,), [_launch.mem(t), 4], (64,))
    np.testing.assert_array_equal(t.cpu().numpy(), np.array([3.0, 1.5, -6.0, 3000.0], np.float16))


@pytest.mark.parametrize(
    ("dtype", "expected"),
    [
        (ember.bool, "uchar"), (ember.uint8, "uchar"), (ember.int8, "char"),
        (ember.int32, "int"), (ember.int64, "long"), (ember.float16, "half"),
        (ember.float32, "float"), (ember.float64, "double"),
    ],
)  # fmt: skip
def test_ctype(dtype: ember.dtype, expected: str) -> None:
    assert _launch.ctype(dtype) == expected
