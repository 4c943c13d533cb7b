"""ember-fused's multi-tensor cpu `foreach_norm` and `foreach_mul_` behind
clip_grad_norm_: the kernels run (one call per list) and give float64 NumPy's values;
lists they leave to the composites (strided, float64) stay correct."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import ember
from ember import library
from ember.plugins import ops

RNG = np.random.default_rng(5)
SHAPES = [(70, 50), (13,), (1,), (4, 4, 4)]


def _tensors(dtype: Any = ember.float32) -> tuple[list[Any], list[np.ndarray]]:
    arrays = [RNG.standard_normal(s) for s in SHAPES]
    tensors = [ember.tensor(a, dtype=dtype) for a in arrays]
    return tensors, [t.numpy().astype(np.float64) for t in tensors]


def test_registered_for_cpu_by_the_plugin() -> None:
    ember.ones(1)
    for op in (ops.FOREACH_NORM, ops.FOREACH_MUL_):
        assert "ember_fused" in str(library.explain(op, "cpu"))


@pytest.mark.parametrize("ord", [2.0, 1.0, math.inf])
def test_norms_match_numpy(ord: float) -> None:
    from ember_fused import _cpu_foreach

    tensors, arrays = _tensors()
    arrays[0][3, 4] = -9.5  # the inf-norm's peak is a negative entry
    tensors[0][3, 4] = -9.5
    out = ember.empty(len(tensors))
    _cpu_foreach.foreach_norm(out, tensors, ord)
    expected = [np.linalg.norm(a.ravel(), ord) for a in arrays]
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


def test_inf_norm_propagates_nan() -> None:
    from ember_fused import _cpu_foreach

    t = ember.tensor([1.0, float("nan"), -3.0])
    out = ember.empty(2)
    _cpu_foreach.foreach_norm(out, [t, ember.tensor([2.0])], math.inf)
    assert math.isnan(out[0].item()) and out[1].item() == 2.0


def test_mul_scales_in_place_from_a_tensor() -> None:
    from ember_fused import _cpu_foreach

    tensors, arrays = _tensors()
    _cpu_foreach.foreach_mul_(tensors, ember.tensor([0.25]))
    for t, a in zip(tensors, arrays, strict=True):
        np.testing.assert_allclose(t.numpy(), a * 0.25, rtol=1e-7)


def test_float64_and_strided_lists_run_the_formulas() -> None:
    from ember_fused import _cpu_foreach

    tensors, arrays = _tensors(ember.float64)
    tensors.append(ember.tensor(arrays[0].T.copy()).t())  # strided
    arrays.append(arrays[0])
    out = ember.empty(len(tensors), dtype=ember.float64)
    _cpu_foreach.foreach_norm(out, tensors, 2.0)
    np.testing.assert_allclose(out.numpy(), [np.linalg.norm(a) for a in arrays], rtol=1e-12)
    _cpu_foreach.foreach_mul_(tensors, ember.tensor([3.0], dtype=ember.float64))
    for t, a in zip(tensors, arrays, strict=True):
        np.testing.assert_allclose(t.numpy(), a * 3.0, rtol=1e-12)


def test_clip_grad_norm_takes_one_call_each() -> None:
    ember.ones(1)
    from ember_fused import _cpu_foreach

    calls: list[str] = []

    def norm_spy(*args: Any) -> None:
        calls.append("norm")
        _cpu_foreach.foreach_norm(*args)

    def mul_spy(*args: Any) -> None:
        calls.append("mul")
        _cpu_foreach.foreach_mul_(*args)

    handles = [
        library.register_kernel(ops.FOREACH_NORM, "cpu", norm_spy, priority=1),
        library.register_kernel(ops.FOREACH_MUL_, "cpu", mul_spy, priority=1),
    ]
    try:
        params = [ember.nn.Parameter(ember.zeros(*s)) for s in SHAPES]
        for p in params:
            p.grad = ember.ones(*p.shape)
        ember.nn.utils.clip_grad_norm_(params, 1.0)
        assert calls == ["norm", "mul"]
        ember.nn.utils.clip_grad_norm_(params, 1.0, foreach=False)
        assert calls == ["norm", "mul"]
        # Clipped to norm 1 by the first call; the second scales by 1 / (1 + 1e-6) more.
        total = math.sqrt(sum(p.numel() for p in params))
        expected = 1.0 / (total + 1e-6) / (1.0 + 1e-6)
        np.testing.assert_allclose(params[0].grad.numpy(), expected, rtol=1e-6)
    finally:
        for handle in handles:
            handle.remove()
