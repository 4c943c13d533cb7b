"""A custom op's C kernel that takes the op plan's geometry (`ember.library.
elementwise_plan`) computes right on every layout: contiguous, transposed, sliced and
broadcast inputs, against NumPy float64."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import ember
from ember import library

ember_cpu = pytest.importorskip("ember_cpu")

SOURCE = r"""
#include <stdint.h>

/* out = x + alpha * y over a plan of up to 4 dims; strides in elements. */
void axpy_f32(float *out, const float *x, const float *y, float alpha, int64_t ndim,
              const int64_t *shape, const int64_t *so, const int64_t *sx, const int64_t *sy) {
    int64_t size[4] = {1, 1, 1, 1}, o[4] = {0}, a[4] = {0}, b[4] = {0};
    for (int64_t d = 0; d < ndim; d++) {
        size[4 - ndim + d] = shape[d];
        o[4 - ndim + d] = so[d];
        a[4 - ndim + d] = sx[d];
        b[4 - ndim + d] = sy[d];
    }
    for (int64_t i = 0; i < size[0]; i++)
        for (int64_t j = 0; j < size[1]; j++)
            for (int64_t k = 0; k < size[2]; k++)
                for (int64_t l = 0; l < size[3]; l++) {
                    int64_t p = i * o[0] + j * o[1] + k * o[2] + l * o[3];
                    int64_t q = i * a[0] + j * a[1] + k * a[2] + l * a[3];
                    int64_t r = i * b[0] + j * b[1] + k * b[2] + l * b[3];
                    out[p] = x[q] + alpha * y[r];
                }
}
"""
_names = itertools.count()


@pytest.fixture(scope="module")
def axpy() -> library.CustomOp:
    lib = ember_cpu.load_inline(SOURCE, functions=["axpy_f32"], name="axpy")

    @library.custom_op(f"test_plans::axpy_{next(_names)}", mutates_args=())
    def axpy(x: ember.Tensor, y: ember.Tensor, alpha: float) -> ember.Tensor:
        return x + alpha * y

    @axpy.register_kernel("cpu")
    def _(x: ember.Tensor, y: ember.Tensor, alpha: float) -> ember.Tensor:
        out = ember.empty(np.broadcast_shapes(tuple(x.shape), tuple(y.shape)))
        plan = library.elementwise_plan(out, x, y)
        assert plan.ndim <= 4
        shape, (so, sx, sy) = plan.shape, plan.strides
        arrays = [lib.ffi.new("int64_t[]", list(v) or [0]) for v in (shape, so, sx, sy)]
        lib.axpy_f32(lib.ptr(out), lib.ptr(x), lib.ptr(y), alpha, plan.ndim, *arrays)
        return out

    return axpy


LAYOUTS = {
    "contiguous": lambda a: a,
    "transposed": lambda a: a.T,
    "sliced": lambda a: a[1:, ::2],
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("broadcast", [False, True])
def test_the_plan_covers_every_layout(axpy: library.CustomOp, layout: str, broadcast: bool) -> None:
    rng = np.random.default_rng(5)
    base_x = rng.standard_normal((7, 9))
    x_np = LAYOUTS[layout](base_x)
    x = LAYOUTS[layout](ember.tensor(base_x, dtype=ember.float32))
    y_np = rng.standard_normal(x_np.shape[-1:] if broadcast else x_np.shape)
    y = ember.tensor(y_np, dtype=ember.float32)
    got = np.asarray(axpy(x, y, 0.5)).astype(np.float64)
    np.testing.assert_allclose(got, x_np + 0.5 * y_np, rtol=1e-6, atol=1e-6)


def test_the_plan_merges_dims_and_flags_the_flat_case() -> None:
    out = ember.empty(4, 5, 6)
    flat = library.elementwise_plan(out, ember.ones(4, 5, 6), 2.0)
    assert flat.contiguous and flat.flat and flat.numel == 120
    strided = library.elementwise_plan(out, ember.ones(6, 5, 4).permute(2, 1, 0))
    assert not strided.contiguous and strided.strides[1] == (1, 4, 20)
    broadcast = library.elementwise_plan(out, ember.ones(6))
    assert broadcast.shape == (20, 6) and broadcast.strides[1] == (0, 1)


def test_the_plan_rejects_shapes_that_do_not_broadcast_to_the_output() -> None:
    with pytest.raises(RuntimeError, match="are not broadcastable"):
        library.elementwise_plan(ember.empty(4, 5), ember.ones(4, 6))
    with pytest.raises(RuntimeError, match="do not broadcast"):
        library.elementwise_plan(ember.empty(4, 5), ember.ones(3, 4, 5))
