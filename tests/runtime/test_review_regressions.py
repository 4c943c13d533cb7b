"""Regression tests for defects found in review of the core runtime and CPU device."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import ember


def test_float16_ops_keep_python_scalars_in_float() -> None:
    # PyTorch computes half ops with a scalar in float: 1/100000 is not 0, 1e5/4 is not inf.
    small = ember.tensor([1.0], dtype=ember.float16) / 100000
    large = 100000 / ember.tensor([4.0], dtype=ember.float16)
    assert small.item() == pytest.approx(1e-5, rel=1e-2)
    assert large.item() == pytest.approx(25000, rel=1e-2)


def test_float16_mean_of_many_elements() -> None:
    values = np.random.default_rng(0).random(100_000).astype(np.float16)
    mean = ember.tensor(values).mean().item()
    assert mean == pytest.approx(float(values.astype(np.float64).mean()), rel=1e-2)


def test_float16_mean_whose_sum_exceeds_the_half_range() -> None:
    # The float16 sum of 70000 ones is inf; PyTorch's mean accumulates in float and gives 1.
    ones = ember.ones(70_000, dtype=ember.float16)
    assert ones.mean().item() == 1.0
    assert ones.mean().dtype is ember.float16


def test_set_num_threads_is_process_wide() -> None:
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        seen: list[int] = []
        worker = threading.Thread(target=lambda: seen.append(ember.get_num_threads()))
        worker.start()
        worker.join()
        assert seen == [1]
    finally:
        ember.set_num_threads(before)


def test_results_agree_across_thread_counts() -> None:
    x = ember.rand(300_000)
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        one = (x.exp() * 2).sum().item()
        ember.set_num_threads(2)
        two = (x.exp() * 2).sum().item()
    finally:
        ember.set_num_threads(before)
    assert one == pytest.approx(two, rel=1e-5)


def test_repr_wraps_at_80_columns_like_pytorch() -> None:
    assert repr(ember.arange(20.0)) == (
        "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
        "        14., 15., 16., 17., 18., 19.])"
    )
    assert repr(ember.tensor([1.0, 2000.0])) == "tensor([1.0000e+00, 2.0000e+03])"
