"""unfold (im2col) and fold (col2im): sliding blocks of an image as columns, and back.

Both run on the device im2col/col2im kernels that the convolutions use (_convolution.py)
and are each other's adjoint, so each records one node whose formula is the other op:
gradients of every order stay in these two ops. conv3d and conv_transpose3d use them to
gather and scatter along the depth dim.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember._errors import DTypeError
from ember._ops import _launch
from ember._tensor import Tensor, contiguous_strides, empty_tensor, make_view
from ember.autograd._graph import needs_grad, record
from ember.nn.functional._convolution import Geometry, _col2im, _im2col

__all__ = ["fold", "unfold"]

Pair = tuple[int, int]
IntArg = int | Sequence[int]


def _pair(name: str, value: IntArg, what: str) -> Pair:
    values = [value] * 2 if isinstance(value, int) else list(value)
    if len(values) == 1:
        values = values * 2
    if len(values) != 2 or not all(isinstance(v, int) for v in values):
        raise RuntimeError(f"{name}(): {what} must be an int or a tuple of two ints, got {value}")
    return (values[0], values[1])


def _check_args(k: Pair, d: Pair, p: Pair, s: Pair) -> None:
    if min(k) <= 0:
        raise RuntimeError(
            f"kernel size should be greater than zero, but got kernel_height: {k[0]} "
            f"kernel_width: {k[1]}"
        )
    if min(d) <= 0:
        raise RuntimeError(
            f"dilation should be greater than zero, but got dilation_height: {d[0]} "
            f"dilation_width: {d[1]}"
        )
    if min(p) < 0:
        raise RuntimeError(
            f"padding should be non-negative, but got pad_height: {p[0]} pad_width: {p[1]}"
        )
    if min(s) <= 0:
        raise RuntimeError(
            f"stride should be greater than zero, but got stride_height: {s[0]} "
            f"stride_width: {s[1]}"
        )


def _blocks(size: Pair, k: Pair, d: Pair, p: Pair, s: Pair) -> Pair:
    """How many sliding blocks fit along each dim."""
    h, w = ((size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in (0, 1))
    return (h, w)


def _contiguous(t: Tensor) -> Tensor:
    if t._contiguous:
        return t
    copy = empty_tensor(t._shape, t._dtype, t._device)
    _launch.copy(copy, t)
    return copy


def _check_float(name: str, t: Tensor) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(t).__name__}")
    if not t._dtype.is_floating_point:
        raise DTypeError(f"\"{name}\" not implemented for '{t._dtype.name}'")


def unfold(
    input: Tensor,
    kernel_size: IntArg,
    dilation: IntArg = 1,
    padding: IntArg = 0,
    stride: IntArg = 1,
) -> Tensor:
    """(N, C, H, W) -> (N, C*kh*kw, L): each column is one sliding block (im2col)."""
    name = "im2col"
    _check_float("unfold", input)
    if input.ndim not in (3, 4):
        raise NotImplementedError(
            f"Input Error: Only 3D or 4D input Tensors are supported (got {input.ndim}D)"
        )
    k, d = _pair(name, kernel_size, "kernel_size"), _pair(name, dilation, "dilation")
    p, s = _pair(name, padding, "padding"), _pair(name, stride, "stride")
    _check_args(k, d, p, s)
    size = (input._shape[-2], input._shape[-1])
    out_hw = _blocks(size, k, d, p, s)
    if min(out_hw) < 1:
        raise RuntimeError(
            f"Given input with spatial size ({size[0]}, {size[1]}), kernel_size=({k[0]}, "
            f"{k[1]}), dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), calculated shape "
            f"of the array of sliding blocks as ({out_hw[0]}, {out_hw[1]}), but its components "
            "must be at least one."
        )
    return _unfold(input, k, out_hw, Geometry(s, p, d, 1, 2))


def fold(
    input: Tensor,
    output_size: IntArg,
    kernel_size: IntArg,
    dilation: IntArg = 1,
    padding: IntArg = 0,
    stride: IntArg = 1,
) -> Tensor:
    """(N, C*kh*kw, L) -> (N, C, *output_size): blocks summed back into an image (col2im)."""
    name = "col2im"
    _check_float("fold", input)
    if input.ndim not in (2, 3):
        raise NotImplementedError(
            "Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported "
            f"(got {input.ndim}D)"
        )
    size = _pair(name, output_size, "output_size")
    k, d = _pair(name, kernel_size, "kernel_size"), _pair(name, dilation, "dilation")
    p, s = _pair(name, padding, "padding"), _pair(name, stride, "stride")
    _check_args(k, d, p, s)
    if min(size) <= 0:
        raise RuntimeError(
            f"Expected output spatial size to be positive, but got: output_size=({size[0]}, "
            f"{size[1]})"
        )
    rows, length = input._shape[-2], input._shape[-1]
    if rows % (k[0] * k[1]):
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={rows} and kernel_size=({k[0]}, {k[1]})"
        )
    blocks = _blocks(size, k, d, p, s)
    if min(blocks) < 1 or blocks[0] * blocks[1] != length:
        raise RuntimeError(
            f"Given output_size=({size[0]}, {size[1]}), kernel_size=({k[0]}, {k[1]}), "
            f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), "
            "expected size of input's dimension 2 to match the calculated number of sliding "
            f"blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
            f"input.size(2)={length}."
        )
    return _fold(input, size, k, blocks, Geometry(s, p, d, 1, 2))


def _unfold(x: Tensor, k: Pair, out_hw: Pair, geo: Geometry) -> Tensor:
    batched = x.ndim == 4
    x4 = _contiguous(x)
    shape4 = x4._shape if batched else (1, *x4._shape)
    x4 = make_view(x4, x4._offset, shape4, contiguous_strides(shape4))
    n, c = shape4[:2]
    rows, length = c * k[0] * k[1], out_hw[0] * out_hw[1]
    cols = _im2col(x4, k, out_hw, geo)  # (C*kh*kw, N*L)
    out = empty_tensor((n, rows, length), x._dtype, x._device)
    _launch.copy(out, make_view(cols, 0, (n, rows, length), (length, n * length, 1)))
    result = out if batched else make_view(out, 0, (rows, length), (length, 1))
    if needs_grad(x):
        ctx = ((x._shape[-2], x._shape[-1]), k, out_hw, geo)
        record("Im2ColBackward0", _unfold_formula, (x,), result, ctx=ctx)
    return result


def _unfold_formula(node: Any, g: Tensor) -> Sequence[Tensor | None]:
    size, k, out_hw, geo = node.ctx
    return (_fold(g, size, k, out_hw, geo),)


def _fold(x: Tensor, size: Pair, k: Pair, blocks: Pair, geo: Geometry) -> Tensor:
    batched = x.ndim == 3
    rows, length = x._shape[-2], x._shape[-1]
    n = x._shape[0] if batched else 1
    c = rows // (k[0] * k[1])
    # col2im wants the (C*kh*kw, N*L) column matrix.
    cols = empty_tensor((rows, n * length), x._dtype, x._device)
    strides = x._strides if batched else (0, *x._strides)
    source = make_view(x, x._offset, (rows, n, length), (strides[1], strides[0], strides[2]))
    _launch.copy(make_view(cols, 0, (rows, n, length), (n * length, length, 1)), source)
    image = _col2im(cols, (n, c, *size), k, blocks, geo)
    result = image if batched else make_view(image, 0, (c, *size), contiguous_strides((c, *size)))
    if needs_grad(x):
        record("Col2ImBackward0", _fold_formula, (x,), result, ctx=(k, blocks, geo))
    return result


def _fold_formula(node: Any, g: Tensor) -> Sequence[Tensor | None]:
    k, blocks, geo = node.ctx
    return (_unfold(g, k, blocks, geo),)
