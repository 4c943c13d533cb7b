"""Window functions, logspace, range, vander, combinations, trapezoid/trapz,
cumulative_trapezoid and gradient against torch 2.13 (values, shapes, dtypes, periodic and
symmetric windows, edge orders, coordinates), with gradients by finite differences."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import ember


def _torch() -> Any:
    return pytest.importorskip("torch")


def _close(ours: ember.Tensor, theirs: Any, rtol: float = 1e-6, atol: float = 1e-6) -> None:
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.numpy(force=True), theirs.numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", ["hann", "hamming", "blackman", "bartlett", "kaiser"])
@pytest.mark.parametrize("length", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_match_torch(device: str, name: str, length: int, periodic: bool) -> None:
    torch = _torch()
    ours = getattr(ember, f"{name}_window")(length, periodic, device=device)
    _close(ours, getattr(torch, f"{name}_window")(length, periodic))
    assert str(ours.device) == str(ember.device(device))


def test_window_options_match_torch(device: str) -> None:
    torch = _torch()
    _close(
        ember.hamming_window(6, False, 0.5, 0.3, dtype=ember.float64, device=device),
        torch.hamming_window(6, False, 0.5, 0.3, dtype=torch.float64),
        rtol=1e-12,
    )
    _close(
        ember.kaiser_window(7, False, beta=3.0, dtype=ember.float64, device=device),
        torch.kaiser_window(7, False, beta=3.0, dtype=torch.float64),
        rtol=1e-12,
    )
    assert ember.hann_window(4, requires_grad=True, device=device).requires_grad
    with pytest.raises(RuntimeError, match="hann_window expects floating point dtypes"):
        ember.hann_window(3, dtype=ember.int64, device=device)
    with pytest.raises(
        RuntimeError, match="requires non-negative window_length, got window_length=-1"
    ):
        ember.blackman_window(-1, device=device)


def test_logspace_and_range_match_torch(device: str) -> None:
    torch = _torch()
    _close(ember.logspace(0, 2, 5, device=device), torch.logspace(0, 2, 5))
    _close(
        ember.logspace(-1, 3, 4, base=2, dtype=ember.float64, device=device),
        torch.logspace(-1, 3, 4, base=2, dtype=torch.float64),
    )
    _close(
        ember.logspace(0, 3, 4, base=2, dtype=ember.int64, device=device),
        torch.logspace(0, 3, 4, base=2, dtype=torch.int64),
    )
    assert ember.logspace(0, 1, 0, device=device).shape == (0,)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for args in [(0, 3), (0, 1, 0.3), (1, 4), (5, 1, -2)]:
            _close(ember.range(*args, device=device), torch.range(*args))
        _close(
            ember.range(0, 3, dtype=ember.int64, device=device),
            torch.range(0, 3, dtype=torch.int64),
        )
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        ember.range(0, 1, device=device)
    with (
        pytest.raises(
            RuntimeError, match="upper bound and lower bound inconsistent with step sign"
        ),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore", UserWarning)
        ember.range(0, 3, -1, device=device)


@pytest.mark.parametrize("increasing", [False, True])
def test_vander_matches_torch(device: str, increasing: bool) -> None:
    torch = _torch()
    for data, dtype, n in [
        ([1, 2, 3], "int64", None),
        ([1.5, -2.0], "float64", 4),
        ([True, False], "bool", 3),
        ([2.0], "float32", 0),
    ]:
        array = np.asarray(data, dtype=dtype)
        ours = ember.vander(ember.tensor(array, device=device), N=n, increasing=increasing)
        _close(ours, torch.vander(torch.from_numpy(array.copy()), N=n, increasing=increasing))
    with pytest.raises(RuntimeError, match="x must be a one-dimensional tensor"):
        ember.vander(ember.zeros(2, 2, device=device))
    x = ember.tensor([0.5, -1.2, 2.0], dtype=ember.float64, device=device, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: ember.vander(t, 4), (x,))


@pytest.mark.parametrize("r", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("with_replacement", [False, True])
def test_combinations_match_torch(device: str, r: int, with_replacement: bool) -> None:
    torch = _torch()
    ours = ember.combinations(ember.tensor([1, 2, 3, 4], device=device), r, with_replacement)
    _close(ours, torch.combinations(torch.tensor([1, 2, 3, 4]), r, with_replacement))


def test_combinations_errors_and_gradient(device: str) -> None:
    with pytest.raises(RuntimeError, match="Expect a 1D vector, but got shape \\[2, 2\\]"):
        ember.combinations(ember.zeros(2, 2, device=device))
    with pytest.raises(RuntimeError, match="Expect a non-negative number, but got -1"):
        ember.combinations(ember.zeros(2, device=device), -1)
    x = ember.tensor([0.5, -1.2, 2.0], dtype=ember.float64, device=device, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: ember.combinations(t, 2).prod(1), (x,))


def test_trapezoid_and_cumulative_trapezoid_match_torch(device: str) -> None:
    torch = _torch()
    rng = np.random.default_rng(0)
    y = rng.standard_normal((3, 5))
    x = np.sort(rng.standard_normal(5))
    grid = np.sort(rng.standard_normal((3, 5)), axis=1)
    ours_y, theirs_y = ember.tensor(y, device=device), torch.tensor(y)
    ours_x, theirs_x = ember.tensor(x, device=device), torch.tensor(x)
    ours_g, theirs_g = ember.tensor(grid, device=device), torch.tensor(grid)
    for ours_fn, theirs_fn in [
        (ember.trapezoid, torch.trapezoid),
        (ember.cumulative_trapezoid, torch.cumulative_trapezoid),
    ]:
        _close(ours_fn(ours_y), theirs_fn(theirs_y), rtol=1e-12)
        _close(ours_fn(ours_y, dx=0.3, dim=0), theirs_fn(theirs_y, dx=0.3, dim=0), rtol=1e-12)
        _close(ours_fn(ours_y, ours_x), theirs_fn(theirs_y, theirs_x), rtol=1e-12)
        _close(ours_fn(ours_y, ours_g, dim=-1), theirs_fn(theirs_y, theirs_g, dim=-1), rtol=1e-12)
    _close(ember.trapz(ours_y, ours_x), torch.trapz(theirs_y, theirs_x), rtol=1e-12)
    empty = ember.trapezoid(ember.zeros(2, 0, device=device))
    _close(empty, torch.trapezoid(torch.zeros(2, 0)))
    integers = ember.trapezoid(ember.tensor([1, 2, 4], device=device))
    _close(integers, torch.trapezoid(torch.tensor([1, 2, 4])))
    t = ember.tensor(y, device=device, requires_grad=True)
    assert ember.autograd.gradcheck(lambda v: ember.trapezoid(v, ours_x), (t,))


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_matches_torch(device: str, edge_order: int) -> None:
    torch = _torch()
    rng = np.random.default_rng(1)
    f = rng.standard_normal((4, 6))
    coordinates = np.sort(rng.standard_normal(6)) + np.arange(6)
    ours_f, theirs_f = ember.tensor(f, device=device), torch.tensor(f)
    cases: list[tuple[dict[str, Any], dict[str, Any]]] = [
        ({}, {}),
        ({"spacing": 2.0}, {"spacing": 2.0}),
        ({"spacing": [0.5, 3.0]}, {"spacing": [0.5, 3.0]}),
        ({"dim": 1}, {"dim": 1}),
        (
            {"dim": -1, "spacing": (ember.tensor(coordinates, device=device),)},
            {"dim": -1, "spacing": (torch.tensor(coordinates),)},
        ),
    ]
    for ours_options, theirs_options in cases:
        ours = ember.gradient(ours_f, edge_order=edge_order, **ours_options)
        theirs = torch.gradient(theirs_f, edge_order=edge_order, **theirs_options)
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            _close(a, b, rtol=1e-9, atol=1e-12)
    t = ember.tensor(f, device=device, requires_grad=True)
    assert ember.autograd.gradcheck(
        lambda v: ember.gradient(v, dim=1, edge_order=edge_order)[0], (t,)
    )
    with pytest.raises(RuntimeError, match="at least edge_order\\+1"):
        ember.gradient(
            ember.zeros(edge_order, dtype=ember.float64, device=device), edge_order=edge_order
        )
