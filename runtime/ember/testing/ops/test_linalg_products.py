"""dot, vdot, inner, outer/ger, mv, the add*mm family, cross, dist and ember.linalg's
vecdot / multi_dot / matrix_power / cross against torch in float64, with gradients by
finite differences."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember

from .test_gradients_reduction import check_gradients

torch = pytest.importorskip("torch")

# name -> (operand shapes, keyword arguments)
CASES: dict[str, tuple[list[tuple[int, ...]], dict[str, Any]]] = {
    "dot": ([(5,), (5,)], {}),
    "vdot": ([(4,), (4,)], {}),
    "inner_vectors": ([(4,), (4,)], {}),
    "inner_batched": ([(2, 3, 4), (5, 4)], {}),
    "outer": ([(3,), (4,)], {}),
    "ger": ([(2,), (5,)], {}),
    "mv": ([(3, 4), (4,)], {}),
    "addmm": ([(3, 5), (3, 4), (4, 5)], {}),
    "addmm_broadcast_scaled": ([(5,), (3, 4), (4, 5)], {"beta": 0.5, "alpha": -2.0}),
    "addmv": ([(3,), (3, 4), (4,)], {"beta": 2.0}),
    "addr": ([(3, 4), (3,), (4,)], {"alpha": 3.0}),
    "baddbmm": ([(2, 3, 5), (2, 3, 4), (2, 4, 5)], {"beta": 0.25}),
    "addbmm": ([(3, 5), (2, 3, 4), (2, 4, 5)], {"alpha": 0.5}),
    "cross": ([(4, 3), (4, 3)], {}),
    "cross_dim": ([(3, 2), (3, 2)], {"dim": 0}),
    "dist": ([(3, 4), (3, 4)], {}),
    "dist_p3": ([(3, 4), (4,)], {"p": 3}),
}


def _function(module: Any, name: str) -> Any:
    return getattr(module, name.split("_")[0])


def _both(rng: np.random.Generator, shapes, device: str):
    values = [rng.standard_normal(s) for s in shapes]
    return [ember.tensor(v, device=device) for v in values], [torch.tensor(v) for v in values]


def _check(got: ember.Tensor, want) -> None:
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(force=True), want.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.filterwarnings("ignore:Using (torch|ember).cross without specifying the dim")
@pytest.mark.parametrize("name", list(CASES))
def test_values_match_torch(device: str, rng, name: str) -> None:
    shapes, kwargs = CASES[name]
    e, t = _both(rng, shapes, device)
    _check(_function(ember, name)(*e, **kwargs), _function(torch, name)(*t, **kwargs))
    # The Tensor method forwards to the same function.
    method = name.split("_")[0]
    _check(getattr(e[0], method)(*e[1:], **kwargs), getattr(t[0], method)(*t[1:], **kwargs))


@pytest.mark.filterwarnings("ignore:Using ember.cross without specifying the dim")
@pytest.mark.parametrize("name", list(CASES))
def test_gradients(device: str, rng, name: str) -> None:
    shapes, kwargs = CASES[name]
    values = [rng.standard_normal(s) for s in shapes]
    fn = _function(ember, name)
    check_gradients(lambda *xs: fn(*xs, **kwargs), *values, device=device)


def test_beta_zero_ignores_nan_input(device: str, rng) -> None:
    e, t = _both(rng, [(3, 5), (3, 4), (4, 5)], device)
    e[0] = ember.full((3, 5), float("nan"), dtype=ember.float64, device=device)
    t[0] = torch.full((3, 5), float("nan"), dtype=torch.float64)
    _check(ember.addmm(*e, beta=0), torch.addmm(*t, beta=0))


@pytest.mark.parametrize(
    "shapes", [[(2, 3), (3, 4)], [(3,), (3, 4), (4, 2)], [(2, 3), (3, 4), (4,)],
               [(2, 3), (3, 3), (3, 5), (5, 1)]], ids=str,
)  # fmt: skip
def test_multi_dot(device: str, rng, shapes) -> None:
    e, t = _both(rng, shapes, device)
    _check(ember.linalg.multi_dot(e), torch.linalg.multi_dot(t))


def test_vecdot_and_linalg_cross_broadcast(device: str, rng) -> None:
    e, t = _both(rng, [(2, 1, 3), (4, 3)], device)
    _check(ember.linalg.vecdot(*e), torch.linalg.vecdot(*t))
    _check(ember.linalg.vecdot(*e, dim=-1), torch.linalg.vecdot(*t, dim=-1))
    e, t = _both(rng, [(2, 1, 3), (1, 4, 3)], device)
    _check(ember.linalg.cross(*e), torch.linalg.cross(*t))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        ember.linalg.cross(e[0], e[1][0])


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5])
def test_matrix_power_batched(device: str, rng, n: int) -> None:
    e, t = _both(rng, [(2, 3, 3)], device)
    _check(ember.linalg.matrix_power(e[0], n), torch.linalg.matrix_power(t[0], n))
    _check(ember.matrix_power(e[0], n), torch.matrix_power(t[0], n))


def test_matrix_power_gradient(device: str, rng) -> None:
    values = rng.standard_normal((2, 3, 3)) * 0.5
    check_gradients(lambda a: ember.linalg.matrix_power(a, 3), values, device=device)


def test_errors_like_torch(device: str) -> None:
    v3, v4 = ember.ones(3, device=device), ember.ones(4, device=device)
    with pytest.raises(RuntimeError, match="inconsistent tensor size"):
        ember.dot(v3, v4)
    with pytest.raises(RuntimeError, match="1D tensors expected"):
        ember.dot(ember.ones(2, 2, device=device), v3)
    with pytest.raises(RuntimeError, match="size mismatch"):
        ember.mv(ember.ones(2, 3, device=device), v4)
    with pytest.raises(RuntimeError, match="must have length 3"):
        ember.linalg.cross(v4, v4)
    with pytest.raises(RuntimeError, match="square matrices"):
        ember.linalg.matrix_power(ember.ones(2, 3, device=device), 2)
    with pytest.raises(RuntimeError, match="at least 2 tensors"):
        ember.linalg.multi_dot([v3])
    with pytest.raises(RuntimeError, match="last dimension must match"):
        ember.inner(v3, v4)


def test_cross_without_dim_warns_and_takes_the_first_dim_of_size_3(device: str, rng) -> None:
    e, t = _both(rng, [(3, 3, 2), (3, 3, 2)], device)
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        got = ember.cross(*e)
    _check(got, torch.cross(*t, dim=0))


def test_matrix_power_zero_is_the_identity_even_for_nan(device: str) -> None:
    values = np.full((2, 3, 3), np.nan)
    got = ember.linalg.matrix_power(ember.tensor(values, device=device), 0)
    _check(got, torch.linalg.matrix_power(torch.tensor(values), 0))
