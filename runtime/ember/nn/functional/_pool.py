"""2-d pooling: max_pool2d, avg_pool2d and adaptive_avg_pool2d, with their backward ops.

Each forward and each backward is a composite op over contiguous NCHW planes: a device's
own kernel when it registers one, else the composite in _pool_composites.py. Forward ops
record a node whose formula calls the backward op; the backward ops record too (their
derivative is the forward pooling, or for max pooling a gather by the saved indices), so
gradients of every order stay in ember ops. Output sizes, ceil_mode, count_include_pad
and the error messages follow PyTorch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ember import _dtype
from ember._dispatch import Kernel, Op
from ember._errors import DTypeError
from ember._ops import _launch, indexing, names, shape
from ember._tensor import Tensor, contiguous_strides, empty_tensor, make_view
from ember.autograd._graph import needs_grad, record
from ember.nn.functional import _pool_composites as composites

__all__ = ["adaptive_avg_pool2d", "avg_pool2d", "max_pool2d"]

Pair = tuple[int, int]
Shape = tuple[int, ...]

MAX_POOL2D: Final = names.MAX_POOL2D
MAX_POOL2D_BACKWARD: Final = names.MAX_POOL2D_BACKWARD
AVG_POOL2D: Final = names.AVG_POOL2D
AVG_POOL2D_BACKWARD: Final = names.AVG_POOL2D_BACKWARD
ADAPTIVE_AVG_POOL2D: Final = names.ADAPTIVE_AVG_POOL2D
ADAPTIVE_AVG_POOL2D_BACKWARD: Final = names.ADAPTIVE_AVG_POOL2D_BACKWARD

# PyTorch's scalar type names, used in its "not implemented for" errors.
_TORCH_NAMES: Final = {
    "bool": "Bool", "uint8": "Byte", "int8": "Char", "int32": "Int", "int64": "Long",
    "float16": "Half", "float32": "Float", "float64": "Double", "bfloat16": "BFloat16",
}  # fmt: skip
_FLOATS: Final = frozenset({"float16", "float32", "float64", "bfloat16"})


def max_pool2d(
    input: Tensor,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """Max over windows; with return_indices, also each maximum's flat index in its plane."""
    name = "max_pool2d"
    _check_dtype(name, input, _FLOATS | {"uint8", "int8", "int32", "int64"})
    k = _pair(name, kernel_size, "kernel_size")
    s = _stride(name, stride, k)
    p = _pair(name, padding, "padding")
    d = _pair(name, dilation, "dilation", verb="be either")
    out_hw = _output_size(input, k, s, p, d, ceil_mode)
    x = _images(input)
    out = empty_tensor((*x._shape[:2], *out_hw), x._dtype, x._device)
    indices = empty_tensor(out._shape, _dtype.int64, x._device)
    _kernel(MAX_POOL2D, x)(out, indices, x, k, s, p, d)
    result, index = _caller_rank(out, input), _caller_rank(indices, input)
    if needs_grad(input):
        record(
            "MaxPool2DWithIndicesBackward0", _max_formula, (input,), result, (index,),
            ctx=input._shape,
        )  # fmt: skip
    return (result, index) if return_indices else result


def avg_pool2d(
    input: Tensor,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Mean over windows (see count_include_pad and divisor_override)."""
    name = "avg_pool2d"
    _check_dtype(name, input, _FLOATS | {"int64"})
    k = _pair(name, kernel_size, "kernel_size")
    s = _stride(name, stride, k)
    p = _pair(name, padding, "padding")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    out_hw = _output_size(input, k, s, p, (1, 1), ceil_mode)
    x = _images(input)
    out = empty_tensor((*x._shape[:2], *out_hw), x._dtype, x._device)
    args = (k, s, p, bool(count_include_pad), divisor_override)
    _kernel(AVG_POOL2D, x)(out, x, *args)
    result = _caller_rank(out, input)
    if needs_grad(input):
        record("AvgPool2DBackward0", _avg_formula, (input,), result, ctx=(input._shape, args))
    return result


def adaptive_avg_pool2d(input: Tensor, output_size: int | Sequence[int | None]) -> Tensor:
    """Mean over windows that tile the input into output_size (None keeps that dim)."""
    name = "adaptive_avg_pool2d"
    _check_dtype(name, input, _FLOATS)
    if len(input._shape) < 2:
        raise RuntimeError(
            f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(input._shape)}"
        )
    sizes = [output_size] * 2 if isinstance(output_size, int) else list(output_size)
    if len(sizes) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    out_hw = tuple(input._shape[-2 + i] if v is None else v for i, v in enumerate(sizes))
    if min(out_hw) < 0:
        raise RuntimeError(
            "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 "
            f"but received {{{out_hw[0]}, {out_hw[1]}}}"
        )
    for i in (len(input._shape) - 2, len(input._shape) - 1):
        if input._shape[i] == 0:
            raise RuntimeError(
                "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {list(input._shape)} with dimension {i} being "
                "empty"
            )
    x = _images(input)
    out = empty_tensor((*x._shape[:2], *out_hw), x._dtype, x._device)
    _kernel(ADAPTIVE_AVG_POOL2D, x)(out, x)
    result = _caller_rank(out, input)
    if needs_grad(input):
        record("AdaptiveAvgPool2DBackward0", _adaptive_formula, (input,), result, ctx=input._shape)
    return result


# -- backward ops and formulas -----------------------------------------------------------------


def _max_formula(node: Any, g: Tensor) -> Sequence[Tensor | None]:
    (indices,) = node.saved
    return (_max_pool2d_backward(g, indices, node.ctx),)


def _max_pool2d_backward(g: Tensor, indices: Tensor, shape: Shape) -> Tensor:
    """The gradient of max pooling: g scattered (added) to the saved indices."""
    go = _images(g)
    grad_input = empty_tensor((*go._shape[:2], *shape[-2:]), go._dtype, go._device)
    _kernel(MAX_POOL2D_BACKWARD, go)(grad_input, go, _images(indices))
    result = _caller_rank(grad_input, shape)
    if needs_grad(g):
        record("MaxPool2DWithIndicesBackwardBackward0", _max_double, (g,), result, (indices,))
    return result


def _max_double(node: Any, gg: Tensor) -> Sequence[Tensor | None]:
    """max pooling's backward is linear in g; its adjoint gathers gg at the indices."""
    (indices,) = node.saved
    flat = shape.flatten(gg, -2)
    picked = indexing.gather(flat, -1, shape.flatten(indices, -2))
    return (shape.reshape(picked, indices._shape),)


def _avg_formula(node: Any, g: Tensor) -> Sequence[Tensor | None]:
    shape, args = node.ctx
    return (_avg_pool2d_backward(g, shape, args),)


def _avg_pool2d_backward(g: Tensor, shape: Shape, args: tuple[Any, ...]) -> Tensor:
    go = _images(g)
    grad_input = empty_tensor((*go._shape[:2], *shape[-2:]), go._dtype, go._device)
    _kernel(AVG_POOL2D_BACKWARD, go)(grad_input, go, *args)
    result = _caller_rank(grad_input, shape)
    if needs_grad(g):
        record("AvgPool2DBackwardBackward0", _avg_double, (g,), result, ctx=(g._shape, args))
    return result


def _avg_double(node: Any, gg: Tensor) -> Sequence[Tensor | None]:
    """The adjoint of avg pooling's backward is avg pooling itself."""
    pooled, args = node.ctx
    x = _images(gg)
    out = empty_tensor((*x._shape[:2], *pooled[-2:]), x._dtype, x._device)
    _kernel(AVG_POOL2D, x)(out, x, *args)
    result = _caller_rank(out, pooled)
    if needs_grad(gg):
        record("AvgPool2DBackward0", _avg_formula, (gg,), result, ctx=(gg._shape, args))
    return (result,)


def _adaptive_formula(node: Any, g: Tensor) -> Sequence[Tensor | None]:
    go = _images(g)
    shape: Shape = node.ctx
    grad_input = empty_tensor((*go._shape[:2], *shape[-2:]), go._dtype, go._device)
    _kernel(ADAPTIVE_AVG_POOL2D_BACKWARD, go)(grad_input, go)
    result = _caller_rank(grad_input, shape)
    if needs_grad(g):
        ctx = g._shape[-2:]
        record("AdaptiveAvgPool2DBackwardBackward0", _adaptive_double, (g,), result, ctx=ctx)
    return (result,)


def _adaptive_double(node: Any, gg: Tensor) -> Sequence[Tensor | None]:
    """The adjoint of adaptive pooling's backward is adaptive pooling itself."""
    return (adaptive_avg_pool2d(gg, node.ctx),)


# -- dispatch ------------------------------------------------------------------------------------

# The composite of each pooling op, for devices that register no kernel of their own.
_COMPOSITES: Final[dict[Op, Kernel]] = {
    MAX_POOL2D: composites.max_pool2d,
    MAX_POOL2D_BACKWARD: composites.max_pool2d_backward,
    AVG_POOL2D: composites.avg_pool2d,
    AVG_POOL2D_BACKWARD: composites.avg_pool2d_backward,
    ADAPTIVE_AVG_POOL2D: composites.adaptive_avg_pool2d,
    ADAPTIVE_AVG_POOL2D_BACKWARD: composites.adaptive_avg_pool2d_backward,
}


def _kernel(op: Op, t: Tensor) -> Kernel:
    """The device's own kernel for `op`, else its composite (also for bfloat16, which the
    pool kernels do not take: the composite computes it in float32)."""
    fn = op.kernels.get(t._device.type)
    return _COMPOSITES[op] if fn is None or t._dtype is _dtype.bfloat16 else fn


# -- shapes and arguments ------------------------------------------------------------------------


def _images(t: Tensor) -> Tensor:
    """`t` as contiguous (planes, 1, H, W): kernels see only a stack of planes."""
    if not t._contiguous:
        copy = empty_tensor(t._shape, t._dtype, t._device)
        _launch.copy(copy, t)
        t = copy
    planes = 1
    for size in t._shape[:-2]:
        planes *= size
    shape = (planes, 1, *t._shape[-2:])
    return make_view(t, t._offset, shape, contiguous_strides(shape))


def _caller_rank(out: Tensor, like: Tensor | Shape) -> Tensor:
    """A (planes, 1, h, w) result viewed with the leading dims of `like` (or that shape)."""
    lead = (like._shape if isinstance(like, Tensor) else like)[:-2]
    shape = (*lead, *out._shape[-2:])
    return make_view(out, out._offset, shape, contiguous_strides(shape))


def _check_dtype(name: str, t: Tensor, allowed: frozenset[str] | set[str]) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(t).__name__}")
    if t._dtype.name not in allowed:
        raise DTypeError(f"\"{name}\" not implemented for '{_TORCH_NAMES[t._dtype.name]}'")
    if name != "adaptive_avg_pool2d" and (len(t._shape) not in (3, 4) or 0 in t._shape[-3:]):
        if name == "max_pool2d" and len(t._shape) not in (3, 4):
            raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
            f"but got:{list(t._shape)}"
        )


def _pair(name: str, value: Any, what: str, verb: str = "either be") -> Pair:
    values = [value] if isinstance(value, int) else list(value)
    if len(values) not in (1, 2) or not all(isinstance(v, int) for v in values):
        raise RuntimeError(f"{name}: {what} must {verb} a single int, or a tuple of two ints")
    return (values[0], values[-1])


def _stride(name: str, stride: Any, kernel: Pair) -> Pair:
    if stride is None or (not isinstance(stride, int) and len(stride) == 0):
        return kernel
    values = [stride] if isinstance(stride, int) else list(stride)
    if len(values) not in (1, 2) or not all(isinstance(v, int) for v in values):
        raise RuntimeError(
            f"{name}: stride must either be omitted, a single int, or a tuple of two ints"
        )
    return (values[0], values[-1])


def _output_size(x: Tensor, k: Pair, s: Pair, p: Pair, d: Pair, ceil_mode: bool) -> Pair:
    """PyTorch's pooling_output_shape and pool2d_shape_check."""
    if s[0] == 0 or s[1] == 0:
        raise RuntimeError("stride should not be zero")
    if min(p) < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(p)}")
    for i in (0, 1):
        if p[i] > int(((k[i] - 1) * d[i] + 1) / 2):  # C++'s truncating division
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p[i]}, "
                f"kernel_size={k[i]} and dilation={d[i]}"
            )
    if min(k) <= 0:
        raise RuntimeError(
            f"kernel size should be greater than zero, but got kH: {k[0]} kW: {k[1]}"
        )
    if min(s) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {s[0]} dW: {s[1]}")
    if min(d) <= 0:
        raise RuntimeError(
            f"dilation should be greater than zero, but got dilationH: {d[0]} dilationW: {d[1]}"
        )
    size = x._shape[-2:]
    out = []
    for i in (0, 1):
        span = size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1 + (s[i] - 1 if ceil_mode else 0)
        o = span // s[i] + 1
        if ceil_mode and (o - 1) * s[i] >= size[i] + p[i]:
            o -= 1
        out.append(o)
    if out[0] < 1 or out[1] < 1:
        c = x._shape[-3]
        raise RuntimeError(
            f"Given input size: ({c}x{size[0]}x{size[1]}). Calculated output size: "
            f"({c}x{out[0]}x{out[1]}). Output size is too small"
        )
    return (out[0], out[1])
