"""View and shape ops.

Every op here returns a view sharing its input's storage, except `cat` and `stack` (new
tensors) and `reshape`/`flatten` of a tensor whose strides no view can express (a copy,
as in PyTorch).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from ember import _dtype
from ember._ops import _launch
from ember._ops import shape_formulas as formulas
from ember._ops._meta import same_device, wrap_dim, wrap_dims
from ember._ops._view_geometry import as_strided, infer_size, int_tuple, view_dtype, view_strides
from ember._ops._view_split import chunk, split, unbind
from ember._tensor import Tensor, contiguous_strides, empty_tensor, make_view
from ember.autograd._graph import needs_grad, record

__all__ = [
    "as_strided", "cat", "chunk", "expand", "flatten", "movedim", "narrow", "permute", "reshape",
    "select", "split", "squeeze", "stack", "t", "transpose", "unbind", "unflatten", "unsqueeze",
    "view",
]  # fmt: skip

Shape = tuple[int, ...]


def view(t: Tensor, *shape: Any) -> Tensor:
    """`t`'s data with a new shape (one -1 is inferred); never copies."""
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        return view_dtype(t, shape[0])
    size = infer_size("view", int_tuple("view", shape), t.numel())
    strides = (
        contiguous_strides(size) if t._contiguous else view_strides(t._shape, t._strides, size)
    )
    if strides is None:
        raise RuntimeError(
            f"view size is not compatible with input tensor's size and stride (at least one "
            f"dimension spans across two contiguous subspaces): view {list(t._shape)} with "
            f"strides {list(t._strides)} as {list(size)}. Use .reshape(...) instead."
        )
    out = make_view(t, t._offset, size, strides)
    if t._autograd is not None:
        formulas.track("ViewBackward", formulas.reshape_backward, t, out, t._shape)
    return out


def reshape(t: Tensor, *shape: Any) -> Tensor:
    """`t` with a new shape: a view when the strides allow it, else a contiguous copy."""
    size = infer_size("reshape", int_tuple("reshape", shape), t.numel())
    strides = (
        contiguous_strides(size) if t._contiguous else view_strides(t._shape, t._strides, size)
    )
    if strides is not None:
        out = make_view(t, t._offset, size, strides)
    else:
        copy = empty_tensor(t._shape, t._dtype, t._device)
        _launch.copy(copy, t)
        out = make_view(copy, 0, size, contiguous_strides(size))
    if t._autograd is not None:
        formulas.track("ViewBackward", formulas.reshape_backward, t, out, t._shape)
    return out


def permute(t: Tensor, *dims: Any) -> Tensor:
    """A view with the dimensions reordered."""
    order = int_tuple("permute", dims, "dims")
    ndim = len(t._shape)
    if len(order) != ndim:
        raise RuntimeError(
            "permute(): number of dimensions in the tensor input does not match the length of "
            f"the desired ordering of dimensions i.e. input.dim() = {ndim} is not equal to "
            f"len(dims) = {len(order)}"
        )
    wrapped = [wrap_dim(d, ndim, "permute") for d in order]
    if len(set(wrapped)) != ndim:
        raise RuntimeError(f"permute(): duplicate dims are not allowed (got {list(order)})")
    shape, strides = t._shape, t._strides
    out = make_view(
        t, t._offset, tuple(shape[d] for d in wrapped), tuple(strides[d] for d in wrapped)
    )
    if t._autograd is not None:
        formulas.track("PermuteBackward", formulas.permute_backward, t, out, tuple(wrapped))
    return out


def transpose(t: Tensor, dim0: int, dim1: int) -> Tensor:
    """A view with two dimensions swapped."""
    ndim = len(t._shape)
    d0, d1 = wrap_dim(dim0, ndim, "transpose"), wrap_dim(dim1, ndim, "transpose")
    shape, strides = list(t._shape), list(t._strides)
    if ndim:
        shape[d0], shape[d1] = shape[d1], shape[d0]
        strides[d0], strides[d1] = strides[d1], strides[d0]
    out = make_view(t, t._offset, tuple(shape), tuple(strides))
    if t._autograd is not None:
        formulas.track("TransposeBackward", formulas.transpose_backward, t, out, (d0, d1))
    return out


def t(input: Tensor) -> Tensor:
    """The transpose of a matrix; 0-d and 1-d tensors are returned as views unchanged."""
    ndim = len(input._shape)
    if ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {ndim}D")
    return transpose(input, 0, ndim - 1) if ndim == 2 else _alias(input)


def movedim(t: Tensor, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
    """A view with the dims in `source` moved to the positions in `destination`."""
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
            f"contain the same number of dims as destination ({list(dst)} dims)"
        )
    ndim = len(t._shape)
    src = tuple(wrap_dim(d, ndim, "movedim") for d in src)
    dst = tuple(wrap_dim(d, ndim, "movedim") for d in dst)
    for name, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(dims)})")
    order = [d for d in range(ndim) if d not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return permute(t, order) if ndim else _alias(t)


def _alias(t: Tensor) -> Tensor:
    out = make_view(t, t._offset, t._shape, t._strides)
    if t._autograd is not None:
        formulas.track("AliasBackward", formulas.alias_backward, t, out, None)
    return out


def select(t: Tensor, dim: int, index: int) -> Tensor:
    """The slice at `index` along `dim`, without that dimension (a view)."""
    ndim = len(t._shape)
    if ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, ndim, "select")
    size = t._shape[d]
    i = operator.index(index)
    if not -size <= i < size:
        raise IndexError(
            f"select(): index {i} out of range for tensor of size {list(t._shape)} at dimension {d}"
        )
    if i < 0:
        i += size
    out = make_view(
        t,
        t._offset + i * t._strides[d],
        t._shape[:d] + t._shape[d + 1 :],
        t._strides[:d] + t._strides[d + 1 :],
    )
    if t._autograd is not None:
        formulas.track(
            "SelectBackward", formulas.slice_backward, t, out, (t._shape, select, (d, i))
        )
    return out


def narrow(t: Tensor, dim: int, start: int, length: int) -> Tensor:
    """Elements `start` to `start + length` along `dim` (a view)."""
    ndim = len(t._shape)
    if ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, ndim, "narrow")
    size = t._shape[d]
    begin, length = operator.index(start), operator.index(length)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -size <= begin <= size:
        raise IndexError(
            f"narrow(): start out of range (expected to be in range of [{-size}, {size}], but "
            f"got {begin})"
        )
    if begin < 0:
        begin += size
    if begin + length > size:
        raise RuntimeError(
            f"narrow(): start ({begin}) + length ({length}) exceeds dimension size ({size})."
        )
    out = make_view(
        t,
        t._offset + begin * t._strides[d],
        (*t._shape[:d], length, *t._shape[d + 1 :]),
        t._strides,
    )
    if t._autograd is not None:
        context = (t._shape, narrow, (d, begin, length))
        formulas.track("SliceBackward", formulas.slice_backward, t, out, context)
    return out


def expand(t: Tensor, *sizes: Any) -> Tensor:
    """A view broadcast to `sizes` (-1 keeps a size; new dims lead; stride 0 where expanded)."""
    target = int_tuple("expand", sizes)
    shape, strides = t._shape, t._strides
    ndim, tensor_ndim = len(target), len(shape)
    if ndim < tensor_ndim:
        raise RuntimeError(
            f"expand({t._dtype.name}{list(shape)}, size={list(target)}): the number of sizes "
            f"provided ({ndim}) must be greater or equal to the number of dimensions in the "
            f"tensor ({tensor_ndim})"
        )
    new_shape = [0] * ndim
    new_strides = [0] * ndim
    for i in range(ndim - 1, -1, -1):
        d = i - (ndim - tensor_ndim)
        if d >= 0:
            size, stride = shape[d], strides[d]
        else:
            # A new leading dim of size 1 gets the stride a contiguous tensor would have there.
            size, stride = 1, new_shape[i + 1] * new_strides[i + 1] if i + 1 < ndim else 1
        want = target[i]
        if want == -1:
            if d < 0:
                raise RuntimeError(
                    f"expand: the expanded size of the tensor (-1) isn't allowed in a "
                    f"leading, non-existing dimension {i}"
                )
            want = size
        elif want < 0:
            raise RuntimeError(
                f"expand: Trying to create tensor with negative dimension {want}: {list(target)}"
            )
        if size != want:
            if size != 1:
                raise RuntimeError(
                    f"The expanded size of the tensor ({want}) must match the existing size "
                    f"({size}) at non-singleton dimension {i}.  Target sizes: {list(target)}.  "
                    f"Tensor sizes: {list(shape)}"
                )
            size, stride = want, 0
        new_shape[i], new_strides[i] = size, stride
    out = make_view(t, t._offset, tuple(new_shape), tuple(new_strides))
    if t._autograd is not None:
        formulas.track("ExpandBackward", formulas.alias_backward, t, out, None)
    return out


def squeeze(t: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """A view without the size-1 dims (all of them, or those of `dim` that have size 1)."""
    shape, strides = t._shape, t._strides
    dims = range(len(shape)) if dim is None else wrap_dims(dim, len(shape), "squeeze")
    drop = {d for d in dims if shape[d] == 1}
    keep = [d for d in range(len(shape)) if d not in drop]
    out = make_view(t, t._offset, tuple(shape[d] for d in keep), tuple(strides[d] for d in keep))
    if t._autograd is not None:
        formulas.track("SqueezeBackward", formulas.reshape_backward, t, out, shape)
    return out


def unsqueeze(t: Tensor, dim: int) -> Tensor:
    """A view with a new size-1 dimension at `dim`."""
    shape, strides = t._shape, t._strides
    d = wrap_dim(dim, len(shape) + 1, "unsqueeze")
    stride = shape[d] * strides[d] if d < len(shape) else 1
    out = make_view(t, t._offset, (*shape[:d], 1, *shape[d:]), (*strides[:d], stride, *strides[d:]))
    if t._autograd is not None:
        formulas.track("UnsqueezeBackward", formulas.reshape_backward, t, out, shape)
    return out


def flatten(t: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Dims `start_dim`..`end_dim` merged into one (a view when possible); 0-d becomes 1-d."""
    shape = t._shape
    ndim = len(shape)
    start, end = wrap_dim(start_dim, ndim, "flatten"), wrap_dim(end_dim, ndim, "flatten")
    if ndim == 0:
        return reshape(t, (1,))
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return t
    merged = 1
    for size in shape[start : end + 1]:
        merged *= size
    return reshape(t, (*shape[:start], merged, *shape[end + 1 :]))


def unflatten(t: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """Dim `dim` split into `sizes` (one -1 is inferred); a view."""
    d = wrap_dim(dim, len(t._shape), "unflatten")
    split_sizes = int_tuple("unflatten", tuple(sizes), "sizes")
    if not split_sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    size = t._shape[d] if t._shape else 1
    try:
        split_sizes = infer_size("unflatten", split_sizes, size)
    except RuntimeError as error:
        if "only one dimension" in str(error):
            raise
        raise RuntimeError(
            f"unflatten: Provided sizes {list(split_sizes)} don't multiply up to the size of dim "
            f"{d} ({size}) in the input tensor"
        ) from None
    return view(t, (*t._shape[:d], *split_sizes, *t._shape[d + 1 :]))


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """`tensors` joined along an existing dim (type-promoted; a new tensor)."""
    inputs = _tensor_list("cat", tensors)
    if not inputs:
        raise ValueError("cat(): expected a non-empty list of Tensors")
    for i, x in enumerate(inputs):
        if not x._shape:
            raise RuntimeError(
                f"cat(): zero-dimensional tensor (at position {i}) cannot be concatenated"
            )
    dev = same_device("cat", *inputs)
    dt = _dtype.result_type(*inputs)
    # PyTorch's legacy rule: 1-d empty tensors are skipped whatever the other shapes are.
    kept = [x for x in inputs if x._shape != (0,)]
    if not kept:
        wrap_dim(dim, 1, "cat")
        out = empty_tensor((0,), dt, dev)
        if needs_grad(*inputs):
            _record_cat(inputs, out, 0)
        return out
    reference = kept[0]._shape
    d = wrap_dim(dim, len(reference), "cat")
    before, after = reference[:d], reference[d + 1 :]
    total = 0
    for x in kept:
        shape = x._shape
        if shape[:d] != before or shape[d + 1 :] != after or len(shape) != len(reference):
            _cat_mismatch(inputs, reference, d)
        total += shape[d]
    out = empty_tensor((*before, total, *after), dt, dev)
    if out.numel():
        copy = _launch.copy
        step = out._strides[d]
        offset = 0
        for x in kept:
            length = x._shape[d]
            if length:
                copy(make_view(out, offset * step, x._shape, out._strides), x)
            offset += length
    if needs_grad(*inputs):
        _record_cat(inputs, out, d)
    return out


def _record_cat(inputs: list[Tensor], out: Tensor, d: int) -> None:
    spans: list[tuple[int, int] | None] = []
    start = 0
    for x in inputs:
        if x._shape == (0,) and out._shape != (0,):
            spans.append(None)  # skipped by the legacy rule above
            continue
        spans.append((start, x._shape[d]))
        start += x._shape[d]
    record("CatBackward", formulas.cat_backward, inputs, out, ctx=(d, spans))


def _cat_mismatch(inputs: list[Tensor], reference: Shape, d: int) -> None:
    """Raise PyTorch's error for the first input whose shape does not fit."""
    for i, x in enumerate(inputs):
        if x._shape == (0,):
            continue
        if len(x._shape) != len(reference):
            raise RuntimeError(
                f"cat(): Tensors must have same number of dimensions: got {len(reference)} and "
                f"{len(x._shape)}"
            )
        for j, (want, got) in enumerate(zip(reference, x._shape, strict=True)):
            if j != d and want != got:
                raise RuntimeError(
                    f"cat(): Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{want} but got size {got} for tensor number {i} in the list."
                )


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """`tensors` (all one shape) joined along a new dim `dim` (a new tensor)."""
    inputs = _tensor_list("stack", tensors)
    if not inputs:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = inputs[0]._shape
    for i, x in enumerate(inputs):
        if x._shape != shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 "
                f"and {list(x._shape)} at entry {i}"
            )
    d = wrap_dim(dim, len(shape) + 1, "stack")
    return cat([unsqueeze(x, d) for x in inputs], d)


def _tensor_list(op: str, tensors: Sequence[Tensor]) -> list[Tensor]:
    if isinstance(tensors, Tensor):
        raise TypeError(f"{op}(): argument 'tensors' must be tuple of Tensors, not Tensor")
    inputs = list(tensors)
    for i, x in enumerate(inputs):
        if not isinstance(x, Tensor):
            raise TypeError(
                f"{op}(): expected Tensor as element {i} in argument 'tensors', but got "
                f"{type(x).__name__}"
            )
    return inputs
