"""View properties: a random sequence of view ops gives NumPy's values, shares the base's
storage, has (offset, strides) that address exactly those elements, and writes through.

The base holds 0..n-1, so a view's values name the storage elements it covers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import ember

Step = tuple[str, Callable[[Any], Any], Callable[[np.ndarray], np.ndarray]]


@st.composite
def view_step(draw: st.DrawFn, shape: tuple[int, ...], contiguous: bool) -> Step:
    """One view op that applies to a tensor of `shape`, with its NumPy twin (itself a view,
    so that NumPy's contiguity flag tracks the layout)."""
    ndim = len(shape)
    kinds = ["unsqueeze"]
    if ndim >= 1:
        kinds += ["slice", "select", "narrow", "squeeze", "unflatten"]
    if ndim >= 2:
        kinds += ["transpose", "permute", "mT"]
    if any(s == 1 for s in shape):
        kinds.append("expand")
    if contiguous:
        kinds.append("view")
    kind = draw(st.sampled_from(kinds))
    dim = draw(st.integers(0, ndim - 1)) if ndim else 0
    if kind == "unsqueeze":
        at = draw(st.integers(-ndim - 1, ndim))
        return kind, lambda t: t.unsqueeze(at), lambda a: np.expand_dims(a, at)
    if kind == "slice":
        size = shape[dim]
        start = draw(st.integers(-size - 1, size + 1))
        stop = draw(st.integers(-size - 1, size + 1))
        step = draw(st.integers(1, 3))
        key = (slice(None),) * dim + (slice(start, stop, step),)
        return kind, lambda t: t[key], lambda a: a[key]
    if kind == "select":
        if shape[dim] == 0:
            return "noop", lambda t: t, lambda a: a
        index = draw(st.integers(-shape[dim], shape[dim] - 1))
        key = (slice(None),) * dim + (index,)
        return kind, lambda t: t.select(dim, index), lambda a: a[key]
    if kind == "narrow":
        start = draw(st.integers(0, shape[dim]))
        length = draw(st.integers(0, shape[dim] - start))
        key = (slice(None),) * dim + (slice(start, start + length),)
        return kind, lambda t: t.narrow(dim, start, length), lambda a: a[key]
    if kind == "squeeze":
        return kind, lambda t: t.squeeze(dim), lambda a: a.squeeze(dim) if a.shape[dim] == 1 else a
    if kind == "unflatten":
        size = shape[dim]
        factor = draw(st.sampled_from([f for f in (1, 2, 3) if size % f == 0] or [1]))
        if size == 0:
            return "noop", lambda t: t, lambda a: a
        sizes = (factor, size // factor)
        new_shape = shape[:dim] + sizes + shape[dim + 1 :]
        return kind, lambda t: t.unflatten(dim, (factor, -1)), lambda a: a.reshape(new_shape)
    if kind == "transpose":
        other = draw(st.integers(-ndim, ndim - 1))
        return kind, lambda t: t.transpose(dim, other), lambda a: np.swapaxes(a, dim, other)
    if kind == "permute":
        order = draw(st.permutations(range(ndim)))
        return kind, lambda t: t.permute(*order), lambda a: np.transpose(a, order)
    if kind == "mT":
        return kind, lambda t: t.mT, lambda a: np.swapaxes(a, -1, -2)
    if kind == "expand":
        target = tuple(draw(st.integers(1, 3)) if s == 1 else s for s in shape)
        lead = tuple(draw(st.lists(st.integers(1, 2), max_size=1)))
        full = lead + target
        return kind, lambda t: t.expand(*full), lambda a: np.broadcast_to(a, full)
    numel = int(np.prod(shape))
    new = (numel,) if numel == 0 else draw(st.sampled_from(_factorizations(numel)))
    return kind, lambda t: t.view(*new), lambda a: a.reshape(new)


def _factorizations(n: int) -> list[tuple[int, ...]]:
    pairs = [(d, n // d) for d in range(1, n + 1) if n % d == 0]
    return [(n,), *pairs, *[(1, *p) for p in pairs[:2]]]


@st.composite
def view_chains(draw: st.DrawFn) -> tuple[tuple[int, ...], list[Step]]:
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=3)))
    current = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    steps = []
    for _ in range(draw(st.integers(1, 6))):
        step = draw(view_step(current.shape, current.flags.c_contiguous))
        current = step[2](current)
        steps.append(step)
    return shape, steps


@given(chain=view_chains())
def test_view_chains_match_numpy_and_share_storage(chain) -> None:
    shape, steps = chain
    values = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    base = ember.tensor(values)
    view, expected = base, values
    for _, apply, twin in steps:
        view, expected = apply(view), twin(expected)
    got = np.asarray(view)
    np.testing.assert_array_equal(got, expected, err_msg=str([name for name, *_ in steps]))
    assert view.untyped_storage() is base.untyped_storage()
    if got.size:
        addressed = np.lib.stride_tricks.as_strided(
            values.reshape(-1)[view.storage_offset() :],
            tuple(view.shape),
            tuple(s * values.itemsize for s in view.stride()),
        )
        np.testing.assert_array_equal(addressed, expected)
    strides = zip(view.stride(), view.shape, strict=True)
    if got.size and all(s != 0 or n == 1 for s, n in strides):
        view.fill_(-1.0)
        written = values.reshape(-1).copy()
        written[expected.reshape(-1).astype(np.int64)] = -1.0
        np.testing.assert_array_equal(np.asarray(base).reshape(-1), written)
        assert base._version == view._version > 0


@given(chain=view_chains())
def test_contiguous_copies_views_into_fresh_storage(chain) -> None:
    shape, steps = chain
    values = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    base = ember.tensor(values)
    view, expected = base, values
    for _, apply, twin in steps:
        view, expected = apply(view), twin(expected)
    dense = view.contiguous()
    assert dense.is_contiguous()
    np.testing.assert_array_equal(np.asarray(dense), expected)
    if not view.is_contiguous():
        assert dense.untyped_storage() is not base.untyped_storage()
    reshaped = view.reshape(-1)
    np.testing.assert_array_equal(np.asarray(reshaped), expected.reshape(-1))
