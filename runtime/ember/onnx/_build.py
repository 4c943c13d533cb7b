"""The ONNX graph being built: value names for tensors, initializers, constants, nodes."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ember._tensor import Tensor

__all__ = ["Graph", "dtype_elem_type", "elem_type"]

_ELEM_TYPES = {
    "bool": TensorProto.BOOL, "uint8": TensorProto.UINT8, "int8": TensorProto.INT8,
    "int32": TensorProto.INT32, "int64": TensorProto.INT64, "float16": TensorProto.FLOAT16,
    "float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE,
    "bfloat16": TensorProto.BFLOAT16,
}  # fmt: skip


def dtype_elem_type(dtype: Any) -> int:
    """The ONNX element type of an Ember dtype."""
    found = _ELEM_TYPES.get(dtype.name)
    if found is None:
        raise TypeError(f"onnx.export: dtype {dtype} has no ONNX element type")
    return found


def elem_type(t: Tensor) -> int:
    """The ONNX element type of a tensor's dtype."""
    return dtype_elem_type(t.dtype)


class Graph:
    """Nodes and initializers, with one ONNX value name per traced tensor (by identity)."""

    def __init__(self, parameter_names: dict[int, str]) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._names: dict[int, str] = {}
        self._parameter_names = parameter_names
        self._count = 0
        self.keep: list[Any] = []  # every tensor named, so that no id is reused

    def fresh(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def bind(self, t: Tensor, name: str) -> None:
        """`t` is (from now on) the ONNX value `name`."""
        self._names[id(t)] = name
        self.keep.append(t)

    def known(self, t: Tensor) -> bool:
        return id(t) in self._names

    def value(self, t: Any, like: Tensor | None = None) -> str:
        """The ONNX value of a traced tensor; a tensor the trace did not compute (a
        parameter, a buffer, a constant made in forward) becomes an initializer; a Python
        number becomes a constant of `like`'s dtype."""
        if not isinstance(t, Tensor):
            dtype = like.dtype.numpy if like is not None else np.float32
            return self.constant(np.asarray(t, dtype=dtype))
        name = self._names.get(id(t))
        if name is None:
            name = self._parameter_names.get(id(t)) or self.fresh("const")
            self.initializers.append(
                numpy_helper.from_array(np.ascontiguousarray(t.detach().cpu().numpy()), name)
            )
            self.bind(t, name)
        return name

    def constant(self, array: np.ndarray, hint: str = "const") -> str:
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def ints(self, values: Any) -> str:
        """A 1-d int64 constant (shapes, axes, pads as ONNX inputs)."""
        return self.constant(np.asarray(list(values), dtype=np.int64), "ints")

    def node(
        self, op: str, inputs: list[str], outputs: int | list[str] = 1, **attributes: Any
    ) -> list[str]:
        names = (
            [self.fresh(op.lower()) for _ in range(outputs)]
            if isinstance(outputs, int)
            else outputs
        )
        self.nodes.append(helper.make_node(op, inputs, names, **attributes))
        return names

    def emit(self, op: str, inputs: list[str], result: Tensor, **attributes: Any) -> None:
        """One node whose single output is the traced `result`."""
        (name,) = self.node(op, inputs, 1, **attributes)
        self.bind(result, name)
