"""`ember.utils.dlpack`, as torch.utils.dlpack: exchange tensors with other libraries
through DLPack capsules (`to_dlpack`) or any object with `__dlpack__` (`from_dlpack`)."""

from __future__ import annotations

from typing import Any

from ember._ops import creation
from ember._ops.conversion import to_dlpack
from ember._tensor import Tensor

__all__ = ["from_dlpack", "to_dlpack"]


class _Capsule:
    """A bare host DLPack capsule given the `__dlpack__` protocol NumPy imports through."""

    def __init__(self, capsule: Any) -> None:
        self._capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # kDLCPU: Ember imports host memory only


def from_dlpack(ext_tensor: Any) -> Tensor:
    """A tensor sharing memory with `ext_tensor`: a `__dlpack__` exporter or a capsule."""
    if type(ext_tensor).__name__ == "PyCapsule":
        ext_tensor = _Capsule(ext_tensor)
    return creation.from_dlpack(ext_tensor)
