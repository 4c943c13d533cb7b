"""Op plans (`ember._plan`): the geometry a kernel receives walks exactly the elements of
the operands it describes, in the same order, for every layout.

The reference is NumPy: an operand's plan geometry, applied to its flat storage with
`as_strided`, must give the same values as the NumPy view of that operand broadcast to
the output's shape.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import ember
from ember._ops import linalg
from ember._ops._launch import plan_for, reduction_plan_for
from ember._plan import MatmulPlan, coalesce, contiguous_plan, elementwise_plan

_strided = np.lib.stride_tricks.as_strided


def _storage_array(t: ember.Tensor) -> np.ndarray:
    """All of t's (host) storage as a flat NumPy array of its dtype."""
    storage = t.untyped_storage()
    raw = (ctypes.c_byte * storage.nbytes).from_address(storage.ptr)
    return np.frombuffer(raw, dtype=t.dtype.numpy)


def _walk(t: ember.Tensor, shape: tuple[int, ...], strides: tuple[int, ...], offset: int):
    flat = _storage_array(t)
    item = flat.itemsize
    return _strided(flat[offset:], shape, tuple(s * item for s in strides)).copy()


def _layouts(rng: np.random.Generator):
    base = ember.tensor(rng.standard_normal((4, 5, 6)).astype(np.float32))
    yield "contiguous", base, base
    yield "transposed", base.transpose(0, 2), base.transpose(0, 2).contiguous()
    yield "sliced", base[1:, ::2, 1:5], base[1:, ::2, 1:5].contiguous()
    yield "offset row", base[2], base[2].contiguous()
    yield "expanded", base[:, :1, :].expand(4, 5, 6), base[:, :1, :].expand(4, 5, 6).contiguous()


@pytest.mark.parametrize("index", range(5))
def test_elementwise_plan_walks_the_operands(index: int) -> None:
    rng = np.random.default_rng(index)
    name, a, dense = list(_layouts(rng))[index]
    other = ember.tensor(rng.standard_normal(a.shape[-1:]).astype(np.float32))  # broadcasts
    out = ember.empty(*a.shape)
    plan = plan_for(out, (a, other, 2.5))
    assert plan.numel == a.numel()
    assert len(plan.strides) == len(plan.offsets) == len(plan.dtypes) == 4
    walked_a = _walk(a, plan.shape, plan.strides[1], plan.offsets[1]).reshape(-1)
    np.testing.assert_array_equal(walked_a, dense.numpy().reshape(-1), err_msg=name)
    expected_b = np.broadcast_to(other.numpy(), a.shape).reshape(-1)
    walked_b = _walk(other, plan.shape, plan.strides[2], plan.offsets[2]).reshape(-1)
    np.testing.assert_array_equal(walked_b, expected_b, err_msg=name)
    assert plan.strides[3] == (0,) * plan.ndim  # the scalar
    assert plan.dtypes[3] is ember.float32


def test_contiguous_operands_give_a_flat_plan() -> None:
    a, b = ember.ones(3, 4), ember.ones(3, 4)
    plan = plan_for(ember.empty(3, 4), (a, b))
    assert plan.contiguous and plan.shape == (12,) and plan.offsets == (0, 0, 0)
    assert plan is contiguous_plan((3, 4), (ember.float32,) * 3)  # cached
    with_scalar = plan_for(ember.empty(3, 4), (a, 1.0))
    assert with_scalar.contiguous and with_scalar.strides[2] == (0,)


def test_offsets_and_broadcast_are_not_flat() -> None:
    base = ember.ones(10)
    plan = plan_for(ember.empty(4), (base[3:7],))
    assert plan.contiguous and plan.offsets == (0, 3)
    broadcast = plan_for(ember.empty(3, 4), (ember.ones(4),))
    assert not broadcast.contiguous and broadcast.strides[1] == (0, 1)


def test_coalesce_merges_dims_walked_as_one() -> None:
    assert coalesce((2, 3, 4), ((12, 4, 1), (12, 4, 1))) == ((24,), ((1,), (1,)))
    assert coalesce((2, 1, 4), ((4, 99, 1),)) == ((8,), ((1,),))
    # A broadcast dim merges only with dims every operand walks the same way.
    assert coalesce((2, 3, 4), ((12, 4, 1), (0, 0, 1))) == ((6, 4), ((4, 1), (0, 1)))
    assert coalesce((3, 4), ((1, 3), (4, 1))) == ((3, 4), ((1, 3), (4, 1)))


def test_zero_dim_plan_is_one_element() -> None:
    plan = elementwise_plan((), ((), ()), (0, 0), (ember.float32, ember.float32))
    assert plan.numel == 1 and plan.shape == () and plan.contiguous


@pytest.mark.parametrize(
    ("shape", "dims"),
    [((4, 5, 6), (1,)), ((4, 5, 6), (0, 2)), ((4, 5, 6), (0, 1, 2)), ((3, 1, 7), (1,)), ((5,), ())],
)
@pytest.mark.parametrize("transposed", [False, True])
def test_reduction_plan_covers_kept_and_reduced(
    shape: tuple[int, ...], dims: tuple[int, ...], transposed: bool
) -> None:
    rng = np.random.default_rng(len(shape) + len(dims))
    a = ember.tensor(rng.standard_normal(shape))
    if transposed and len(shape) > 1:
        a = a.transpose(0, -1)
    keep = tuple(1 if d in dims else n for d, n in enumerate(a.shape))
    out = ember.empty(*keep, dtype=ember.float64)
    plan = reduction_plan_for(out, a, dims)
    walked = _walk(
        a, plan.kept + plan.reduced, plan.kept_strides + plan.reduced_strides, plan.offsets[1]
    )
    sums = walked.reshape(plan.numel_out, plan.numel_reduced).sum(axis=1)
    reference = a.numpy().sum(axis=dims, keepdims=True)
    np.testing.assert_allclose(sums, reference.reshape(-1), rtol=1e-12)
    # Output positions: the kept strides place the sums where the keepdim output has them.
    target = np.zeros(out.numel())
    positions = _strided(
        np.arange(out.numel()), plan.kept, tuple(s * 8 for s in plan.kept_out_strides)
    ).reshape(-1)
    target[positions] = sums
    np.testing.assert_allclose(target, reference.reshape(-1), rtol=1e-12)


def test_empty_reduction_has_no_reduced_elements() -> None:
    a = ember.ones(3, 0)
    plan = reduction_plan_for(ember.empty(3, 1), a, (1,))
    assert plan.numel_out == 3 and plan.numel_reduced == 0


def _matmul_operands():
    """(name, out, a, b) in the layouts a matrix product's meta step passes."""
    rng = np.random.default_rng(7)
    base = ember.tensor(rng.standard_normal((3, 6, 8)).astype(np.float32))
    yield "mm dense", ember.empty(6, 5), base[0, :, :4].contiguous(), base[1, :4, :5].contiguous()
    yield "mm transposed", ember.empty(8, 5), base[0].T, base[1, :6, :5]
    yield "mm offset", ember.empty(4, 8)[1:3], base[2, 1:3, :6], base[1, :6]
    yield "bmm broadcast", ember.empty(3, 6, 4), base[:1, :, :5].expand(3, 6, 5), base[:, 1:6, :4]
    permuted = base.permute(1, 0, 2)[:3, :, :3]  # (B, M, K) stored as (M, B, K)
    yield "bmm permuted", ember.empty(3, 3, 4), permuted, base[:, :3, :4]


@pytest.mark.parametrize("index", range(5))
def test_matmul_plan_walks_the_operands(index: int) -> None:
    name, out, a, b = list(_matmul_operands())[index]
    plan = linalg.plan_for(out, a, b)
    batch = 1 if a.dim() == 2 else a.shape[0]
    assert (plan.batch, plan.m, plan.k, plan.n) == (batch, *a.shape[-2:], b.shape[-1]), name
    for t, shape, strides, offset in zip(
        (out, a, b), plan.shapes, plan.strides, plan.offsets, strict=True
    ):
        expected = np.broadcast_to(t.numpy(), shape)  # mm: a batch of one
        np.testing.assert_array_equal(_walk(t, shape, strides, offset), expected, err_msg=name)
    assert plan.dtypes == (ember.float32,) * 3
    dense = all(t.is_contiguous() for t in (out, a, b))
    assert plan.contiguous == dense and plan.flat == (dense and not any(plan.offsets)), name


def test_matmul_plans_are_cached_per_layout() -> None:
    linalg._PLANS.clear()  # room for the plans below, whatever ran before
    a, b = ember.ones(5, 3), ember.ones(3, 4)
    first = a @ b
    plans = dict(linalg._PLANS)
    a @ b
    assert plans == linalg._PLANS  # the same layout again: no new plan
    (a.T.contiguous().T @ b)  # a new layout
    assert len(linalg._PLANS) == len(plans) + 1
    plan = linalg.plan_for(first, a, b)
    assert plan.flat and plan.shapes == ((1, 5, 4), (1, 5, 3), (1, 3, 4))


def test_matmul_plan_dense_ignores_strides_of_size_one_dims() -> None:
    f32 = (ember.float32,) * 3
    plan = MatmulPlan(1, 1, 4, 3, ((7, 9, 1), (0, 5, 1), (12, 4, 1)), (0, 0, 0), f32)
    assert plan.contiguous and plan.flat
    column_major = MatmulPlan(2, 2, 2, 2, ((4, 2, 1), (4, 1, 2), (4, 2, 1)), (0, 0, 0), f32)
    assert not column_major.contiguous
    shared = MatmulPlan(2, 2, 2, 2, ((4, 2, 1), (0, 2, 1), (4, 2, 1)), (0, 0, 0), f32)
    assert not shared.contiguous  # a zero batch stride reads one matrix twice


def test_empty_products_never_reach_a_kernel() -> None:
    calls = []
    kernels = linalg.names.BMM.kernels, linalg.names.MM.kernels
    saved = [dict(k) for k in kernels]
    for k in kernels:
        k["cpu"] = lambda *args: calls.append(args)
    try:
        assert (ember.ones(0, 3) @ ember.ones(3, 2)).shape == (0, 2)
        assert (ember.ones(2, 0) @ ember.ones(0, 3)).tolist() == [[0.0] * 3] * 2
        assert ember.bmm(ember.ones(2, 3, 0), ember.ones(2, 0, 1)).tolist() == [[[0.0]] * 3] * 2
    finally:
        for k, kept in zip(kernels, saved, strict=True):
            k.clear()
            k.update(kept)
    assert calls == []
