"""`ember.backends.cuda`: whether the cuda plugin is installed, and its matmul flags."""

from __future__ import annotations

from ember import _precision
from ember.plugins._manager import MANAGER

__all__ = ["is_built", "matmul", "preferred_linalg_library"]


def is_built() -> bool:
    """Whether the ember cuda device plugin is installed (not whether a GPU exists)."""
    MANAGER.ensure_loaded()
    return "cuda" in MANAGER.device_types


class _Matmul:
    """`allow_tf32` mirrors `get_float32_matmul_precision() != 'highest'`, as in PyTorch."""

    allow_fp16_reduced_precision_reduction: bool = True
    allow_bf16_reduced_precision_reduction: bool = True

    @property
    def allow_tf32(self) -> bool:
        return _precision.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        _precision.set_float32_matmul_precision("high" if value else "highest")


matmul = _Matmul()


def preferred_linalg_library(backend: str | None = None) -> str:
    """Ember's linear algebra is its own kernels on every device: always 'default'."""
    if backend not in (None, "default"):
        raise RuntimeError(
            f"preferred_linalg_library: Ember has no {backend!r} backend; only 'default'"
        )
    return "default"
