"""Converters of ember.nn.functional: layers as ONNX's own operators where it has them."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ember import nn
from ember._tensor import Tensor
from ember.onnx._build import Graph
from ember.onnx._convert_tensor_ops import gelu_erf
from ember.onnx._registry import converts

__all__ = ["UnsupportedOperatorError"]

F = nn.functional


def _present(*names: str) -> list[Any]:
    """The named nn.functional functions this Ember has."""
    return [getattr(F, name) for name in names if hasattr(F, name)]


class UnsupportedOperatorError(RuntimeError):
    """An op or argument the exporter cannot express in ONNX (torch.onnx's error class)."""


def _tuple(value: Any, n: int) -> list[int]:
    return [int(value)] * n if isinstance(value, int) else [int(v) for v in value]


def _optional(g: Graph, t: Tensor | None, fill: float, n: int, dt: Any) -> str:
    return g.value(t) if t is not None else g.constant(np.full(n, fill, dtype=dt))


@converts(F.linear)
def _linear(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    weight_t = g.node("Transpose", [g.value(a["weight"])], perm=[1, 0])
    product = g.node("MatMul", [g.value(a["input"]), weight_t[0]])
    if a["bias"] is None:
        g.emit("Identity", product, result)
    else:
        g.emit("Add", [product[0], g.value(a["bias"])], result)


def _conv_pads(a: dict[str, Any], x: Tensor, w: Tensor, n: int) -> list[int]:
    padding = a["padding"]
    if padding == "valid":
        return [0] * (2 * n)
    if padding == "same":
        dilation = _tuple(a["dilation"], n)
        total = [d * (k - 1) for d, k in zip(dilation, w.shape[2:], strict=True)]
        return [t // 2 for t in total] + [t - t // 2 for t in total]
    pads = _tuple(padding, n)
    return pads + pads


@converts(*_present("conv1d", "conv2d", "conv3d"))
def _conv(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    x, w = a["input"], a["weight"]
    n = w.dim() - 2
    inputs = [g.value(x), g.value(w)] + ([g.value(a["bias"])] if a["bias"] is not None else [])
    g.emit(
        "Conv", inputs, result, kernel_shape=list(w.shape[2:]), strides=_tuple(a["stride"], n),
        pads=_conv_pads(a, x, w, n), dilations=_tuple(a["dilation"], n), group=int(a["groups"]),
    )  # fmt: skip


@converts(*_present("conv_transpose1d", "conv_transpose2d", "conv_transpose3d"))
def _conv_transpose(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    w = a["weight"]
    n = w.dim() - 2
    inputs = [g.value(a["input"]), g.value(w)]
    inputs += [g.value(a["bias"])] if a["bias"] is not None else []
    pads = _tuple(a["padding"], n)
    g.emit(
        "ConvTranspose", inputs, result, kernel_shape=list(w.shape[2:]),
        strides=_tuple(a["stride"], n), pads=pads + pads, dilations=_tuple(a["dilation"], n),
        output_padding=_tuple(a["output_padding"], n), group=int(a["groups"]),
    )  # fmt: skip


_ACTIVATIONS = {F.relu: "Relu", F.tanh: "Tanh", F.sigmoid: "Sigmoid"}
for _fn, _op in _ACTIVATIONS.items():

    def _activation(g: Graph, a: dict[str, Any], result: Tensor, op: str = _op) -> None:
        g.emit(op, [g.value(a["input"])], result)

    converts(_fn)(_activation)


@converts(F.gelu)
def _gelu(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    x = g.value(a["input"])
    if a["approximate"] == "none":
        gelu_erf(g, x, result)
        return
    dt = result.dtype.numpy
    cube = g.node("Mul", [g.node("Mul", [x, x])[0], x])
    inner = g.node("Add", [x, g.node("Mul", [cube[0], g.constant(np.asarray(0.044715, dt))])[0]])
    scaled = g.node("Mul", [inner[0], g.constant(np.asarray(math.sqrt(2 / math.pi), dt))])
    one_plus = g.node("Add", [g.node("Tanh", scaled)[0], g.constant(np.asarray(1, dt))])
    half_x = g.node("Mul", [x, g.constant(np.asarray(0.5, dt))])
    g.emit("Mul", [half_x[0], one_plus[0]], result)


@converts(F.silu)
def _silu(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    x = g.value(a["input"])
    g.emit("Mul", [x, g.node("Sigmoid", [x])[0]], result)


@converts(F.leaky_relu)
def _leaky_relu(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    g.emit("LeakyRelu", [g.value(a["input"])], result, alpha=float(a["negative_slope"]))


@converts(F.elu)
def _elu(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    g.emit("Elu", [g.value(a["input"])], result, alpha=float(a["alpha"]))


def _clip(g: Graph, x: Tensor, low: float, high: float, result: Tensor) -> None:
    dt = result.dtype.numpy
    bounds = [g.constant(np.asarray(low, dt)), g.constant(np.asarray(high, dt))]
    g.emit("Clip", [g.value(x), *bounds], result)


@converts(F.hardtanh)
def _hardtanh(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    _clip(g, a["input"], a["min_val"], a["max_val"], result)


@converts(F.relu6)
def _relu6(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    _clip(g, a["input"], 0.0, 6.0, result)


@converts(F.softplus)
def _softplus(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    beta = float(a["beta"])
    x = g.value(a["input"])
    if beta == 1.0:
        g.emit("Softplus", [x], result)
        return
    b = g.constant(np.asarray(beta, result.dtype.numpy))
    g.emit("Div", [g.node("Softplus", [g.node("Mul", [x, b])[0]])[0], b], result)


def _softmax_axis(a: dict[str, Any]) -> int:
    dim = a["dim"]
    n = a["input"].dim()
    if dim is None:  # PyTorch's implicit choice
        dim = 0 if n in (0, 1, 3) else 1
    return int(dim) % max(n, 1)


@converts(F.softmax)
def _softmax(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    g.emit("Softmax", [g.value(a["input"])], result, axis=_softmax_axis(a))


@converts(F.log_softmax)
def _log_softmax(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    g.emit("LogSoftmax", [g.value(a["input"])], result, axis=_softmax_axis(a))


@converts(F.layer_norm)
def _layer_norm(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    shape = list(a["normalized_shape"])
    dt = result.dtype.numpy
    scale = g.value(a["weight"]) if a["weight"] is not None else g.constant(np.ones(shape, dt))
    shift = g.value(a["bias"]) if a["bias"] is not None else g.constant(np.zeros(shape, dt))
    g.emit("LayerNormalization", [g.value(a["input"]), scale, shift], result,
           axis=-len(shape), epsilon=float(a["eps"]))  # fmt: skip


@converts(F.batch_norm)
def _batch_norm(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    if a["training"] or a["running_mean"] is None:
        raise UnsupportedOperatorError("onnx.export: batch_norm with batch statistics (training)")
    channels = a["running_mean"].shape[0]
    dt = result.dtype.numpy
    inputs = [
        g.value(a["input"]), _optional(g, a["weight"], 1.0, channels, dt),
        _optional(g, a["bias"], 0.0, channels, dt), g.value(a["running_mean"]),
        g.value(a["running_var"]),
    ]  # fmt: skip
    g.emit("BatchNormalization", inputs, result, epsilon=float(a["eps"]))


@converts(F.group_norm)
def _group_norm(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    x = a["input"]
    n, c = x.shape[0], x.shape[1]
    groups = int(a["num_groups"])
    dt = result.dtype.numpy
    grouped = g.node("Reshape", [g.value(x), g.ints([n, groups, -1])])[0]
    mean = g.node("ReduceMean", [grouped], axes=[2], keepdims=1)[0]
    centred = g.node("Sub", [grouped, mean])[0]
    var = g.node("ReduceMean", [g.node("Mul", [centred, centred])[0]], axes=[2], keepdims=1)[0]
    eps = g.constant(np.asarray(a["eps"], dt))
    normed = g.node("Div", [centred, g.node("Sqrt", [g.node("Add", [var, eps])[0]])[0]])[0]
    back = g.node("Reshape", [normed, g.ints(x.shape)])[0]
    per_channel = [c] + [1] * (x.dim() - 2)
    scale = g.node("Reshape", [_optional(g, a["weight"], 1.0, c, dt), g.ints(per_channel)])[0]
    shift = g.node("Reshape", [_optional(g, a["bias"], 0.0, c, dt), g.ints(per_channel)])[0]
    g.emit("Add", [g.node("Mul", [back, scale])[0], shift], result)


@converts(F.dropout)
def _dropout(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    if a["training"] and a["p"] > 0:
        raise UnsupportedOperatorError("onnx.export: dropout in training mode (call model.eval())")
    g.emit("Identity", [g.value(a["input"])], result)


@converts(F.embedding)
def _embedding(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    if a["max_norm"] is not None:
        raise UnsupportedOperatorError("onnx.export: embedding with max_norm renormalises in place")
    g.emit("Gather", [g.value(a["weight"]), g.value(a["input"])], result, axis=0)


def _pool_attributes(a: dict[str, Any], n: int) -> dict[str, Any]:
    kernel = _tuple(a["kernel_size"], n)
    stride = _tuple(a["stride"], n) if a["stride"] not in (None, [], ()) else kernel
    pads = _tuple(a["padding"], n)
    return {"kernel_shape": kernel, "strides": stride, "pads": pads + pads,
            "ceil_mode": int(bool(a["ceil_mode"]))}  # fmt: skip


@converts(*_present("max_pool1d", "max_pool2d", "max_pool3d"))
def _max_pool(g: Graph, a: dict[str, Any], result: Any) -> None:
    if a["return_indices"]:
        raise UnsupportedOperatorError("onnx.export: max_pool with return_indices")
    n = a["input"].dim() - 2
    g.emit("MaxPool", [g.value(a["input"])], result, dilations=_tuple(a["dilation"], n),
           **_pool_attributes(a, n))  # fmt: skip


@converts(*_present("avg_pool1d", "avg_pool2d", "avg_pool3d"))
def _avg_pool(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    if a.get("divisor_override") is not None:
        raise UnsupportedOperatorError("onnx.export: avg_pool with divisor_override")
    n = a["input"].dim() - 2
    include = int(bool(a["count_include_pad"]))
    attributes = _pool_attributes(a, n)
    g.emit("AveragePool", [g.value(a["input"])], result, count_include_pad=include, **attributes)


def _adaptive_pool(g: Graph, a: dict[str, Any], result: Tensor, kind: str) -> None:
    x = a["input"]
    sizes, outs = list(x.shape[2:]), list(result.shape[2:])
    if all(o == 1 for o in outs):
        g.emit(f"Global{kind}Pool", [g.value(x)], result)
        return
    if any(s % o for s, o in zip(sizes, outs, strict=True)):
        raise UnsupportedOperatorError(
            f"onnx.export: adaptive pooling from {sizes} to {outs} (not a whole-window pool)"
        )
    kernel = [s // o for s, o in zip(sizes, outs, strict=True)]
    g.emit(f"{kind}Pool", [g.value(x)], result, kernel_shape=kernel, strides=kernel)


@converts(*_present("adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d"))
def _adaptive_avg_pool(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    _adaptive_pool(g, a, result, "Average")


@converts(*_present("adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"))
def _adaptive_max_pool(g: Graph, a: dict[str, Any], result: Any) -> None:
    if a["return_indices"]:
        raise UnsupportedOperatorError("onnx.export: adaptive max pooling with return_indices")
    _adaptive_pool(g, a, result, "Max")


@converts(F.scaled_dot_product_attention)
def _sdpa(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    q, k, v = a["query"], a["key"], a["value"]
    if a["enable_gqa"] or (a["dropout_p"] and a["dropout_p"] > 0):
        raise UnsupportedOperatorError("onnx.export: attention with dropout or grouped queries")
    dt = result.dtype.numpy
    scale = a["scale"] if a["scale"] is not None else 1.0 / math.sqrt(q.shape[-1])
    perm = list(range(k.dim()))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    scores = g.node("MatMul", [g.value(q), g.node("Transpose", [g.value(k)], perm=perm)[0]])[0]
    scores = g.node("Mul", [scores, g.constant(np.asarray(scale, dt))])[0]
    length, source = q.shape[-2], k.shape[-2]
    if a["is_causal"]:
        blocked = np.triu(np.ones((length, source), dtype=bool), 1)
        scores = g.node("Add", [scores, g.constant(np.where(blocked, -np.inf, 0).astype(dt))])[0]
    mask = a["attn_mask"]
    if mask is not None:
        if mask.dtype.name == "bool":
            neg = g.node("Where", [g.value(mask), g.constant(np.asarray(0, dt)),
                                   g.constant(np.asarray(-np.inf, dt))])[0]  # fmt: skip
        else:
            neg = g.value(mask)
        scores = g.node("Add", [scores, neg])[0]
    weights = g.node("Softmax", [scores], axis=-1)[0]
    g.emit("MatMul", [weights, g.value(v)], result)


_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge"}


@converts(F.pad)
def _pad(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    x, pad = a["input"], list(a["pad"])
    mode = _PAD_MODES.get(a["mode"])
    if mode is None:
        raise UnsupportedOperatorError(f"onnx.export: pad mode {a['mode']!r}")
    n = x.dim()
    begins, ends = [0] * n, [0] * n
    for i in range(len(pad) // 2):
        begins[n - 1 - i], ends[n - 1 - i] = pad[2 * i], pad[2 * i + 1]
    inputs = [g.value(x), g.ints(begins + ends)]
    if mode == "constant":
        inputs.append(g.constant(np.asarray(a["value"] or 0, result.dtype.numpy)))
    g.emit("Pad", inputs, result, mode=mode)


_RESIZE_MODES = {"nearest": "nearest", "bilinear": "linear", "linear": "linear"}


@converts(F.interpolate)
def _interpolate(g: Graph, a: dict[str, Any], result: Tensor) -> None:
    mode = _RESIZE_MODES.get(a["mode"])
    if mode is None or a["antialias"]:
        raise UnsupportedOperatorError(f"onnx.export: interpolate mode {a['mode']!r}")
    if mode == "nearest":
        # PyTorch's nearest picks floor(out_index * in / out): asymmetric, floor.
        transform = {"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}
    else:
        corners = bool(a["align_corners"])
        transform = {"coordinate_transformation_mode": "align_corners" if corners else "half_pixel"}
    sizes = g.ints(result.shape)
    g.emit("Resize", [g.value(a["input"]), "", "", sizes], result, mode=mode, **transform)
