"""Reductions: sum, prod, mean, amax/amin, max/min, argmax/argmin, all/any and cumsum
(var, std and logsumexp, composites over these, are in statistics.py).

Primitives call a device kernel that writes a fresh, contiguous output in keepdim form;
without keepdim the result is a view of it with the reduced dims dropped. The composites
(mean, max/min along a dim, and statistics.py's) are written in ember ops and defined
here as composite ops, so that a device may override each with a fused kernel.
Differentiable primitives record their node here; their formulas live in
reduction_formulas.py. Composites record through their constituent ops (a fused kernel
is bypassed while grad is needed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, NamedTuple

from ember import _dtype
from ember._dispatch import Kernel, Op, kernel_for
from ember._errors import DTypeError
from ember._ops import conversion as conv
from ember._ops import elementwise as ew
from ember._ops import names
from ember._ops import reduction_formulas as formulas
from ember._ops import shape as shape_ops
from ember._ops._launch import (
    CONTIGUOUS_FULL_PLANS,
    full_reduction_plan,
    launch_binary,
    launch_reduction,
    launch_scan,
)
from ember._ops._launch import fill as launch_fill
from ember._ops._meta import wrap_dim, wrap_dims
from ember._tensor import Tensor, contiguous_strides, empty_tensor, make_view
from ember.autograd._graph import needs_grad, record

__all__ = [
    "all", "amax", "amin", "any", "argmax", "argmin", "cumsum", "max", "mean", "min", "prod",
    "sum",
]  # fmt: skip

Dims = tuple[int, ...]
DimArg = int | Sequence[int] | None

MEAN = names.MEAN
MAX_DIM, MIN_DIM = names.MAX_DIM, names.MIN_DIM

_SUM = names.REDUCTIONS["sum"]
_PROD = names.REDUCTIONS["prod"]
_AMAX = names.REDUCTIONS["amax"]
_AMIN = names.REDUCTIONS["amin"]
_ALL = names.REDUCTIONS["all"]
_ANY = names.REDUCTIONS["any"]

# PyTorch's ScalarType names, which its dtype error messages print.
_TORCH_NAMES = {
    "bool": "Bool",
    "uint8": "Byte",
    "int8": "Char",
    "int32": "Int",
    "int64": "Long",
    "float16": "Half",
    "float32": "Float",
    "float64": "Double",
    "bfloat16": "BFloat16",
}


class ValuesIndices(NamedTuple):
    """What max/min along a dim return (PyTorch's torch.return_types.max)."""

    values: Tensor
    indices: Tensor


# -- helpers -------------------------------------------------------------------------------


def _reduces_everything(dim: DimArg) -> bool:
    # PyTorch reads an empty dim list as "every dim", like None.
    return dim is None or (not isinstance(dim, int) and len(dim) == 0)


def _dims(t: Tensor, dim: DimArg, op: str) -> Dims:
    """The reduced dims, non-negative and sorted."""
    ndim = len(t._shape)
    if type(dim) is int and -ndim <= dim < ndim:  # the common case, without wrap_dims' checks
        return (dim + ndim if dim < 0 else dim,)
    if _reduces_everything(dim):
        return tuple(range(ndim))
    return tuple(sorted(wrap_dims(dim, ndim, op)))


def _keep_shape(shape: Dims, dims: Dims) -> Dims:
    return tuple(1 if i in dims else size for i, size in enumerate(shape))


def _count(shape: Dims, dims: Dims) -> int:
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _finish(out: Tensor, dims: Dims, keepdim: bool) -> Tensor:
    """A fresh keepdim-form output, or a view of it without the reduced dims."""
    if keepdim or not dims:
        return out
    shape = tuple(size for i, size in enumerate(out._shape) if i not in dims)
    return make_view(out, 0, shape, contiguous_strides(shape))


def _fused(op: Op, t: Tensor) -> Kernel | None:
    """A device's fused kernel for composite `op`; None when `t` needs grad, so that the
    composite's constituent ops record the graph."""
    if t._autograd is not None and needs_grad(t):
        return None
    return op.kernels.get(t._device.type)


def _run(
    kernel: Kernel, t: Tensor, dims: Dims, keepdim: bool, dt: _dtype.dtype, *extra: Any
) -> Tensor:
    out = empty_tensor(_keep_shape(t._shape, dims), dt, t._device)
    if 0 not in out._shape:
        kernel(out, t, dims, *extra)
    return _finish(out, dims, keepdim)


def _reduce(op: Op, t: Tensor, dims: Dims, keepdim: bool, dt: _dtype.dtype) -> Tensor:
    out = empty_tensor(_keep_shape(t._shape, dims), dt, t._device)
    launch_reduction(op, out, t, dims)
    return _finish(out, dims, keepdim)


def _as_1d(t: Tensor) -> Tensor:
    """A 0-d tensor seen as shape (1,), for kernels that reduce along one dim."""
    return make_view(t, t._offset, (1,), (1,))


def _check_nonempty(t: Tensor, dim: DimArg, op: str) -> None:
    if t.numel() != 0:
        return
    if _reduces_everything(dim):
        raise IndexError(
            f"{op}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    for d in (dim,) if isinstance(dim, int) else dim:  # type: ignore[union-attr]
        if t._shape[d] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")


def _floating_input(t: Tensor, dtype: _dtype.dtype | None, op: str) -> Tensor:
    """`t` cast to `dtype`, which must be floating, like mean()'s rule."""
    if dtype is None:
        if not t._dtype.is_floating_point:
            raise DTypeError(
                f"{op}(): could not infer output dtype. Input dtype must be either a floating "
                f"point or complex dtype. Got: {_TORCH_NAMES[t._dtype.name]}"
            )
        return t
    if not dtype.is_floating_point:
        raise DTypeError(
            f"{op}(): could not infer output dtype. Optional dtype must be either a floating "
            f"point or complex dtype. Got: {_TORCH_NAMES[dtype.name]}"
        )
    return t if t._dtype is dtype else conv.to(t, dtype)


# -- sums and products ------------------------------------------------------------------------


def _accumulate(
    op: Op, t: Tensor, dim: DimArg, keepdim: bool, dtype: _dtype.dtype | None, name: str
) -> Tensor:
    dims = _dims(t, dim, name)
    if dtype is not None and dtype is not t._dtype:
        t = conv.cast(t, dtype)
    acc = t._dtype if t._dtype.is_floating_point else _dtype.int64
    result = _reduce(op, t, dims, keepdim, acc)
    # Integer sums wrap modulo 2**64; narrowing afterwards equals accumulating in `dtype`.
    if dtype is not None and dtype is not acc:
        result = conv.cast(result, dtype)
    elif t._autograd is not None and needs_grad(t):
        keep = _keep_shape(t._shape, dims)
        if op is _SUM:
            record("SumBackward", formulas.sum_backward, (t,), result, ctx=(t._shape, keep))
        else:
            record("ProdBackward", formulas.prod_backward, (t,), result, (t,), ctx=(dims, keep))
    return result


def sum(
    input: Tensor, dim: DimArg = None, keepdim: bool = False, *, dtype: _dtype.dtype | None = None
) -> Tensor:
    """Sum over `dim` (every dim when None); integers and bool accumulate in int64."""
    if dim is None and dtype is None and not keepdim and type(input) is Tensor:
        # Fast path of `t.sum()`: a float tensor outside autograd, reduced to a 0-d tensor.
        dt, dev, ndim = input._dtype, input._device, len(input._shape)
        fn = _SUM.kernels.get(dev.type)
        if dt.is_floating_point and input._autograd is None and fn is not None and ndim:
            # A full reduction's plan has no kept dims: the 0-d result is the kernel's output.
            out = empty_tensor((), dt, dev)
            if input._contiguous and not input._offset:
                plan = CONTIGUOUS_FULL_PLANS[dt][input._shape]
            else:
                plan = full_reduction_plan(input, dt)
            fn(out._storage, input._storage, plan)
            return out
    return _accumulate(_SUM, input, dim, keepdim, dtype, "sum")


# Keepdim shapes and dim tuples of full reductions, by rank.
_ONES: Final = tuple((1,) * n for n in range(65))
_ALL_DIMS: Final = tuple(tuple(range(n)) for n in range(65))


def prod(
    input: Tensor, dim: DimArg = None, keepdim: bool = False, *, dtype: _dtype.dtype | None = None
) -> Tensor:
    """Product over `dim` (every dim when None); integers and bool accumulate in int64."""
    return _accumulate(_PROD, input, dim, keepdim, dtype, "prod")


def mean(
    input: Tensor, dim: DimArg = None, keepdim: bool = False, *, dtype: _dtype.dtype | None = None
) -> Tensor:
    """Arithmetic mean over `dim`; floating inputs only (or a floating `dtype=`)."""
    t = _floating_input(input, dtype, "mean")
    dims = _dims(t, dim, "mean")
    fused = _fused(MEAN, t)
    if fused is not None:
        return _run(fused, t, dims, keepdim, t._dtype)
    if t._dtype is _dtype.float16 or t._dtype is _dtype.bfloat16:
        # PyTorch's half mean accumulates and divides in float: a half sum of more than
        # 65504 would be inf before the division (and bfloat16 rounds once, at the end).
        wide = ew.div(sum(conv.to(t, _dtype.float32), dims, keepdim), _count(t._shape, dims))
        return conv.to(wide, t._dtype)
    return ew.div(sum(t, dims, keepdim), _count(t._shape, dims))


def cumsum(input: Tensor, dim: int, *, dtype: _dtype.dtype | None = None) -> Tensor:
    """Cumulative sum along `dim`; integers and bool accumulate in int64."""
    t = input
    d = wrap_dim(dim, len(t._shape), "cumsum")
    if dtype is None:
        dtype = t._dtype if t._dtype.is_floating_point else _dtype.int64
    out = empty_tensor(t._shape, dtype, t._device)
    launch_scan(names.CUMSUM, out, t, d)
    if t._autograd is not None and dtype.is_floating_point and needs_grad(t):
        record("CumsumBackward", formulas.cumsum_backward, (t,), out, ctx=d)
    return out


# -- extremes ---------------------------------------------------------------------------------


def amax(input: Tensor, dim: DimArg = (), keepdim: bool = False) -> Tensor:
    """Maximum over `dim` (every dim when empty); NaN propagates."""
    dims = _dims(input, dim, "amax")
    _check_nonempty(input, dim, "amax")
    return _record_extreme(
        "AmaxBackward", input, dims, _reduce(_AMAX, input, dims, keepdim, input._dtype)
    )


def amin(input: Tensor, dim: DimArg = (), keepdim: bool = False) -> Tensor:
    """Minimum over `dim` (every dim when empty); NaN propagates."""
    dims = _dims(input, dim, "amin")
    _check_nonempty(input, dim, "amin")
    return _record_extreme(
        "AminBackward", input, dims, _reduce(_AMIN, input, dims, keepdim, input._dtype)
    )


def _record_extreme(name: str, t: Tensor, dims: Dims, result: Tensor) -> Tensor:
    if t._autograd is not None and needs_grad(t):
        ctx = (dims, _keep_shape(t._shape, dims))
        record(name, formulas.extreme_backward, (t,), result, (t,), save_output=True, ctx=ctx)
    return result


def max(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """The largest element; with `dim`, (values, indices) along it; with a tensor, maximum."""
    return _extreme(input, dim, keepdim, "max", _AMAX, MAX_DIM, names.ARGMAX)


def min(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """The smallest element; with `dim`, (values, indices) along it; with a tensor, minimum."""
    return _extreme(input, dim, keepdim, "min", _AMIN, MIN_DIM, names.ARGMIN)


def _extreme(
    t: Tensor, dim: Any, keepdim: bool, name: str, values_op: Op, fused_op: Op, index_op: Op
) -> Any:
    if dim is None:
        if t.numel() == 0:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        dims = tuple(range(len(t._shape)))
        whole = _reduce(values_op, t, dims, False, t._dtype)
        return _record_extreme(name.capitalize() + "Backward", t, dims, whole)
    if isinstance(dim, Tensor):
        return ew.maximum(t, dim) if name == "max" else ew.minimum(t, dim)
    d = wrap_dim(dim, len(t._shape), name)
    if t._shape and t._shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")
    result = _extreme_along(t, d, keepdim, name, values_op, fused_op, index_op)
    if t._autograd is not None and needs_grad(t):
        # Along a dim the gradient goes to the returned index only, not shared among ties.
        ctx = (t._shape, d, _keep_shape(t._shape, (d,) if t._shape else ()))
        formula = formulas.value_at_index_backward
        values, indices = result
        record(name.capitalize() + "Backward", formula, (t,), values, (indices,), ctx=ctx)
    return result


def _extreme_along(
    t: Tensor, d: int, keepdim: bool, name: str, values_op: Op, fused_op: Op, index_op: Op
) -> ValuesIndices:
    fused = fused_op.kernels.get(t._device.type)
    dims = (d,) if t._shape else ()
    if fused is None:
        return ValuesIndices(
            _reduce(values_op, t, dims, keepdim, t._dtype),
            _arg_extreme(index_op, t, d, keepdim, name),
        )
    shape = _keep_shape(t._shape, dims)
    values = empty_tensor(shape, t._dtype, t._device)
    indices = empty_tensor(shape, _dtype.int64, t._device)
    if not t._shape:
        fused(_as_1d(values), _as_1d(indices), _as_1d(t), 0)
    elif 0 not in shape:
        fused(values, indices, t, d)
    return ValuesIndices(_finish(values, dims, keepdim), _finish(indices, dims, keepdim))


def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the first maximum along `dim`, or in the flattened tensor when None."""
    return _arg_extreme(names.ARGMAX, input, dim, keepdim, "argmax")


def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the first minimum along `dim`, or in the flattened tensor when None."""
    return _arg_extreme(names.ARGMIN, input, dim, keepdim, "argmin")


def _arg_extreme(op: Op, t: Tensor, dim: int | None, keepdim: bool, name: str) -> Tensor:
    kernel_for(op, t._device, t._dtype)  # a missing kernel fails before any check
    ndim = len(t._shape)
    if dim is None:
        if t.numel() == 0:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
            )
        flat = _as_1d(t) if ndim == 0 else shape_ops.reshape(t, (-1,))
        out = empty_tensor((1,), _dtype.int64, t._device)
        launch_scan(op, out, flat, 0)
        shape = (1,) * ndim if keepdim else ()
        return make_view(out, 0, shape, contiguous_strides(shape))
    d = wrap_dim(dim, ndim, name)
    if ndim == 0:
        out = empty_tensor((), _dtype.int64, t._device)
        launch_scan(op, out, t, 0)
        return out
    if t._shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")
    out = empty_tensor(_keep_shape(t._shape, (d,)), _dtype.int64, t._device)
    launch_scan(op, out, t, d)
    return _finish(out, (d,), keepdim)


# -- logic ------------------------------------------------------------------------------------


def all(input: Tensor, dim: DimArg = None, keepdim: bool = False) -> Tensor:
    """Whether every element over `dim` is non-zero (uint8 in, uint8 out, like PyTorch)."""
    return _logical(_ALL, input, dim, keepdim, "all")


def any(input: Tensor, dim: DimArg = None, keepdim: bool = False) -> Tensor:
    """Whether any element over `dim` is non-zero (uint8 in, uint8 out, like PyTorch)."""
    return _logical(_ANY, input, dim, keepdim, "any")


def _logical(op: Op, t: Tensor, dim: DimArg, keepdim: bool, name: str) -> Tensor:
    dims = _dims(t, dim, name)
    if op.kernels.get(t._device.type) is not None:
        result = _reduce(op, t, dims, keepdim, _dtype.bool)
    else:
        result = _logical_composite(op, t, dims, keepdim)
    return conv.cast(result, _dtype.uint8) if t._dtype is _dtype.uint8 else result


def _logical_composite(op: Op, t: Tensor, dims: Dims, keepdim: bool) -> Tensor:
    """any/all as amax/amin of the bool `t != 0` (NaN counts as true); an empty
    reduction gives the identity, false for any and true for all."""
    out = empty_tensor(_keep_shape(t._shape, dims), _dtype.bool, t._device)
    if _count(t._shape, dims) == 0:
        launch_fill(out, op is _ALL)
    else:
        flags = t
        if t._dtype is not _dtype.bool:
            flags = empty_tensor(t._shape, _dtype.bool, t._device)
            zero = conv.python_scalar(0, t._dtype)
            launch_binary(names.BINARY["ne"], flags, t, zero, t._dtype)
        launch_reduction(_AMIN if op is _ALL else _AMAX, out, flags, dims)
    return _finish(out, dims, keepdim)
