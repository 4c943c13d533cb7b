"""View and shape ops against NumPy: values, shapes, strides (PyTorch's), storage sharing,
copies only where PyTorch copies, and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember

DATA = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)


def host(t: ember.Tensor) -> np.ndarray:
    return np.asarray(t)


def shares(a: ember.Tensor, b: ember.Tensor) -> bool:
    return a.untyped_storage() is b.untyped_storage()


def scalar(value: float) -> ember.Tensor:
    return ember.tensor([value]).reshape(())


LAYOUTS = {
    "contiguous": (lambda t: t, lambda a: a),
    "permuted": (lambda t: t.permute(3, 1, 0, 2), lambda a: a.transpose(3, 1, 0, 2)),
    "sliced": (lambda t: t[:, 1:, ::2], lambda a: a[:, 1:, ::2]),
}


# -- view and reshape -------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(-1,), (6, 20), (2, 3, 20), (5, 4, 3, 2), (-1, 5), (1, 120, 1)])
def test_view_of_a_contiguous_tensor_shares_storage(shape: tuple[int, ...]) -> None:
    t = ember.tensor(DATA)
    v = t.view(shape)
    np.testing.assert_array_equal(host(v), DATA.reshape(shape))
    assert shares(v, t) and v.is_contiguous()
    v.view(-1)[7] = -1.0
    assert t.view(-1)[7].item() == -1.0


def test_view_accepts_sizes_as_arguments_or_one_sequence() -> None:
    t = ember.tensor(DATA)
    assert t.view(6, -1).shape == t.view((6, -1)).shape == t.view([6, 20]).shape == (6, 20)
    assert t.view(ember.Size([4, 30])).shape == (4, 30)


def test_view_of_a_compatible_non_contiguous_tensor() -> None:
    t = ember.tensor(DATA).transpose(0, 1)  # (3, 2, 4, 5): the last two dims stay together
    v = t.view(3, 2, 20)
    assert shares(v, t) and v.stride() == (20, 60, 1)
    np.testing.assert_array_equal(host(v), DATA.transpose(1, 0, 2, 3).reshape(3, 2, 20))


def test_view_of_an_incompatible_layout_raises_and_reshape_copies() -> None:
    t = ember.tensor(DATA).permute(3, 1, 0, 2)
    with pytest.raises(RuntimeError, match="view size is not compatible with input tensor's"):
        t.view(-1)
    r = t.reshape(-1)
    assert not shares(r, t) and r.is_contiguous()
    np.testing.assert_array_equal(host(r), DATA.transpose(3, 1, 0, 2).reshape(-1))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", [(-1,), (8, -1), (1, -1, 2, 1)])
def test_reshape_values_on_every_layout(layout: str, shape: tuple[int, ...]) -> None:
    prepare, reference = LAYOUTS[layout]
    result = prepare(ember.tensor(DATA)).reshape(shape)
    np.testing.assert_array_equal(host(result), reference(DATA).reshape(shape))


@pytest.mark.parametrize(
    ("shape", "message"),
    [
        ((-1, -1), "only one dimension can be inferred"),
        ((7, -1), r"shape '\[7, -1\]' is invalid for input of size 120"),
        ((-2, 60), "invalid shape dimension -2"),
        ((121,), "invalid for input of size 120"),
    ],
)
def test_view_size_errors(shape: tuple[int, ...], message: str) -> None:
    with pytest.raises(RuntimeError, match=message):
        ember.tensor(DATA).view(shape)


def test_zero_size_and_zero_dim_reshapes() -> None:
    empty = ember.zeros(0, 3)
    assert empty.view(3, 0).shape == (3, 0) and empty.reshape(-1).shape == (0,)
    with pytest.raises(RuntimeError, match="ambiguous"):
        empty.view(0, -1)
    s = scalar(5.0)
    assert s.view(1, 1).shape == (1, 1) and s.reshape(-1).shape == (1,)
    assert s.view(1).view(()).shape == ()


def test_view_as_another_dtype() -> None:
    t = ember.tensor(np.array([[1.0, 2.0]], dtype=np.float32))
    bits = t.view(ember.int32)
    np.testing.assert_array_equal(host(bits), np.array([[1.0, 2.0]], np.float32).view(np.int32))
    assert shares(bits, t)
    assert t.view(ember.float16).shape == (1, 4) and t.view(ember.float64).shape == (1, 1)


# -- reordering dims --------------------------------------------------------------------------


def test_permute_transpose_t_and_movedim_are_views_with_pytorchs_strides() -> None:
    t = ember.tensor(DATA)
    p = t.permute(1, 0, 3, 2)
    assert shares(p, t) and p.stride() == (20, 60, 1, 5) and not p.is_contiguous()
    np.testing.assert_array_equal(host(p), DATA.transpose(1, 0, 3, 2))
    assert t.permute((-1, 0, 2, 1)).shape == (5, 2, 4, 3)
    assert t.transpose(0, -1).stride() == (1, 20, 5, 60)
    m = t[0, 0]
    assert m.t().shape == (5, 4) and m.T.stride() == (1, 5) and t.mT.shape == (2, 3, 5, 4)
    assert t[0, 0, 0].t().shape == (5,)
    moved = ember.movedim(t, (0, 3), (3, 1))
    np.testing.assert_array_equal(host(moved), np.moveaxis(DATA, (0, 3), (3, 1)))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda t: t.permute(0, 1, 2), RuntimeError, "does not match the length"),
        (lambda t: t.permute(0, 0, 1, 2), RuntimeError, "duplicate dims"),
        (lambda t: t.permute(0, 1, 2, 4), IndexError, "Dimension out of range"),
        (lambda t: t.transpose(0, 4), IndexError, "Dimension out of range"),
        (lambda t: t.t(), RuntimeError, "t\\(\\) expects a tensor with <= 2 dimensions"),
        (lambda t: ember.movedim(t, (0, 0), (1, 2)), RuntimeError, "repeated dim"),
    ],
    ids=range(6),
)
def test_reordering_errors(call: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call(ember.tensor(DATA))


# -- select, narrow, expand, squeeze, unsqueeze -----------------------------------------------


def test_select_and_narrow() -> None:
    t = ember.tensor(DATA)
    s = t.select(2, -1)
    np.testing.assert_array_equal(host(s), DATA[:, :, -1])
    assert shares(s, t) and s.storage_offset() == 15
    n = t.narrow(3, -3, 2)
    np.testing.assert_array_equal(host(n), DATA[..., 2:4])
    assert shares(n, t) and n.stride() == t.stride()
    assert t.narrow(1, 3, 0).shape == (2, 0, 4, 5)
    with pytest.raises(IndexError, match="index 3 out of range"):
        t.select(1, 3)
    with pytest.raises(RuntimeError, match=r"start \(2\) \+ length \(2\) exceeds dimension size"):
        t.narrow(1, 2, 2)
    with pytest.raises(IndexError, match="start out of range"):
        t.narrow(1, 4, 0)


def test_expand_adds_zero_strides_and_leading_dims() -> None:
    t = ember.tensor(DATA[:, :1])
    e = t.expand(7, 2, -1, 4, -1)
    assert e.shape == (7, 2, 1, 4, 5) and e.stride() == (0, 20, 20, 5, 1) and shares(e, t)
    wide = t.expand(2, 3, 4, 5)
    assert wide.stride() == (20, 0, 5, 1)
    np.testing.assert_array_equal(host(wide), np.broadcast_to(DATA[:, :1], (2, 3, 4, 5)))
    assert scalar(2.0).expand(3, 2).stride() == (0, 0)
    assert t.expand_as(ember.zeros(2, 6, 4, 5)).shape == (2, 6, 4, 5)


@pytest.mark.parametrize(
    ("sizes", "message"),
    [
        ((2, 1, 4, 6), r"expanded size of the tensor \(6\) must match the existing size \(5\)"),
        ((4, 5), "must be greater or equal to the number of dimensions"),
        ((-1, 2, 1, 4, 5), "isn't allowed in a leading, non-existing dimension 0"),
    ],
)
def test_expand_errors(sizes: tuple[int, ...], message: str) -> None:
    with pytest.raises(RuntimeError, match=message):
        ember.tensor(DATA[:, :1]).expand(sizes)


def test_squeeze_and_unsqueeze() -> None:
    t = ember.tensor(DATA)[:, :1, :, :1]
    assert t.squeeze().shape == (2, 4) and shares(t.squeeze(), t)
    assert t.squeeze(1).shape == (2, 4, 1) and t.squeeze(0).shape == t.shape
    assert t.squeeze((1, -1)).shape == (2, 4)
    assert scalar(1.0).squeeze().shape == () and scalar(1.0).squeeze(0).shape == ()
    u = ember.tensor(DATA[0, 0])
    assert u.unsqueeze(1).shape == (4, 1, 5) and u.unsqueeze(1).stride() == (5, 5, 1)
    assert u.unsqueeze(-1).stride() == (5, 1, 1) and u.unsqueeze(0).shape == (1, 4, 5)
    assert scalar(1.0).unsqueeze(0).shape == (1,)
    with pytest.raises(IndexError, match="Dimension out of range"):
        u.unsqueeze(3)


# -- flatten, unflatten, split, chunk, unbind, as_strided ------------------------------------


@pytest.mark.parametrize(("start", "end"), [(0, -1), (1, 2), (0, 1), (2, 3), (1, 1)])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_flatten(start: int, end: int, layout: str) -> None:
    prepare, reference = LAYOUTS[layout]
    t = prepare(ember.tensor(DATA))
    expected = reference(DATA)
    shape = (*expected.shape[:start], -1, *expected.shape[end % 4 + 1 :])
    np.testing.assert_array_equal(host(t.flatten(start, end)), expected.reshape(shape))


def test_flatten_edge_cases() -> None:
    t = ember.tensor(DATA)
    assert t.flatten(1, 1) is t
    assert shares(t.flatten(), t)
    assert scalar(3.0).flatten().shape == (1,)
    with pytest.raises(RuntimeError, match="start_dim cannot come after end_dim"):
        t.flatten(2, 1)


def test_unflatten() -> None:
    t = ember.tensor(DATA)
    np.testing.assert_array_equal(host(t.unflatten(-1, (1, 5))), DATA.reshape(2, 3, 4, 1, 5))
    assert t.unflatten(1, (-1, 1)).shape == (2, 3, 1, 4, 5) and shares(t.unflatten(1, (3, 1)), t)
    assert t.permute(3, 1, 0, 2).unflatten(0, (5, 1)).shape == (5, 1, 3, 2, 4)
    with pytest.raises(RuntimeError, match="don't multiply up to the size of dim 1"):
        t.unflatten(1, (2, 2))


@pytest.mark.parametrize(
    ("split", "dim"), [(2, 0), (2, 1), (1, 2), ([1, 2], 1), ([0, 0, 3], 1), (3, -1), (10, 2)]
)
def test_split(split: Any, dim: int) -> None:
    t = ember.tensor(DATA)
    pieces = t.split(split, dim)
    size = DATA.shape[dim]
    sizes = (
        split if isinstance(split, list) else [min(split, size - i) for i in range(0, size, split)]
    )
    expected = np.split(DATA, np.cumsum(sizes)[:-1], axis=dim)
    assert len(pieces) == len(expected)
    for piece, want in zip(pieces, expected, strict=True):
        np.testing.assert_array_equal(host(piece), want)
        assert shares(piece, t)
    with pytest.raises(RuntimeError, match="split_with_sizes expects split_sizes to sum exactly"):
        t.split([1, 1], 1)


@pytest.mark.parametrize(
    ("chunks", "dim", "sizes"),
    [(2, 1, [2, 1]), (5, 3, [1] * 5), (3, 3, [2, 2, 1]), (7, 2, [1] * 4)],
)
def test_chunk(chunks: int, dim: int, sizes: list[int]) -> None:
    assert [p.shape[dim] for p in ember.tensor(DATA).chunk(chunks, dim)] == sizes


def test_chunk_of_an_empty_dim_returns_that_many_pieces() -> None:
    assert [p.shape for p in ember.zeros(0, 2).chunk(3)] == [(0, 2)] * 3
    with pytest.raises(RuntimeError, match="greater than 0"):
        ember.zeros(2).chunk(0)


def test_unbind() -> None:
    t = ember.tensor(DATA)
    pieces = t.unbind(-2)
    assert len(pieces) == 4 and all(shares(p, t) for p in pieces)
    np.testing.assert_array_equal(host(pieces[3]), DATA[:, :, 3])


def test_as_strided() -> None:
    t = ember.arange(10)
    windows = t.as_strided((4, 3), (2, 1), 1)
    np.testing.assert_array_equal(host(windows), [[1, 2, 3], [3, 4, 5], [5, 6, 7], [7, 8, 9]])
    assert shares(windows, t) and windows.storage_offset() == 1
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        t.as_strided((4, 3), (3, 1), 1)


# -- cat and stack ----------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_cat_values_and_promotion(dim: int) -> None:
    parts = [DATA, DATA[:, :, :, :2], DATA[:, :, :, :1]] if dim == -1 else [DATA, DATA]
    dtypes = [ember.float32, ember.float64, ember.int64][: len(parts)]
    result = ember.cat([ember.tensor(p, dtype=d) for p, d in zip(parts, dtypes, strict=True)], dim)
    assert result.dtype is ember.float64
    np.testing.assert_array_equal(host(result), np.concatenate(parts, axis=dim))


def test_cat_of_non_contiguous_inputs_and_legacy_empty_tensors() -> None:
    a = ember.tensor(DATA).permute(3, 1, 0, 2)
    b = ember.tensor(DATA)[:, :, ::2].permute(3, 1, 0, 2)
    np.testing.assert_array_equal(
        host(ember.cat([a, ember.zeros(0), b], dim=3)),
        np.concatenate([DATA.transpose(3, 1, 0, 2), DATA[:, :, ::2].transpose(3, 1, 0, 2)], 3),
    )
    assert ember.cat([ember.zeros(0), ember.zeros(0, dtype=ember.int64)]).shape == (0,)


@pytest.mark.parametrize(
    ("tensors", "error", "message"),
    [
        (
            lambda: [ember.zeros(2, 3), ember.zeros(3, 3)],
            RuntimeError,
            "Sizes of tensors must match",
        ),
        (lambda: [ember.zeros(2, 3), ember.zeros(3)], RuntimeError, "same number of dimensions"),
        (lambda: [scalar(1.0)], RuntimeError, "zero-dimensional tensor"),
        (lambda: [], ValueError, "expected a non-empty list of Tensors"),
        (lambda: ember.zeros(2), TypeError, "must be tuple of Tensors"),
    ],
    ids=range(5),
)
def test_cat_errors(tensors: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        ember.cat(tensors(), 1)


def test_stack() -> None:
    parts = [DATA[0], DATA[1] + 1]
    for dim in (0, 1, -1):
        result = ember.stack([ember.tensor(p) for p in parts], dim)
        np.testing.assert_array_equal(host(result), np.stack(parts, axis=dim))
    assert ember.stack([scalar(1.0), scalar(2.0)]).tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        ember.stack([ember.zeros(2), ember.zeros(3)])
    with pytest.raises(RuntimeError, match="non-empty TensorList"):
        ember.stack([])


def test_shape_ops_are_public_names() -> None:
    for name in ("view", "reshape", "permute", "transpose", "t", "select", "narrow", "expand",
                 "squeeze", "unsqueeze", "flatten", "unflatten", "split", "chunk", "unbind",
                 "as_strided", "cat", "stack", "movedim"):  # fmt: skip
        assert callable(getattr(ember, name))
