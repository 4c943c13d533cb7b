"""Error behaviour on every device: mixed devices (proved on CPU-only CI with the fake
"fakedev" plugin), missing kernels, bad shapes, bad dtypes, bad indices; and a failed
op leaves its inputs unchanged."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember

from ._reference import host, make


def mentions(message: str, shape: tuple) -> bool:
    """Whether an error message names `shape`, as [2, 3], (2, 3), 2x3 or Size([2, 3])."""
    forms = [str(list(shape)), str(tuple(shape)), "x".join(map(str, shape))]
    return any(form in message for form in forms)


# -- the fake device itself ---------------------------------------------------------------


def test_fake_device_round_trips_through_its_plugin(fake_device: str) -> None:
    assert "fakedev" in ember.devices()
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = make(values, fake_device)
    assert t.device == ember.device(fake_device)
    np.testing.assert_array_equal(host(t), values)
    np.testing.assert_array_equal(host(t.t()), values.T)  # non-contiguous read: copy_ kernel
    np.testing.assert_array_equal(host(ember.zeros(2, device=fake_device)), [0.0, 0.0])
    np.testing.assert_array_equal(host(t.to("cpu")), values)


def test_fake_device_is_removed_after_the_test() -> None:
    assert "fakedev" not in ember.devices()


# -- mixing devices -------------------------------------------------------------------------

MIXED: dict[str, Callable[[Any, Any], Any]] = {
    "add": ember.add,
    "mul_operator": lambda a, b: a * b,
    "lt": ember.lt,
    "maximum": ember.maximum,
    "where": lambda a, b: ember.where(make([True, False, True], a.device), a, b),
    "matmul": lambda a, b: ember.matmul(a.view(1, 3), b.view(3, 1)),
    "cat": lambda a, b: ember.cat([a, b]),
    "add_": lambda a, b: a.add_(b),
    "masked_fill": lambda a, b: a.masked_fill(make([True, False, True], b.device), 1.0),
    "index_select": lambda a, b: a.index_select(0, b.long()),
}


@pytest.mark.parametrize("op", list(MIXED))
@pytest.mark.parametrize("order", ["device_first", "fake_first"])
def test_mixing_devices_names_both(device: str, fake_device: str, op: str, order: str) -> None:
    here = make(np.array([1.0, 2.0, 0.0], dtype=np.float32), device)
    there = make(np.array([0.0, 1.0, 1.0], dtype=np.float32), fake_device)
    a, b = (here, there) if order == "device_first" else (there, here)
    before = host(a), host(b)
    with pytest.raises(RuntimeError) as error:
        MIXED[op](a, b)
    message = str(error.value)
    assert str(ember.device(device)) in message and str(ember.device(fake_device)) in message
    np.testing.assert_array_equal(host(a), before[0])
    np.testing.assert_array_equal(host(b), before[1])


def test_zero_dim_cpu_tensor_joins_any_device_like_a_scalar(fake_device: str) -> None:
    there = make(np.array([1.0, 2.0], dtype=np.float32), fake_device)
    scalar = make(np.float32(2.0), "cpu")
    # Past the device check, the op reaches dispatch: fakedev has no `mul` kernel.
    with pytest.raises(NotImplementedError, match="mul"):
        there * scalar
    with pytest.raises(RuntimeError, match="fakedev"):
        there * make(np.array([2.0], dtype=np.float32), "cpu")


def test_copy_across_devices_is_allowed(device: str, fake_device: str) -> None:
    here = ember.zeros(3, device=device)
    here.copy_(make(np.array([1.0, 2.0, 3.0], dtype=np.float32), fake_device))
    np.testing.assert_array_equal(host(here), [1.0, 2.0, 3.0])


# -- missing kernels ------------------------------------------------------------------------

MISSING: dict[str, tuple[Callable[[Any], Any], str]] = {
    "add": (lambda t: t + t, "add"),
    "add_scalar": (lambda t: t + 1, "add"),
    "exp": (ember.exp, "exp"),
    "sum": (ember.sum, "sum"),
    "amax": (ember.amax, "amax"),
    "mm": (lambda t: t.view(1, 4) @ t.view(4, 1), "mm"),
    # the runtime range-checks the index first, with amin/amax on the device
    "gather": (lambda t: t.gather(0, ember.zeros(2, dtype=ember.int64, device=t.device)),
               "gather|amin|amax"),
    "arange": (lambda t: ember.arange(3, device=t.device), "arange"),
    "rand": (lambda t: ember.rand(3, device=t.device), "uniform"),
}  # fmt: skip


@pytest.mark.parametrize("op", list(MISSING))
def test_missing_kernel_names_op_device_and_dtype(fake_device: str, op: str) -> None:
    call, name = MISSING[op]
    t = make(np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32), fake_device)
    with pytest.raises(NotImplementedError) as error:
        call(t)
    message = str(error.value)
    assert re.search(name, message) and "fakedev" in message
    assert re.search(r"float32|int64", message), message
    np.testing.assert_array_equal(host(t), [1.0, 2.0, 3.0, 4.0])


def test_composite_without_primitives_reports_the_missing_primitive(fake_device: str) -> None:
    t = make(np.array([1.0, 2.0], dtype=np.float32), fake_device)
    with pytest.raises(NotImplementedError, match="fakedev"):
        ember.sigmoid(t)
    with pytest.raises(NotImplementedError, match="fakedev"):
        ember.mean(t)


def test_failed_inplace_op_leaves_target_and_version_alone(fake_device: str) -> None:
    t = make(np.array([1.0, 2.0], dtype=np.float32), fake_device)
    version = t._version
    with pytest.raises(NotImplementedError):
        t.add_(1.0)
    np.testing.assert_array_equal(host(t), [1.0, 2.0])
    assert t._version == version


# -- bad shapes -----------------------------------------------------------------------------

SHAPE_ERRORS: dict[str, tuple[Callable[[str], Any], list[tuple]]] = {
    "add": (lambda d: ember.zeros(2, 3, device=d) + ember.zeros(4, device=d), [(2, 3), (4,)]),
    "mul": (lambda d: ember.mul(ember.zeros(3, 1, 2, device=d), ember.zeros(4, 3, device=d)),
            [(3, 1, 2), (4, 3)]),
    "where": (lambda d: ember.where(ember.zeros(2, dtype=ember.bool, device=d),
                                    ember.zeros(3, device=d), 0.0), [(2,), (3,)]),
    "mm": (lambda d: ember.mm(ember.zeros(2, 3, device=d), ember.zeros(4, 5, device=d)),
           [(2, 3), (4, 5)]),
    "matmul_batch": (lambda d: ember.matmul(ember.zeros(2, 3, 4, device=d),
                                            ember.zeros(3, 4, 5, device=d)), [(2,), (3,)]),
    "view": (lambda d: ember.zeros(2, 3, device=d).view(4, 2), [(4, 2)]),
    "expand": (lambda d: ember.zeros(2, 3, device=d).expand(2, 4), [(2, 4)]),
    "copy_": (lambda d: ember.zeros(2, 3, device=d).copy_(ember.zeros(4, device=d)),
              [(2, 3), (4,)]),
}  # fmt: skip


@pytest.mark.parametrize("op", list(SHAPE_ERRORS))
def test_bad_shapes_raise_runtime_error_naming_them(device: str, op: str) -> None:
    call, shapes = SHAPE_ERRORS[op]
    with pytest.raises(RuntimeError) as error:
        call(device)
    for shape in shapes:
        assert mentions(str(error.value), shape), (shape, str(error.value))


# -- bad dtypes -----------------------------------------------------------------------------

DTYPE_ERRORS: dict[str, Callable[[str], Any]] = {
    "bitwise_float": lambda d: ember.bitwise_and(make([1.0], d), make([1.0], d)),
    "invert_float": lambda d: ~make([1.0], d),
    "sub_bool": lambda d: make([True], d) - make([False], d),
    "neg_bool": lambda d: -make([True], d),
    "rand_int": lambda d: ember.rand(2, dtype=ember.int64, device=d),
    "uniform_int": lambda d: ember.zeros(2, dtype=ember.int32, device=d).uniform_(),
    "mean_int": lambda d: ember.mean(make([1, 2], d)),
    "var_int": lambda d: ember.var(make([1, 2], d)),
    "matmul_mixed": lambda d: ember.matmul(make([[1.0]], d), make([[1.0]], d, ember.float64)),
    "mm_bool": lambda d: ember.mm(make([[True]], d), make([[True]], d)),
    "where_condition": lambda d: ember.where(make([1, 0], d), make([1.0, 2.0], d), 0.0),
    "gather_float_index": lambda d: make([1.0, 2.0], d).gather(0, make([0.0], d)),
    "index_select_float": lambda d: make([1.0, 2.0], d).index_select(0, make([0.0], d)),
    "masked_fill_int_mask": lambda d: make([1.0, 2.0], d).masked_fill(make([1, 0], d), 0.0),
    "factory_dtype": lambda d: ember.zeros(2, dtype="float32", device=d),
}


@pytest.mark.parametrize("case", list(DTYPE_ERRORS))
def test_bad_dtypes_raise_type_error(device: str, case: str) -> None:
    with pytest.raises(TypeError):
        DTYPE_ERRORS[case](device)


# -- bad indices and dims ---------------------------------------------------------------------

INDEX_ERRORS: dict[str, Callable[[Any], Any]] = {
    "getitem": lambda t: t[3],
    "getitem_second": lambda t: t[0, -5],
    "index_tensor": lambda t: t[make([0, 3], t.device)],
    "select": lambda t: t.select(0, 3),
    "index_select": lambda t: t.index_select(1, make([4], t.device)),
    "sum_dim": lambda t: t.sum(2),
    "transpose_dim": lambda t: t.transpose(0, 2),
    "softmax_like_dim": lambda t: ember.logsumexp(t, -3),
}


@pytest.mark.parametrize("case", list(INDEX_ERRORS))
def test_bad_indices_and_dims_raise_index_error(device: str, case: str) -> None:
    t = ember.zeros(3, 4, device=device)
    with pytest.raises(IndexError):
        INDEX_ERRORS[case](t)


def test_gather_and_scatter_check_index_range(device: str) -> None:
    t = ember.zeros(2, 3, device=device)
    bad = make([[0, 5]], device)
    with pytest.raises((IndexError, RuntimeError)):
        t.gather(1, bad)
    with pytest.raises((IndexError, RuntimeError)):
        t.scatter_(1, bad, 1.0)
    with pytest.raises((IndexError, RuntimeError)):
        t.scatter_add_(1, make([[-7, 0]], device), ember.ones(1, 2, device=device))
    np.testing.assert_array_equal(host(t), np.zeros((2, 3)))


# -- failed ops leave their inputs unchanged ------------------------------------------------

FAILING_WRITES: dict[str, tuple[type[Exception] | tuple, Callable[[Any], Any]]] = {
    "add_broadcast": (RuntimeError, lambda t: t.add_(ember.ones(2, 2, 3, device=t.device))),
    "add_category": (RuntimeError, lambda t: t.long().add_(1.5)),
    "copy_shape": (RuntimeError, lambda t: t.copy_(ember.ones(4, device=t.device))),
    "setitem_range": (IndexError, lambda t: t.__setitem__((0, 5), 1.0)),
    "setitem_shape": (RuntimeError, lambda t: t.__setitem__(0, ember.ones(4, device=t.device))),
    "scatter_range": ((IndexError, RuntimeError),
                      lambda t: t.scatter_(1, make([[0, 9]], t.device), 7.0)),
    "masked_fill_shape": (RuntimeError,
                          lambda t: t.masked_fill_(ember.ones(4, dtype=ember.bool,
                                                              device=t.device), 0.0)),
    "mul_dtype": (RuntimeError, lambda t: t.bool().mul_(make([1.5, 1.5, 1.5], t.device))),
}  # fmt: skip


@pytest.mark.parametrize("case", list(FAILING_WRITES))
def test_failed_writes_leave_the_target_unchanged(device: str, case: str) -> None:
    error, call = FAILING_WRITES[case]
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = make(values, device)
    version = t._version
    with pytest.raises(error):
        call(t)
    np.testing.assert_array_equal(host(t), values)
    assert t._version == version
