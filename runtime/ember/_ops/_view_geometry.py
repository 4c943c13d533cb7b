"""Geometry of views: size arguments, -1 inference, the strides a view can have, and
`as_strided`, the view with any geometry."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from ember import _dtype
from ember._cstorage import exact_ints
from ember._ops import shape_formulas as formulas
from ember._tensor import Tensor, contiguous_strides, make_view

Shape = tuple[int, ...]


def int_tuple(op: str, args: Sequence[Any], what: str = "size") -> Shape:
    """Accept f(2, 3), f((2, 3)), f([2, 3]) and f(ember.Size(...)); -1 is kept."""
    found = exact_ints(args)  # the common case, in C
    if found is not None:
        return found
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    try:
        return tuple(a if type(a) is int else operator.index(a) for a in args)
    except TypeError:
        bad = next(a for a in args if not hasattr(a, "__index__"))
        raise TypeError(
            f"{op}(): argument '{what}' must be tuple of ints, but found element of type "
            f"{type(bad).__name__}"
        ) from None


def infer_size(op: str, size: Shape, numel: int) -> Shape:
    """`size` with its one -1 replaced so that the element count is `numel`."""
    infer = -1
    known = 1
    for i, s in enumerate(size):
        if s == -1:
            if infer >= 0:
                raise RuntimeError(f"{op}: only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"{op}: invalid shape dimension {s}")
        else:
            known *= s
    if infer < 0:
        if known == numel:
            return size
    elif known > 0 and numel % known == 0:
        return (*size[:infer], numel // known, *size[infer + 1 :])
    elif known == 0 and numel == 0:
        raise RuntimeError(
            f"{op}: cannot reshape tensor of 0 elements into shape {list(size)} because the "
            "unspecified dimension size -1 can be any value and is ambiguous"
        )
    raise RuntimeError(f"{op}: shape '{list(size)}' is invalid for input of size {numel}")


def view_strides(shape: Shape, strides: Shape, new_shape: Shape) -> Shape | None:
    """Strides that show (shape, strides) as `new_shape`, or None (PyTorch's computeStride)."""
    if not shape:
        return (1,) * len(new_shape)
    numel = 1
    for s in shape:
        numel *= s
    if numel == 0:
        return strides if shape == new_shape else contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    # Walk the old dims from the right in "chunks" of dims that are contiguous with each
    # other; the new dims must tile each chunk exactly.
    chunk_base = strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk_base = strides[d - 1]
                tensor_numel = view_numel = 1
    return tuple(new_strides) if view_d == -1 else None


def view_dtype(t: Tensor, dt: _dtype.dtype) -> Tensor:
    """The same bytes read as another dtype (PyTorch's Tensor.view(dtype))."""
    old, new = t._dtype.itemsize, dt.itemsize
    shape, strides, offset = list(t._shape), list(t._strides), t._offset
    if old != new:
        if not shape:
            raise RuntimeError(
                f"view: self.dim() cannot be 0 to view {t._dtype.name} as {dt.name} "
                "(different element sizes)"
            )
        if strides[-1] != 1:
            raise RuntimeError(
                f"view: self.stride(-1) must be 1 to view {t._dtype.name} as {dt.name}"
            )
        if old > new:
            ratio = old // new
            shape[-1] *= ratio
            strides = [s * ratio for s in strides[:-1]] + [1]
            offset *= ratio
        else:
            ratio = new // old
            if shape[-1] % ratio or offset % ratio or any(s % ratio for s in strides[:-1]):
                raise RuntimeError(
                    f"view: the last dimension, storage offset and strides of a "
                    f"{t._dtype.name} tensor must be divisible by {ratio} to view it as {dt.name}"
                )
            shape[-1] //= ratio
            strides = [s // ratio for s in strides[:-1]] + [1]
            offset //= ratio
    out = make_view(t, offset, tuple(shape), tuple(strides))
    out._dtype = dt
    return out


def as_strided(
    t: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
) -> Tensor:
    """A view of `t`'s storage with any geometry that stays inside the storage."""
    shape = int_tuple("as_strided", tuple(size))
    strides = int_tuple("as_strided", tuple(stride), "stride")
    offset = t._offset if storage_offset is None else operator.index(storage_offset)
    if len(shape) != len(strides):
        raise RuntimeError(
            f"as_strided: mismatch in length of strides and shape "
            f"({list(shape)} vs {list(strides)})"
        )
    if any(s < 0 for s in strides):
        raise RuntimeError(
            "as_strided: Negative strides are not supported at the moment, got strides: "
            f"{list(strides)}"
        )
    if any(s < 0 for s in shape) or offset < 0:
        raise RuntimeError(f"as_strided: negative size or storage offset ({list(shape)}, {offset})")
    itemsize = t._dtype.itemsize
    needed = (
        0
        if 0 in shape
        else offset + 1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=True))
    )
    if needed * itemsize > t._storage.nbytes:
        raise RuntimeError(
            f"setStorage: sizes {list(shape)}, strides {list(strides)}, storage offset {offset}, "
            f"and itemsize {itemsize} requiring a storage size of {needed * itemsize} are out of "
            f"bounds for storage of size {t._storage.nbytes}"
        )
    out = make_view(t, offset, shape, strides)
    if t._autograd is not None:
        # The geometries, not the tensors: backward reads only where elements sit.
        context = ((t._shape, t._strides, t._offset), (shape, strides, offset))
        formulas.track("AsStridedBackward", formulas.as_strided_backward, t, out, context)
    return out
