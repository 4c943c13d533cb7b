"""The `ember.X` names that the linear-algebra composites are written in, served from the
layers at or below ops (ops, dtypes, autograd) so that those modules read like user code
(`E.where`, `E.linalg.solve_triangular`, `E.float64`) without importing the package.

Names resolve at call time, when every ops module has loaded; the package (`ember`) is
never consulted, so the layer rule (tests/runtime/test_layers.py) holds in substance.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

from ember import _dtype, _dtype_info, _errors, _tensor, _upper
from ember import autograd as _autograd

__all__ = ["E"]

_ALIASES = {"int": "int32", "float": "float32", "double": "float64", "long": "int64",
            "half": "float16"}  # fmt: skip


#: the ops modules that define torch.linalg's functions (their `__all__`), in lookup order
_LINALG_MODULES = (
    "ember._ops.linalg_decompositions", "ember._ops.linalg_solvers",
    "ember._ops.linalg_spectral", "ember._ops.norms", "ember._ops.linalg_products",
    "ember._ops.linalg_lowrank",
)  # fmt: skip


class _Linalg:
    """`E.linalg.<name>`: the torch.linalg functions, from the ops modules that define them."""

    def __getattr__(self, name: str) -> Any:
        for module_name in _LINALG_MODULES:
            module = sys.modules.get(module_name)
            if module is not None and name in getattr(module, "__all__", ()):
                return getattr(module, name)
        for module_name in _LINALG_MODULES:  # defined there but not exported by ops
            found = getattr(sys.modules.get(module_name), name, None)
            if callable(found) and not name.startswith("_"):
                return found
        raise AttributeError(f"E.linalg has no {name!r}")


class _Surface:
    linalg = _Linalg()
    autograd: ModuleType = _autograd
    _tensor: ModuleType = _tensor
    _errors: ModuleType = _errors

    @property
    def _ops(self) -> ModuleType:
        return _upper.ops

    def __getattr__(self, name: str) -> Any:
        name = _ALIASES.get(name, name)
        for source in (_upper.ops, _dtype, _dtype_info, _autograd):
            found = getattr(source, name, None)
            if found is not None:
                return found
        raise AttributeError(f"E has no {name!r}")


#: read as `ember`: `E.where(...)`, `E.linalg.solve_triangular(...)`, `E.float64`
E: Any = _Surface()
