"""In-place ops: results, identity of the returned tensor, views, and the version counter."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import pytest

import ember

from ._reference import FLOATS, assert_close, host, laid_out, make, pid, sample

# name: (in-place call, its reference on float64 values, the operand)
INPLACE: dict[str, tuple[Callable, Callable, str]] = {
    "add_": (lambda t, o: t.add_(o), lambda a, o: a + o, "tensor"),
    "add_alpha": (lambda t, o: t.add_(o, alpha=2), lambda a, o: a + 2 * o, "tensor"),
    "iadd": (lambda t, o: t.__iadd__(o), lambda a, o: a + o, "tensor"),
    "sub_": (lambda t, o: t.sub_(o), lambda a, o: a - o, "tensor"),
    "isub_scalar": (lambda t, o: t.__isub__(1.5), lambda a, o: a - 1.5, "none"),
    "mul_": (lambda t, o: t.mul_(o), lambda a, o: a * o, "tensor"),
    "imul_scalar": (lambda t, o: t.__imul__(3), lambda a, o: a * 3, "none"),
    "div_": (lambda t, o: t.div_(o), lambda a, o: a / o, "nonzero"),
    "itruediv": (lambda t, o: t.__itruediv__(o), lambda a, o: a / o, "nonzero"),
    "div_floor": (lambda t, o: t.div_(o, rounding_mode="floor"), lambda a, o: np.floor(a / o),
                  "pow2"),
    "pow_": (lambda t, o: t.abs().pow_(2), lambda a, o: np.abs(a) ** 2, "none"),
    "clamp_": (lambda t, o: t.clamp_(-0.5, 0.5), lambda a, o: np.clip(a, -0.5, 0.5), "none"),
    "relu_": (lambda t, o: t.relu_(), lambda a, o: np.maximum(a, 0), "none"),
    "exp_": (lambda t, o: t.exp_(), lambda a, o: np.exp(a), "none"),
    "fill_": (lambda t, o: t.fill_(2.5), lambda a, o: np.full_like(a, 2.5), "none"),
    "fill_tensor": (lambda t, o: t.fill_(make(np.float32(-1.0), o.device)),
                    lambda a, o: np.full_like(a, -1.0), "tensor"),
    "zero_": (lambda t, o: t.zero_(), lambda a, o: np.zeros_like(a), "none"),
    "copy_": (lambda t, o: t.copy_(o), lambda a, o: np.broadcast_to(o, a.shape), "tensor"),
}  # fmt: skip


@pytest.mark.parametrize("op", list(INPLACE))
@pytest.mark.parametrize("dtype", FLOATS, ids=pid)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("other_shape", [(3, 4), (4,), ()], ids=pid)
def test_inplace(device: str, op: str, dtype, layout: str, other_shape: tuple, rng) -> None:
    call, ref, domain = INPLACE[op]
    tensor, values = laid_out(sample((3, 4), dtype, rng), layout, device)
    other_values = sample(
        other_shape, dtype, rng, "any" if domain in ("tensor", "none") else domain
    )
    other = make(other_values, device)
    version = tensor._version
    storage = tensor.untyped_storage()
    result = call(tensor, other)
    assert result is tensor or op == "pow_"
    if op == "pow_":  # abs() made a new tensor; check it was updated in place
        tensor = result
    else:
        assert tensor.untyped_storage() is storage
        assert tensor._version > version
    with np.errstate(all="ignore"):
        want = ref(values.astype(np.float64), other_values.astype(np.float64))
    assert_close(tensor, want, dtype)


def test_inplace_on_a_view_updates_the_base(device: str, rng) -> None:
    values = sample((3, 4), ember.float32, rng)
    base = make(values, device)
    column = base[:, 1]
    column.mul_(2)
    base[0].add_(1)
    base.t()[2].zero_()
    values[:, 1] *= 2
    values[0] += 1
    values[:, 2] = 0
    assert_close(base, values)
    assert column._version == base._version


def test_copy_converts_dtype_and_broadcasts(device: str, rng) -> None:
    target = ember.zeros(2, 3, dtype=ember.int32, device=device)
    source = make(np.array([1.9, -2.9, 3.0]), device)
    target.copy_(source)
    assert_close(target, np.array([[1, -2, 3], [1, -2, 3]]), ember.int32)
    halves = ember.empty(3, dtype=ember.float16, device=device).copy_(make([1, 2, 3], device))
    assert_close(halves, np.array([1.0, 2.0, 3.0]), ember.float16)


def test_copy_between_strided_views(device: str, rng) -> None:
    source, values = laid_out(sample((4, 5), ember.float64, rng), "transposed", device)
    target, _ = laid_out(np.zeros((4, 5)), "strided", device)
    target.copy_(source)
    assert_close(target, values, ember.float64, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [ember.int64, ember.uint8, ember.bool], ids=pid)
def test_inplace_integer_and_bool(device: str, dtype: ember.dtype, rng) -> None:
    values = sample((5,), dtype, rng)
    tensor = make(values, device)
    tensor.fill_(1)
    assert_close(tensor, np.ones(5), dtype)
    tensor.zero_()
    assert_close(tensor, np.zeros(5), dtype)
    if dtype is not ember.bool:
        tensor.add_(3)
        tensor.mul_(make(np.array([2], dtype=dtype.numpy), device))
        assert_close(tensor, np.full(5, 6), dtype)


def test_version_counts_every_inplace_write(device: str) -> None:
    t = ember.zeros(3, device=device)
    versions = [t._version]
    for write in (
        lambda: t.add_(1),
        lambda: t.mul_(2),
        lambda: t.copy_(ember.ones(3, device=device)),
        lambda: t.fill_(4),
        lambda: t.zero_(),
        lambda: t.__setitem__(0, 5.0),
        lambda: t.__setitem__(make([True, False, True], device), 1.0),
    ):
        write()
        versions.append(t._version)
    assert all(b > a for a, b in itertools.pairwise(versions)), versions
    before = t._version
    _ = t + 1, t[1:], t.sum(), t.clone()
    assert t._version == before  # reads and views don't count


def test_inplace_result_must_keep_the_shape(device: str) -> None:
    t = ember.zeros(3, device=device)
    with pytest.raises(RuntimeError):
        t.add_(ember.ones(2, 3, device=device))
    np.testing.assert_array_equal(host(t), np.zeros(3))


def test_inplace_cannot_lower_the_category(device: str) -> None:
    t = ember.zeros(3, dtype=ember.int64, device=device)
    with pytest.raises(RuntimeError):
        t.add_(1.5)
    with pytest.raises(RuntimeError):
        t.mul_(make([1.5, 1.5, 1.5], device))
    with pytest.raises(RuntimeError):
        t.div_(2)
    np.testing.assert_array_equal(host(t), np.zeros(3))
