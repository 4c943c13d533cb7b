"""`ember.ops`: custom ops by name, `ember.ops.mylib.fused_gelu` for "mylib::fused_gelu"
(as `torch.ops.mylib.fused_gelu`)."""

from __future__ import annotations

from ember.library._call import CUSTOM_OPS, CustomOp
from ember.plugins._manager import MANAGER

__all__ = ["OpNamespace", "Ops"]


class OpNamespace:
    """The custom ops of one namespace."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> CustomOp:
        if attr.startswith("__"):
            raise AttributeError(attr)
        MANAGER.ensure_loaded()  # plugins define their ops when they load
        op = CUSTOM_OPS.get(f"{self._name}::{attr}")
        if op is None:
            raise AttributeError(f"no custom op {self._name}::{attr} is defined")
        assert op._call is not None
        return op._call

    def __dir__(self) -> list[str]:
        prefix = f"{self._name}::"
        return sorted(name[len(prefix) :] for name in CUSTOM_OPS if name.startswith(prefix))


class Ops:
    """`ember.ops`: one attribute per op namespace."""

    def __getattr__(self, name: str) -> OpNamespace:
        if name.startswith("__"):
            raise AttributeError(name)
        return OpNamespace(name)

    def __dir__(self) -> list[str]:
        return sorted({name.partition("::")[0] for name in CUSTOM_OPS})
