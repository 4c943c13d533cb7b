"""Converters of Ember's tensor ops (ember._ops): elementwise, reductions, products, shapes."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import _dtype as dtypes
from ember import _ops as ops
from ember._tensor import Tensor
from ember.onnx._build import Graph, dtype_elem_type, elem_type
from ember.onnx._registry import converts

__all__: list[str] = []


def _operand(g: Graph, x: Any, dtype: dtypes.dtype) -> str:
    """An input of an elementwise node in `dtype` (ONNX does not promote: Ember did)."""
    if not isinstance(x, Tensor):
        return g.constant(np.asarray(x, dtype=dtype.numpy))
    name = g.value(x)
    if x.dtype is dtype:
        return name
    return g.node("Cast", [name], to=dtype_elem_type(dtype))[0]


def _binary(op: str) -> Any:
    def convert(g: Graph, a: dict[str, Any], result: Tensor) -> None:
        common = dtypes.result_type(a["input"], a["other"])
        inputs = [_operand(g, a["input"], common), _operand(g, a["other"], common)]
        alpha = a.get("alpha", 1)
        if alpha != 1:
            scaled = g.node("Mul", [inputs[1], g.constant(np.asarray(alpha, common.numpy))])
            inputs[1] = scaled[0]
        g.emit(op, inputs, result)

    return convert


for _fn, _op in (
    (ops.add, "Add"), (ops.sub, "Sub"), (ops.mul, "Mul"), (ops.pow, "Pow"),
    (ops.maximum, "Max"), (ops.minimum, "Min"), (ops.eq, "Equal"), (ops.lt, "Less"),
    (ops.le, "LessOrEqual"), (ops.gt, "Greater"), (ops.ge, "GreaterOrEqual"),
    (ops.logical_and, "And"), (ops.logical_or, "Or"), (ops.logical_xor, "Xor"),
):  # fmt: skip
    converts(_fn)(_binary(_op))


@converts(ops.div)
def _div(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    mode = a.get("rounding_mode")
    inputs = [_operand(g, a[k], result.dtype) for k in ("input", "other")]
    quotient = g.node("Div", inputs)
    if mode is None:
        g.emit("Identity", quotient, result)
    elif mode == "floor":
        g.emit("Floor", quotient, result)
    else:
        raise NotImplementedError("onnx.export: div with rounding_mode='trunc'")


@converts(ops.ne)
def _ne(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    common = dtypes.result_type(a["input"], a["other"])
    equal = g.node("Equal", [_operand(g, a[k], common) for k in ("input", "other")])
    g.emit("Not", equal, result)


_UNARY = {
    ops.neg: "Neg", ops.abs: "Abs", ops.exp: "Exp", ops.log: "Log", ops.sqrt: "Sqrt",
    ops.sin: "Sin", ops.cos: "Cos", ops.tanh: "Tanh", ops.erf: "Erf", ops.floor: "Floor",
    ops.ceil: "Ceil", ops.round: "Round", ops.sigmoid: "Sigmoid", ops.relu: "Relu",
    ops.reciprocal: "Reciprocal", ops.sign: "Sign", ops.logical_not: "Not",
}  # fmt: skip


def _unary(op: str) -> Any:
    def convert(g: Graph, a: dict[str, Any], result: Tensor) -> None:
        x = a.get("input", a.get("t"))
        g.emit(op, [_operand(g, x, result.dtype)], result)

    return convert


for _fn, _op in _UNARY.items():
    converts(_fn)(_unary(_op))


@converts(ops.relu_)
def _relu_(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    g.emit("Relu", [g.value(a["t"])], result)  # rebinding: later uses see the new value


@converts(ops.rsqrt)
def _rsqrt(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    g.emit("Reciprocal", g.node("Sqrt", [g.value(a["input"])]), result)


@converts(ops.log1p)
def _log1p(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    one = g.constant(np.asarray(1, result.dtype.numpy))
    g.emit("Log", g.node("Add", [g.value(a["input"]), one]), result)


@converts(ops.gelu)
def _gelu(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    gelu_erf(g, g.value(a["input"]), result)


def gelu_erf(g: Graph, x: str, result: Tensor) -> None:
    """0.5 x (1 + erf(x / sqrt 2)), the exact GELU (opset 17 has no Gelu node)."""
    dt = result.dtype.numpy
    scaled = g.node("Mul", [x, g.constant(np.asarray(0.7071067811865476, dt))])
    one_plus = g.node("Add", [g.node("Erf", scaled)[0], g.constant(np.asarray(1, dt))])
    half_x = g.node("Mul", [x, g.constant(np.asarray(0.5, dt))])
    g.emit("Mul", [half_x[0], one_plus[0]], result)


@converts(ops.where)
def _where(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    condition = g.value(a["condition"])
    branches = [_operand(g, a[k], result.dtype) for k in ("input", "other")]
    g.emit("Where", [condition, *branches], result)


@converts(ops.clamp)
def _clamp(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    bounds = [_operand(g, a[k], result.dtype) if a[k] is not None else "" for k in ("min", "max")]
    g.emit("Clip", [_operand(g, a["t"], result.dtype), *bounds], result)


@converts(ops.masked_fill, ops.masked_fill_)
def _masked_fill(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    value = _operand(g, a["value"], result.dtype)
    g.emit("Where", [g.value(a["mask"]), value, g.value(a["t"])], result)


@converts(ops.matmul, ops.mm, ops.bmm)
def _matmul(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    second = a.get("other", a.get("mat2"))
    g.emit("MatMul", [g.value(a["input"]), g.value(second)], result)


# -- reductions ------------------------------------------------------------------------------


def _axes(a: dict[str, Any], ndim: int) -> list[int]:
    dim = a.get("dim")
    if dim is None or dim == ():
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return [d % ndim for d in dims]


def _reduction(op: str, axes_as_input: bool) -> Any:
    def convert(g: Graph, a: dict[str, Any], result: Tensor) -> None:
        x = a["input"]
        axes = _axes(a, x.dim())
        keep = int(bool(a.get("keepdim", False)))
        source = _operand(g, x, result.dtype)
        if axes_as_input:
            g.emit(op, [source, g.ints(axes)], result, keepdims=keep)
        else:
            g.emit(op, [source], result, axes=axes, keepdims=keep)

    return convert


converts(ops.sum)(_reduction("ReduceSum", True))
converts(ops.mean)(_reduction("ReduceMean", False))
converts(ops.amax)(_reduction("ReduceMax", False))
converts(ops.amin)(_reduction("ReduceMin", False))


# -- shapes and copies -----------------------------------------------------------------------


def _to_shape(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    """Any view whose result is a reshape of its input (static shapes)."""
    source = a.get("t", a.get("input"))
    g.emit("Reshape", [g.value(source), g.ints(result.shape)], result)


converts(ops.reshape, ops.view, ops.flatten, ops.unsqueeze, ops.squeeze)(_to_shape)


@converts(ops.expand)
def _expand(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    g.emit("Expand", [g.value(a["t"]), g.ints(result.shape)], result)


@converts(ops.permute)
def _permute(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    dims = a["dims"][0] if len(a["dims"]) == 1 and not isinstance(a["dims"][0], int) else a["dims"]
    n = a["t"].dim()
    g.emit("Transpose", [g.value(a["t"])], result, perm=[d % n for d in dims])


@converts(ops.transpose)
def _transpose(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    n = a["t"].dim()
    perm = list(range(n))
    i, j = a["dim0"] % n, a["dim1"] % n
    perm[i], perm[j] = perm[j], perm[i]
    g.emit("Transpose", [g.value(a["t"])], result, perm=perm)


@converts(ops.t)
def _t(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    x = a["input"]
    g.emit("Transpose" if x.dim() == 2 else "Identity", [g.value(x)], result,
           **({"perm": [1, 0]} if x.dim() == 2 else {}))  # fmt: skip


@converts(ops.clone)
def _clone(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    g.emit("Identity", [g.value(a.get("input", a.get("t")))], result)


@converts(ops.to)
def _to(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    source = a["t"]
    if result is source:
        return
    if result.dtype is source.dtype:
        g.emit("Identity", [g.value(source)], result)
    else:
        g.emit("Cast", [g.value(source)], result, to=elem_type(result))


@converts(ops.cat)
def _cat(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    parts = [g.value(t) for t in a["tensors"] if t.numel() or t.dim() > 1]
    g.emit("Concat", parts, result, axis=a["dim"] % result.dim())


@converts(ops.stack)
def _stack(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    axis = a["dim"] % result.dim()
    parts = [g.node("Unsqueeze", [g.value(t), g.ints([axis])])[0] for t in a["tensors"]]
    g.emit("Concat", parts, result, axis=axis)


def _split_like(g: Graph, source: Tensor, dim: int, result: tuple[Tensor, ...]) -> None:
    axis = dim % source.dim()
    sizes = [t.shape[axis] for t in result]
    names = g.node("Split", [g.value(source), g.ints(sizes)], len(result), axis=axis)
    for t, name in zip(result, names, strict=True):
        g.bind(t, name)


@converts(ops.split)
def _split(g: Graph, a: dict[str, Any], result: tuple[Tensor, ...]) -> None:
    _split_like(g, a["t"], a["dim"], result)


@converts(ops.chunk)
def _chunk(g: Graph, a: dict[str, Any], result: tuple[Tensor, ...]) -> None:
    _split_like(g, a["t"], a["dim"], result)


@converts(ops.unbind)
def _unbind(g: Graph, a: dict[str, Any], result: tuple[Tensor, ...]) -> None:
    axis = a.get("dim", 0) % a["t"].dim()
    names = g.node("Split", [g.value(a["t"]), g.ints([1] * len(result))], len(result), axis=axis)
    for t, name in zip(result, names, strict=True):
        g.emit("Squeeze", [name, g.ints([axis])], t)


def _trilu(g: Graph, a: dict[str, Any], result: Tensor, upper: int) -> None:
    diagonal = g.constant(np.asarray(a.get("diagonal", 0), np.int64))
    g.emit("Trilu", [g.value(a["input"]), diagonal], result, upper=upper)


@converts(ops.tril)
def _tril(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    _trilu(g, a, result, 0)


@converts(ops.triu)
def _triu(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    _trilu(g, a, result, 1)


@converts(ops.getitem)
def _getitem(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    """Basic indexing (ints, slices, None, Ellipsis): Slice, then Reshape to the result."""
    x, index = a["t"], a["index"]
    items = list(index) if isinstance(index, tuple) else [index]
    if any(isinstance(i, (Tensor, list, bool)) for i in items):
        first = items[0]
        integral = isinstance(first, Tensor) and first.dtype in (dtypes.int64, dtypes.int32)
        if len(items) == 1 and integral:
            g.emit("Gather", [g.value(x), g.value(first)], result, axis=0)
            return
        raise NotImplementedError("onnx.export: advanced indexing beyond one integer tensor")
    if Ellipsis in items:
        at = items.index(Ellipsis)
        used = sum(1 for i in items if i is not None and i is not Ellipsis)
        items[at : at + 1] = [slice(None)] * (x.dim() - used)
    starts, ends, axes, steps = [], [], [], []
    dim = 0
    for item in items:
        if item is None:
            continue
        if isinstance(item, int):
            size = x.shape[dim]
            start = item % size
            starts.append(start)
            ends.append(start + 1)
            axes.append(dim)
            steps.append(1)
        elif isinstance(item, slice):
            begin, stop, step = item.indices(x.shape[dim])
            if (begin, stop, step) != (0, x.shape[dim], 1):
                starts.append(begin)
                ends.append(stop)
                axes.append(dim)
                steps.append(step)
        dim += 1
    source = g.value(x)
    if axes:
        source = g.node(
            "Slice", [source, g.ints(starts), g.ints(ends), g.ints(axes), g.ints(steps)]
        )[0]
    g.emit("Reshape", [source, g.ints(result.shape)], result)


def _constant(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    """A factory's result: its traced values are a constant of the graph."""
    g.value(result)


converts(
    ops.zeros, ops.ones, ops.full, ops.arange, ops.tensor, ops.zeros_like, ops.ones_like,
    ops.full_like, ops.empty, ops.empty_like,
)(_constant)  # fmt: skip


_UNARY_BY_NAME = {
    "neg": "Neg", "abs": "Abs", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "sin": "Sin",
    "cos": "Cos", "tanh": "Tanh", "erf": "Erf", "floor": "Floor", "ceil": "Ceil",
    "round": "Round", "sigmoid": "Sigmoid", "relu": "Relu", "reciprocal": "Reciprocal",
    "sign": "Sign", "tan": "Tan", "asin": "Asin", "acos": "Acos", "atan": "Atan",
    "sinh": "Sinh", "cosh": "Cosh", "asinh": "Asinh", "acosh": "Acosh", "atanh": "Atanh",
}  # fmt: skip


@converts(ops.unary._unary)
def _unary_by_op(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    """The unary kernel entry that composites call directly, by its op's name."""
    name = a["op"].name
    x = _operand(g, a["t"], result.dtype)
    one = g.constant(np.asarray(1, result.dtype.numpy)) if name in ("expm1", "log1p") else ""
    if name == "expm1":
        g.emit("Sub", [g.node("Exp", [x])[0], one], result)
    elif name == "log1p":
        g.emit("Log", [g.node("Add", [x, one])[0]], result)
    elif name == "rsqrt":
        g.emit("Reciprocal", g.node("Sqrt", [x]), result)
    elif name == "gelu":
        gelu_erf(g, x, result)
    elif name in _UNARY_BY_NAME:
        g.emit(_UNARY_BY_NAME[name], [x], result)
    else:
        raise NotImplementedError(f"onnx.export: unary op {name!r} has no ONNX conversion")


@converts(ops.conversion.contiguous_copy)
def _contiguous_copy(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    g.emit("Identity", [g.value(a["t"])], result)


@converts(ops.narrow)
def _narrow(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    x = a["t"]
    axis = a["dim"] % x.dim()
    start = a["start"] % x.shape[axis] if x.shape[axis] else 0
    inputs = [g.value(x), g.ints([start]), g.ints([start + a["length"]]), g.ints([axis])]
    g.emit("Slice", inputs, result)


@converts(ops.index_select)
def _index_select(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    x = a["t"]
    g.emit("Gather", [g.value(x), g.value(a["index"])], result, axis=a["dim"] % max(x.dim(), 1))
