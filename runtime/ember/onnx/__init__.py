"""`ember.onnx`: export a module to ONNX by tracing one forward pass (torch.onnx.export).

The forward runs once on the example inputs while the exporter records the Ember ops it
calls (ember.onnx._trace); each recorded op becomes ONNX nodes (opset 17) through its
converter, parameters and buffers become initializers named by their state_dict keys, and
the file is written with the `onnx` package and checked by its checker. Shapes are those
of the example inputs (static); an op without a converter raises
`UnsupportedOperatorError` naming it. `onnx` is an optional dependency
(`pip install ember[onnx]`).
"""

from __future__ import annotations

try:
    import onnx  # noqa: F401  (the dependency check)
except ImportError as error:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "ember.onnx needs the onnx package: pip install onnx (or ember[onnx])"
    ) from error

from ember.onnx._convert_nn import UnsupportedOperatorError
from ember.onnx._export import export

__all__ = ["UnsupportedOperatorError", "export"]
