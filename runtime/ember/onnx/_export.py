"""export(): trace, convert, check and write."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import IO, Any

import onnx
from onnx import helper

from ember import nn
from ember._tensor import Tensor
from ember.autograd import no_grad
from ember.onnx import _convert_nn, _convert_tensor_ops  # noqa: F401  (they register)
from ember.onnx._build import Graph, elem_type
from ember.onnx._convert_nn import UnsupportedOperatorError
from ember.onnx._registry import converter_of
from ember.onnx._trace import Trace, _tensors, trace

__all__ = ["export"]

OPSET = 17


def _value_info(name: str, t: Tensor) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem_type(t), list(t.shape))


def _check_convertible(traced: Trace, graph: Graph, t: Tensor, position: int, user: str) -> None:
    """Refuse a tensor that an unconverted op made, or wrote into before `position`."""
    missing = traced.unconverted.get(id(t))
    if missing is not None and not graph.known(t):
        raise UnsupportedOperatorError(
            f"onnx.export: {missing} has no ONNX conversion (its result feeds {user})"
        )
    written = traced.mutated.get(id(t))
    if written is not None and written[0] <= position:
        raise UnsupportedOperatorError(
            f"onnx.export: {written[1]} has no ONNX conversion (it writes in place into a "
            f"tensor that feeds {user})"
        )


def export(
    model: nn.Module,
    args: Any,
    f: str | os.PathLike[str] | IO[bytes] | None = None,
    *,
    kwargs: dict[str, Any] | None = None,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    opset_version: int | None = None,
    dynamic_axes: Any = None,
    export_params: bool = True,
    do_constant_folding: bool = True,
    verbose: bool | None = None,
    dynamo: bool = False,
    **options: Any,
) -> onnx.ModelProto:
    """Write `model` applied to `args` as an ONNX model to `f`; return the ModelProto.

    As torch.onnx.export: the model runs in eval mode for the trace (and goes back to its
    mode afterwards); `args` is a tensor or a tuple of them. Not supported, and refused
    rather than ignored: dynamic axes, opsets other than 17 and export_params=False.
    """
    del do_constant_folding, verbose, dynamo, options
    if dynamic_axes:
        raise UnsupportedOperatorError(
            "onnx.export: dynamic_axes is not supported; Ember exports the example's shapes"
        )
    if opset_version not in (None, OPSET):
        raise UnsupportedOperatorError(f"onnx.export: only opset {OPSET} is written")
    if not export_params:
        raise UnsupportedOperatorError("onnx.export: export_params=False is not supported")
    inputs = list(args) if isinstance(args, (tuple, list)) else [args]
    if not all(isinstance(t, Tensor) for t in inputs):
        raise TypeError("onnx.export: args must be a tensor or a tuple of tensors")
    names = {id(t): name for name, t in model.state_dict(keep_vars=True).items()}
    state = list(model.state_dict(keep_vars=True).values())
    was_training = model.training
    model.eval()
    try:
        with no_grad():
            result, traced = trace(
                lambda: model(*inputs, **(kwargs or {})), converter_of, [*inputs, *state]
            )
    finally:
        model.train(was_training)
    graph = Graph(names)
    input_labels = list(input_names or [])
    input_labels += [f"input_{i}" for i in range(len(input_labels), len(inputs))]
    for label, t in zip(input_labels, inputs, strict=True):
        graph.bind(t, label)
    for position, record in enumerate(traced.records):
        for t in _tensors(list(record.args.values())):
            _check_convertible(traced, graph, t, position, record.name)
        record.convert(graph, record.args, record.result)
    outputs = _tensors(result)
    output_labels = list(output_names or [])
    output_labels += [f"output_{i}" for i in range(len(output_labels), len(outputs))]
    for label, t in zip(output_labels, outputs, strict=True):
        _check_convertible(traced, graph, t, len(traced.records), "the output")
        graph.nodes.append(helper.make_node("Identity", [graph.value(t)], [label]))
    used = {name for node in graph.nodes for name in node.input}
    initializers = [t for t in graph.initializers if t.name in used]
    proto = helper.make_model(
        helper.make_graph(
            graph.nodes, type(model).__name__,
            [_value_info(n, t) for n, t in zip(input_labels, inputs, strict=True)],
            [_value_info(n, t) for n, t in zip(output_labels, outputs, strict=True)],
            initializers,
        ),
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="ember",
    )  # fmt: skip
    onnx.checker.check_model(proto)
    if f is not None:
        if isinstance(f, (str, os.PathLike)):
            onnx.save(proto, os.fspath(f))
        else:
            f.write(proto.SerializeToString())
    return proto
