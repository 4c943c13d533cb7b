"""The opencl elementwise kernels on the runtime's plans: both kernels of a program
(contiguous and strided), scalars on either side, offsets, and every operand count."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember._ops import _launch, names
from ember._tensor import make_view

DEV = "opencl:0"


def on_device(values: np.ndarray) -> ember.Tensor:
    return ember.tensor(values, device=DEV)


def strided(values: np.ndarray) -> ember.Tensor:
    """`values` as a transposed view at a non-zero offset of a larger storage."""
    base = np.zeros(values.size + 3, values.dtype)
    base[3:] = np.ascontiguousarray(values.T).reshape(-1)
    t = on_device(base)
    strides = tuple(s // values.itemsize for s in np.ascontiguousarray(values.T).strides[::-1])
    return make_view(t, 3, values.shape, strides)


@pytest.mark.parametrize("layout", ["contiguous", "strided"])
@pytest.mark.parametrize("side", ["a", "b", None])
def test_binary_with_scalars_and_offsets(layout: str, side: str | None) -> None:
    a = (2 * np.arange(12, dtype=np.int32) - 11).reshape(3, 4)  # odd: no zero divisor
    make = on_device if layout == "contiguous" else strided
    t = make(a)
    out = make(np.zeros_like(a))
    operands: dict[str | None, tuple[ember.Tensor | int, ember.Tensor | int]]
    operands = {"a": (7, t), "b": (t, 7), None: (t, make(a[::-1].copy()))}
    left, right = operands[side]
    _launch.launch_binary(names.BINARY["floor_divide"], out, left, right, ember.int32)
    x, y = (
        o.cpu().numpy() if isinstance(o, ember.Tensor) else np.asarray(o) for o in (left, right)
    )
    np.testing.assert_array_equal(out.cpu().numpy(), np.floor_divide(x, y))


def test_where_broadcasts_four_operands() -> None:
    condition = on_device(np.array([[True], [False], [True]]))
    a = strided(np.arange(12, dtype=np.float64).reshape(3, 4))
    b = on_device(np.array([-1.0, -2.0, -3.0, -4.0]))
    out = ember.empty((3, 4), dtype=ember.float64, device=DEV)
    _launch.launch_where(out, condition, a, b)
    want = np.where([[True], [False], [True]], np.arange(12.0).reshape(3, 4), [-1, -2, -3, -4])
    np.testing.assert_array_equal(out.cpu().numpy(), want)


def test_copy_rounds_double_to_half_once_and_fill_writes_views() -> None:
    src = strided(np.array([[1 + 2**-11 + 2**-30, 3.0], [0.1, -2.5]]))
    dst = ember.empty((2, 2), dtype=ember.float16, device=DEV)
    _launch.copy(dst, src)
    np.testing.assert_array_equal(dst.cpu().numpy(), src.cpu().numpy().astype(np.float16))
    column = make_view(dst, 1, (2,), (2,))
    _launch.fill(column, 7.0)
    np.testing.assert_array_equal(dst.cpu().numpy()[:, 1], [7.0, 7.0])
