"""Views: values, strides, storage sharing and write-through, against the same NumPy views."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import ember

from ._reference import DTYPES, assert_close, host, make, pid, shares_storage


class ViewCase(NamedTuple):
    ember_fn: Callable[[ember.Tensor], ember.Tensor]
    numpy_fn: Callable[[np.ndarray], np.ndarray]
    is_view: bool = True  # shares the base's storage
    same_strides: bool = True  # strides equal NumPy's (in elements)


def _base(kind: str, device: str, dtype: ember.dtype = ember.float32) -> tuple[Any, np.ndarray]:
    """A (2, 3, 4) tensor of 0..23 (contiguous, or a transposed view) and its NumPy twin."""
    if kind == "contiguous":
        values = np.arange(24).reshape(2, 3, 4).astype(dtype.numpy)
        return make(values, device), values
    values = np.arange(24).reshape(4, 3, 2).astype(dtype.numpy)
    return make(values, device).transpose(0, 2), values.transpose(2, 1, 0)


def _broadcast(a: np.ndarray, *shape: int) -> np.ndarray:
    return np.broadcast_to(a, shape)


def _strided(a: np.ndarray, offset: int) -> np.ndarray:
    """NumPy's as_strided((3, 2), (1, 3), offset) of a contiguous array, in elements."""
    flat = a.reshape(-1)[offset:]
    return np.lib.stride_tricks.as_strided(flat, (3, 2), (a.itemsize, 3 * a.itemsize))


def _np_expand_new(a: np.ndarray) -> np.ndarray:
    return _broadcast(a[0, 0], 3, 2, 4)


def _np_expand_keep(a: np.ndarray) -> np.ndarray:
    return _broadcast(a[:, :1], 2, 3, 4)


CASES: dict[str, ViewCase] = {
    "view": ViewCase(lambda t: t.view(6, 4), lambda a: a.reshape(6, 4)),
    "view_infer": ViewCase(lambda t: t.view(4, -1, 2), lambda a: a.reshape(4, -1, 2)),
    "view_flat": ViewCase(lambda t: t.view(-1), lambda a: a.reshape(-1)),
    "view_tuple": ViewCase(lambda t: t.view((3, 8)), lambda a: a.reshape(3, 8)),
    "view_as": ViewCase(lambda t: t.view_as(ember.zeros(4, 6)), lambda a: a.reshape(4, 6)),
    "reshape": ViewCase(lambda t: t.reshape(4, 6), lambda a: a.reshape(4, 6)),
    "reshape_fn": ViewCase(lambda t: ember.reshape(t, (2, 12)), lambda a: a.reshape(2, 12)),
    "permute": ViewCase(lambda t: t.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1)),
    "permute_negative": ViewCase(lambda t: t.permute(-1, 0, -2), lambda a: a.transpose(2, 0, 1)),
    "permute_fn": ViewCase(lambda t: ember.permute(t, (1, 2, 0)), lambda a: a.transpose(1, 2, 0)),
    "transpose": ViewCase(lambda t: t.transpose(0, 2), lambda a: a.swapaxes(0, 2)),
    "transpose_negative": ViewCase(lambda t: t.transpose(-1, -2), lambda a: a.swapaxes(-1, -2)),
    "mT": ViewCase(lambda t: t.mT, lambda a: a.swapaxes(-1, -2)),
    "t_matrix": ViewCase(lambda t: t[0].t(), lambda a: a[0].T),
    "t_vector": ViewCase(lambda t: t[0, 0].t(), lambda a: a[0, 0]),
    "movedim": ViewCase(lambda t: ember.movedim(t, 0, -1), lambda a: np.moveaxis(a, 0, -1)),
    "slice_steps": ViewCase(lambda t: t[:, ::2, 1::2], lambda a: a[:, ::2, 1::2]),
    "slice_negative": ViewCase(lambda t: t[-1, -3:-1, :-2], lambda a: a[-1, -3:-1, :-2]),
    "slice_clamped": ViewCase(lambda t: t[1:10, 5:, :], lambda a: a[1:10, 5:, :]),
    "slice_ellipsis": ViewCase(lambda t: t[..., ::3], lambda a: a[..., ::3]),
    "slice_none": ViewCase(lambda t: t[None, :, None, 1], lambda a: a[None, :, None, 1]),
    "select": ViewCase(lambda t: t.select(1, -1), lambda a: a[:, -1]),
    "select_fn": ViewCase(lambda t: ember.select(t, 2, 1), lambda a: a[:, :, 1]),
    "narrow": ViewCase(lambda t: t.narrow(2, 1, 2), lambda a: a[:, :, 1:3]),
    "narrow_negative": ViewCase(lambda t: t.narrow(-2, -2, 2), lambda a: a[:, 1:3]),
    "narrow_empty": ViewCase(lambda t: t.narrow(0, 1, 0), lambda a: a[1:1]),
    "expand": ViewCase(lambda t: t[:, :1].expand(2, 5, 4), lambda a: _broadcast(a[:, :1], 2, 5, 4)),
    "expand_new_dims": ViewCase(lambda t: t[0, 0].expand(3, 2, 4), _np_expand_new),
    "expand_keep": ViewCase(lambda t: t[:, :1].expand(-1, 3, -1), _np_expand_keep),
    "expand_as": ViewCase(lambda t: t[:1].expand_as(t), lambda a: np.broadcast_to(a[:1], a.shape)),
    "squeeze_all": ViewCase(lambda t: t[:1, :, 1:2].squeeze(), lambda a: a[:1, :, 1:2].squeeze()),
    "squeeze_dim": ViewCase(lambda t: t[:, :1].squeeze(1), lambda a: a[:, :1].squeeze(1)),
    "squeeze_noop": ViewCase(lambda t: t.squeeze(0), lambda a: a),
    "unsqueeze": ViewCase(lambda t: t.unsqueeze(0), lambda a: a[None], same_strides=False),
    "unsqueeze_last": ViewCase(lambda t: t.unsqueeze(-1), lambda a: a[..., None], True, False),
    "unsqueeze_middle": ViewCase(lambda t: t.unsqueeze(2), lambda a: a[:, :, None], True, False),
    "flatten": ViewCase(lambda t: t.flatten(), lambda a: a.reshape(-1)),
    "flatten_range": ViewCase(lambda t: t.flatten(1), lambda a: a.reshape(2, 12)),
    "flatten_fn": ViewCase(lambda t: ember.flatten(t, 0, 1), lambda a: a.reshape(6, 4)),
    "unflatten": ViewCase(lambda t: t.unflatten(2, (2, 2)), lambda a: a.reshape(2, 3, 2, 2)),
    "unflatten_infer": ViewCase(lambda t: t.unflatten(-1, (-1, 1)), lambda a: a[..., None]),
    "as_strided": ViewCase(lambda t: t.as_strided((3, 2), (1, 3), 2), lambda a: _strided(a, 2)),
}  # fmt: skip

# On the transposed base these cannot be views, so reshape/flatten copy (as in PyTorch).
COPIES_WHEN_TRANSPOSED = {"reshape", "reshape_fn", "flatten", "flatten_range", "flatten_fn"}
VIEW_ONLY = {"view", "view_infer", "view_flat", "view_tuple", "view_as", "unflatten"}


def _cases(kind: str) -> list[str]:
    if kind == "contiguous":
        return list(CASES)
    return [name for name in CASES if name not in VIEW_ONLY and name != "as_strided"]


@pytest.mark.parametrize(
    ("kind", "case"), [(k, c) for k in ("contiguous", "transposed") for c in _cases(k)], ids=pid
)
def test_view_values_strides_and_storage(device: str, kind: str, case: str) -> None:
    spec = CASES[case]
    base, values = _base(kind, device)
    view = spec.ember_fn(base)
    reference = spec.numpy_fn(values)
    assert_close(view, reference, ember.float32, rtol=0, atol=0)
    copies = kind == "transposed" and case in COPIES_WHEN_TRANSPOSED
    if spec.is_view and not copies:
        assert shares_storage(view, base)
        if spec.same_strides and reference.size > 1:
            want = tuple(s // reference.itemsize for s in reference.strides)
            sized = [
                (st, w) for st, w, n in zip(view.stride(), want, view.shape, strict=True) if n > 1
            ]
            assert all(st == w for st, w in sized), (view.stride(), want)
    if copies:
        assert not shares_storage(view, base)
        assert view.is_contiguous()


WRITABLE = [
    name
    for name, spec in CASES.items()
    if spec.is_view and not name.startswith("expand") and name != "narrow_empty"
]


@pytest.mark.parametrize("case", WRITABLE)
def test_writes_through_views_reach_the_base(device: str, case: str) -> None:
    base, values = _base("contiguous", device)
    view = CASES[case].ember_fn(base)
    values = values.copy()
    version = base._version
    view.fill_(-1.0)
    CASES[case].numpy_fn(values)[...] = -1.0
    np.testing.assert_array_equal(host(base), values)
    assert base._version > version
    assert view._version == base._version


@pytest.mark.parametrize("dtype", DTYPES, ids=pid)
def test_views_of_every_dtype(device: str, dtype: ember.dtype) -> None:
    base, values = _base("transposed", device, dtype)
    assert_close(base.permute(1, 2, 0)[:, ::2], values.transpose(1, 2, 0)[:, ::2], dtype)


def test_contiguous(device: str) -> None:
    base, values = _base("transposed", device)
    assert not base.is_contiguous()
    copy = base.contiguous()
    assert copy.is_contiguous()
    assert copy.stride() == (12, 4, 1)
    assert not shares_storage(copy, base)
    assert_close(copy, values)
    same = copy.contiguous()
    assert same is copy


def test_contiguity_flags_and_strides(device: str) -> None:
    base = ember.zeros(2, 3, 4, device=device)
    assert base.is_contiguous() and base.stride() == (12, 4, 1)
    assert base.stride(-1) == 1 and base.stride(0) == 12
    assert base.storage_offset() == 0
    assert base[1].storage_offset() == 12
    assert base[:, 1:].storage_offset() == 4
    assert base[1:2].is_contiguous()
    assert not base[:, :, ::2].is_contiguous()
    assert not base.transpose(0, 1).is_contiguous()
    assert base[:, :1].expand(2, 3, 4).stride() == (12, 0, 1)
    assert ember.zeros(3, 1, device=device).t().is_contiguous()  # size-1 dims don't count


def test_view_of_compatible_strided_tensor_is_a_view(device: str) -> None:
    base, values = _base("contiguous", device)
    strided = base[:, :, ::2]
    merged = strided.view(2, 6)
    assert shares_storage(merged, base)
    assert merged.stride() == (12, 2)
    assert_close(merged, values[:, :, ::2].reshape(2, 6))


def test_view_of_incompatible_strides_raises(device: str) -> None:
    base, _ = _base("transposed", device)
    with pytest.raises(RuntimeError, match="view"):
        base.view(-1)


@pytest.mark.parametrize("shape", [(5,), (2, 4), (-1, 5)], ids=str)
def test_view_with_wrong_element_count_raises(device: str, shape: tuple) -> None:
    with pytest.raises(RuntimeError, match=r"\[" + ", ".join(map(str, shape)).replace("-", r"\-")):
        ember.zeros(2, 3, device=device).view(*shape)


def test_zero_dim_and_zero_size_views(device: str) -> None:
    scalar = make(np.float32(4.0), device)
    assert tuple(scalar.view(1).shape) == (1,)
    assert tuple(scalar.reshape(1, 1).shape) == (1, 1)
    assert tuple(scalar.unsqueeze(0).shape) == (1,)
    assert tuple(scalar.flatten().shape) == (1,)
    assert tuple(scalar.expand(2, 3).shape) == (2, 3)
    assert tuple(make([4.0], device).view(()).shape) == ()
    assert tuple(make([4.0], device).squeeze().shape) == ()
    empty = ember.zeros(2, 0, 3, device=device)
    assert tuple(empty.view(0, 6).shape) == (0, 6)
    assert tuple(empty.reshape(-1, 3).shape) == (0, 3)
    assert tuple(empty.permute(2, 0, 1).shape) == (3, 2, 0)
    assert tuple(empty.transpose(0, 1)[:, 1:].shape) == (0, 1, 3)
    assert tuple(empty.flatten().shape) == (0,)
    with pytest.raises(RuntimeError):
        empty.view(-1, 0)


def test_shape_and_size_api(device: str) -> None:
    t = ember.zeros(2, 3, 4, device=device)
    assert t.shape == (2, 3, 4) and isinstance(t.shape, ember.Size)
    assert t.size() == (2, 3, 4) and t.size(1) == 3 and t.size(-1) == 4
    assert t.dim() == t.ndim == 3
    assert t.numel() == 24 and t.nelement() == 24
    assert t.element_size() == 4 and t.nbytes == 96
    assert repr(t.shape) == "ember.Size([2, 3, 4])"
    with pytest.raises(IndexError):
        t.size(3)


@pytest.mark.parametrize(
    "make_view",
    [
        lambda t: t.permute(0, 1),
        lambda t: t.permute(0, 0, 1),
        lambda t: t.transpose(0, 3),
        lambda t: t.select(3, 0),
        lambda t: t.select(0, 2),
        lambda t: t.narrow(1, 2, 2),
        lambda t: t.expand(3, 3, 4),
        lambda t: t.expand(2),
        lambda t: t.unflatten(1, (2, 2)),
        lambda t: t.unsqueeze(4),
        lambda t: t.flatten(2, 1),
    ],
    ids=[
        "permute_short", "permute_repeat", "transpose_range", "select_dim", "select_index",
        "narrow_length", "expand_nonsingleton", "expand_fewer", "unflatten_product",
        "unsqueeze_range", "flatten_order",
    ],
)  # fmt: skip
def test_invalid_views_raise(device: str, make_view) -> None:
    t = ember.zeros(2, 3, 4, device=device)
    with pytest.raises((RuntimeError, IndexError)):
        make_view(t)
