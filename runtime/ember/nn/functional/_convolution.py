"""The three differentiable convolutions behind conv1d, conv2d and conv_transpose2d.

`convolution` (y = W * x), `convolution_transpose` (its adjoint in x) and
`convolution_weight` (its adjoint in W) run on the im2col/col2im device kernels and one
matrix product each: the columns of a whole batch form a (C*kh*kw, N*Ho*Wo) matrix, so a
batch is a single GEMM (a bmm over groups), whose (C_out, N*Ho*Wo) result is permuted to
NCHW while the bias is added. Each records one node, and their derivative formulas are the
other two (the gradient of a convolution in x is a transposed convolution, and so on), so
gradients of every order stay in these ops.

Arguments have been checked by the public functions (_conv.py). Tensors keep the caller's
rank: (N, C, H, W) or unbatched (C, H, W), and for 1-d convolutions (N, C, L) or (C, L),
viewed here as images of height 1. float16 is computed in float32.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ember import _dtype
from ember._dispatch import kernel_for
from ember._ops import _launch, names, reduction
from ember._ops.linalg import launch_product
from ember._tensor import Tensor, contiguous_strides, empty_tensor, make_view
from ember.autograd import _mode
from ember.autograd._graph import needs_grad, record

__all__ = [
    "COL2IM", "IM2COL", "Geometry", "convolution", "convolution_transpose", "convolution_weight"
]  # fmt: skip

IM2COL: Final = names.IM2COL
COL2IM: Final = names.COL2IM

Shape = tuple[int, ...]
Pair = tuple[int, int]

_COPY: Final = names.COPY
_ADD: Final = names.BINARY["add"]


class Geometry:
    """How windows are laid out: (h, w) stride, top-left padding, dilation; groups; and
    whether tensors are 1-d signals (spatial=1) or 2-d images (spatial=2)."""

    __slots__ = ("dilation", "groups", "padding", "spatial", "stride")

    def __init__(
        self, stride: Pair, padding: Pair, dilation: Pair, groups: int, spatial: int
    ) -> None:
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.groups = groups
        self.spatial = spatial


# -- layouts ------------------------------------------------------------------------------------


def _as_nchw(t: Tensor, geo: Geometry, compute: _dtype.dtype) -> Tensor:
    """`t` as a contiguous 4-d tensor of the compute dtype (a view when it already is one)."""
    if not t._contiguous or t._dtype is not compute:
        copy = empty_tensor(t._shape, compute, t._device)
        _launch.copy(copy, t)
        t = copy
    shape = t._shape if _batched(t, geo) else (1, *t._shape)
    if geo.spatial == 1:
        shape = (*shape[:2], 1, shape[2])
    return make_view(t, t._offset, shape, contiguous_strides(shape))


def _caller_shape(shape4: Shape, geo: Geometry, batched: bool) -> Shape:
    """A 4-d shape in the caller's rank (no batch dim when unbatched, no height when 1-d)."""
    shape = shape4 if geo.spatial == 2 else (*shape4[:2], shape4[3])
    return shape if batched else shape[1:]


def _batched(t: Tensor, geo: Geometry) -> bool:
    return len(t._shape) == geo.spatial + 2


def _spatial(t: Tensor, geo: Geometry) -> Pair:
    return (1, t._shape[-1]) if geo.spatial == 1 else (t._shape[-2], t._shape[-1])


def _columns_view(cols: Tensor, n: int, c: int, kernel: Pair, out_hw: Pair) -> Tensor:
    """The (C*kh*kw, N*L) column matrix seen as the kernels' (N, C, kh, kw, Ho, Wo)."""
    kh, kw = kernel
    oh, ow = out_hw
    batch = n * oh * ow
    strides = (oh * ow, kh * kw * batch, kw * batch, batch, ow, 1)
    return make_view(cols, cols._offset, (n, c, kh, kw, oh, ow), strides)


def _im2col(x: Tensor, kernel: Pair, out_hw: Pair, geo: Geometry) -> Tensor:
    n, c = x._shape[:2]
    cols = empty_tensor((c * kernel[0] * kernel[1], n * out_hw[0] * out_hw[1]), x._dtype, x._device)
    view = _columns_view(cols, n, c, kernel, out_hw)
    kernel_for(IM2COL, x._device, x._dtype)(view, x, geo.stride, geo.padding, geo.dilation)
    return cols


def _col2im(cols: Tensor, image: Shape, kernel: Pair, out_hw: Pair, geo: Geometry) -> Tensor:
    x = empty_tensor(image, cols._dtype, cols._device)
    view = _columns_view(cols, image[0], image[1], kernel, out_hw)
    kernel_for(COL2IM, x._device, x._dtype)(x, view, geo.stride, geo.padding, geo.dilation)
    return x


def _channels_first(t: Tensor) -> Tensor:
    """(N, C, H, W) -> the contiguous (C, N*H*W) matrix (a view when N == 1)."""
    n, c, h, w = t._shape
    if n == 1 and t._contiguous:
        return make_view(t, t._offset, (c, h * w), (h * w, 1))
    out = empty_tensor((c, n, h, w), t._dtype, t._device)
    permuted = make_view(
        t, t._offset, (c, n, h, w), (t._strides[1], t._strides[0], *t._strides[2:])
    )
    _launch.copy(out, permuted)
    return make_view(out, 0, (c, n * h * w), (n * h * w, 1))


def _add_bias(out: Tensor, source: Tensor, bias: Tensor) -> None:
    """out = source + bias over the channel dim (out and source 4-d, any strides)."""
    spread = make_view(bias, bias._offset, out._shape, (0, bias._strides[0], 0, 0))
    _launch.launch_binary(_ADD, out, source, spread, out._dtype)


def _to_nchw(product: Tensor, n: int, c: int, out_hw: Pair, bias: Tensor | None) -> Tensor:
    """The (C, N*Ho*Wo) product as a contiguous (N, C, Ho, Wo) tensor, plus the bias."""
    oh, ow = out_hw
    shape = (n, c, oh, ow)
    source = make_view(product, product._offset, shape, (oh * ow, n * oh * ow, ow, 1))
    if n == 1 and bias is None:
        return source
    out = empty_tensor(shape, product._dtype, product._device)
    if bias is None:
        _launch.copy(out, source)
    else:
        _add_bias(out, source, bias)
    return out


def _grouped_product(a: Tensor, b: Tensor) -> Tensor:
    """(G, M, K) @ (G, K, N) -> the contiguous (G*M, N) matrix; mm when G == 1."""
    g, m, _ = a._shape
    n = b._shape[2]
    if g == 1:
        out = empty_tensor((m, n), a._dtype, a._device)
        a2 = make_view(a, a._offset, a._shape[1:], a._strides[1:])
        b2 = make_view(b, b._offset, b._shape[1:], b._strides[1:])
        return launch_product(out, a2, b2)
    out = launch_product(empty_tensor((g, m, n), a._dtype, a._device), a, b)
    return make_view(out, 0, (g * m, n), (n, 1))


def _grouped(t: Tensor, groups: int) -> Tensor:
    """A contiguous (R, K) matrix as (G, R/G, K)."""
    rows, cols = t._shape
    return make_view(t, t._offset, (groups, rows // groups, cols), (rows // groups * cols, cols, 1))


def _transposed(t: Tensor) -> Tensor:
    """The last two dims of `t` swapped (a view)."""
    s = t._strides
    return make_view(
        t, t._offset, (*t._shape[:-2], t._shape[-1], t._shape[-2]), (*s[:-2], s[-1], s[-2])
    )


def _weight_matrix(w: Tensor) -> Tensor:
    """(C_out, C_in/G, kh, kw) contiguous -> (C_out, C_in/G*kh*kw)."""
    rows, cols = w._shape[0], w._shape[1] * w._shape[2] * w._shape[3]
    return make_view(w, w._offset, (rows, cols), (cols, 1))


# -- the computations ----------------------------------------------------------------------------


def _forward(
    x: Tensor, w: Tensor, b: Tensor | None, geo: Geometry, out_hw: Pair
) -> tuple[Tensor, Tensor]:
    """conv (x, w 4-d contiguous) -> (y, columns)."""
    n = x._shape[0]
    c_out, kernel = w._shape[0], (w._shape[2], w._shape[3])
    cols = _im2col(x, kernel, out_hw, geo)
    groups = geo.groups
    product = _grouped_product(_grouped(_weight_matrix(w), groups), _grouped(cols, groups))
    return _to_nchw(product, n, c_out, out_hw, b), cols


def _input_from(g2: Tensor, w: Tensor, geo: Geometry, image: Shape, in_hw: Pair) -> Tensor:
    """col2im(W^T g2): g2 (C_w0, N*Hi*Wi) contiguous, w (C_w0, C/G, kh, kw) -> `image`."""
    weights = _transposed(_grouped(_weight_matrix(w), geo.groups))
    cols = _grouped_product(weights, _grouped(g2, geo.groups))
    return _col2im(cols, image, (w._shape[2], w._shape[3]), in_hw, geo)


def _weight_from(g2: Tensor, cols: Tensor, geo: Geometry, shape: Shape) -> Tensor:
    """g2 (C_out, N*L) times cols (K, N*L) transposed, as a contiguous weight of `shape`.

    Computed as cols @ g2^T per group, which OpenBLAS ran ~10% faster than g2 @ cols^T
    here (measured before the cpu device's float32 GEMM moved to oneDNN), then transposed
    back (the weight is small)."""
    groups = geo.groups
    product = _grouped_product(_grouped(cols, groups), _transposed(_grouped(g2, groups)))
    k_group, c_group = product._shape[0] // groups, shape[0] // groups
    flipped = make_view(product, 0, (groups, c_group, k_group), (k_group * c_group, 1, c_group))
    out = empty_tensor(shape, product._dtype, product._device)
    out_view = make_view(out, 0, flipped._shape, contiguous_strides(flipped._shape))
    _launch.copy(out_view, flipped)
    return out


def _transpose_forward(
    x: Tensor, w: Tensor, b: Tensor | None, geo: Geometry, out_hw: Pair
) -> Tensor:
    """Transposed conv: x (N, C_in, Hi, Wi), w (C_in, C_out/G, kh, kw) -> (N, C_out, *out_hw)."""
    image = (x._shape[0], w._shape[1] * geo.groups, *out_hw)
    y = _input_from(_channels_first(x), w, geo, image, (x._shape[2], x._shape[3]))
    if b is not None:
        _add_bias(y, y, b)
    return y


def _weight_backward(
    x: Tensor, g: Tensor, kernel: Pair, geo: Geometry, cols: Tensor | None
) -> Tensor:
    """sum over the batch of g (N, C_out, Ho, Wo) times the columns of x: W's shape."""
    if cols is None:
        cols = _im2col(x, kernel, (g._shape[2], g._shape[3]), geo)
    shape = (g._shape[1], x._shape[1] // geo.groups, *kernel)
    return _weight_from(_channels_first(g), cols, geo, shape)


def _fused_backward(node: Any, g: Tensor) -> Sequence[Tensor | None]:
    """conv's three gradients from one permuted copy of g, when nothing records (no
    create_graph): the composable formula would permute g twice and sum it separately."""
    geo: Geometry = node.ctx
    x, w, *saved = node.saved
    want_x, want_w, want_b = _edges(node)
    compute = _compute_dtype(x._dtype)
    g4 = _as_nchw(g, geo, compute)
    g2 = _channels_first(g4)
    w4 = _as_nchw(w, geo, compute)
    out_hw = (g4._shape[2], g4._shape[3])
    gx = gw = gb = None
    if want_x:
        image = (g4._shape[0], w4._shape[1] * geo.groups, *_spatial(x, geo))
        gx = _result(_input_from(g2, w4, geo, image, out_hw), x._dtype, geo, _batched(x, geo))
    if want_w:
        kernel = (w4._shape[2], w4._shape[3])
        cols = saved[0] if saved else _im2col(_as_nchw(x, geo, compute), kernel, out_hw, geo)
        gw = _result(_weight_from(g2, cols, geo, w4._shape), w._dtype, geo, True)
    if want_b:
        gb = reduction.sum(g2, 1)
    return gx, gw, gb


# -- the differentiable ops ------------------------------------------------------------------------


def _compute_dtype(dt: _dtype.dtype) -> _dtype.dtype:
    return _dtype.float32 if dt is _dtype.float16 or dt is _dtype.bfloat16 else dt


def _requires(t: Tensor | None) -> bool:
    return t is not None and t._autograd is not None and t._autograd.requires_grad


def _bias(b: Tensor | None, compute: _dtype.dtype) -> Tensor | None:
    if b is None or b._dtype is compute:
        return b
    copy = empty_tensor(b._shape, compute, b._device)
    _launch.copy(copy, b)
    return copy


def _result(y: Tensor, dt: _dtype.dtype, geo: Geometry, batched: bool) -> Tensor:
    """y (4-d, contiguous) in the caller's rank and dtype."""
    shape = _caller_shape(y._shape, geo, batched)
    if y._dtype is dt:
        return make_view(y, y._offset, shape, contiguous_strides(shape))
    out = empty_tensor(shape, dt, y._device)
    _launch.copy(out, make_view(y, y._offset, shape, out._strides))
    return out


def _kernel_size(w: Tensor, geo: Geometry) -> Pair:
    return (1, w._shape[-1]) if geo.spatial == 1 else (w._shape[-2], w._shape[-1])


def _edges(node: Any) -> list[bool]:
    """Which of the node's inputs want a gradient."""
    return [edge[0] is not None for edge in node.next_functions]


def _bias_grad(g: Tensor, geo: Geometry) -> Tensor:
    channel = 1 if _batched(g, geo) else 0
    return reduction.sum(g, [d for d in range(len(g._shape)) if d != channel])


def convolution(x: Tensor, w: Tensor, b: Tensor | None, geo: Geometry, out_hw: Pair) -> Tensor:
    """y = w * x + b, windows laid out by `geo`; out_hw is the output's (Ho, Wo)."""
    compute = _compute_dtype(x._dtype)
    y4, cols = _forward(
        _as_nchw(x, geo, compute), _as_nchw(w, geo, compute), _bias(b, compute), geo, out_hw
    )
    y = _result(y4, x._dtype, geo, _batched(x, geo))
    if needs_grad(x, w, b):
        save = (x, w, cols) if _requires(w) else (x, w)
        record("ConvolutionBackward0", _convolution_backward, (x, w, b), y, save, ctx=geo)
    return y


def _convolution_backward(node: Any, g: Tensor) -> Sequence[Tensor | None]:
    if not _mode.STATE.enabled:
        return _fused_backward(node, g)
    geo: Geometry = node.ctx
    x, w, *cols = node.saved
    want_x, want_w, want_b = _edges(node)
    gx = convolution_transpose(g, w, None, geo, _spatial(x, geo)) if want_x else None
    kernel = _kernel_size(w, geo)
    gw = convolution_weight(x, g, geo, kernel, cols[0] if cols else None) if want_w else None
    return gx, gw, _bias_grad(g, geo) if want_b else None


def convolution_transpose(
    x: Tensor, w: Tensor, b: Tensor | None, geo: Geometry, out_hw: Pair
) -> Tensor:
    """The adjoint of `convolution` in its input: w is (C_in, C_out/G, kh, kw)."""
    compute = _compute_dtype(x._dtype)
    y4 = _transpose_forward(
        _as_nchw(x, geo, compute), _as_nchw(w, geo, compute), _bias(b, compute), geo, out_hw
    )
    y = _result(y4, x._dtype, geo, _batched(x, geo))
    if needs_grad(x, w, b):
        record("ConvolutionBackward0", _transpose_backward, (x, w, b), y, (x, w), ctx=geo)
    return y


def _transpose_backward(node: Any, g: Tensor) -> Sequence[Tensor | None]:
    geo: Geometry = node.ctx
    x, w = node.saved
    want_x, want_w, want_b = _edges(node)
    gx = convolution(g, w, None, geo, _spatial(x, geo)) if want_x else None
    gw = convolution_weight(g, x, geo, _kernel_size(w, geo)) if want_w else None
    return gx, gw, _bias_grad(g, geo) if want_b else None


def convolution_weight(
    x: Tensor, g: Tensor, geo: Geometry, kernel: Pair, cols: Tensor | None = None
) -> Tensor:
    """The adjoint of `convolution` in its weight: the gradient for output gradient g.

    `cols` are x's columns when the forward pass kept them (in the compute dtype).
    """
    compute = _compute_dtype(x._dtype)
    w4 = _weight_backward(_as_nchw(x, geo, compute), _as_nchw(g, geo, compute), kernel, geo, cols)
    result = _result(w4, x._dtype, geo, batched=True)  # C_out leads the weight, as N would
    if needs_grad(x, g):
        record("ConvolutionBackwardWeight", _weight_formula, (x, g), result, (x, g), ctx=geo)
    return result


def _weight_formula(node: Any, grad: Tensor) -> Sequence[Tensor | None]:
    geo: Geometry = node.ctx
    x, g = node.saved
    want_x, want_g = _edges(node)
    gx = convolution_transpose(g, grad, None, geo, _spatial(x, geo)) if want_x else None
    gg = convolution(x, grad, None, geo, _spatial(g, geo)) if want_g else None
    return gx, gg
