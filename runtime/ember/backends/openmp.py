"""`ember.backends.openmp`: whether the cpu device's kernels run on OpenMP threads."""

from __future__ import annotations

from ember import _torch_longtail

__all__ = ["is_available"]


def is_available() -> bool:
    """`ember.has_openmp`, as torch's is `torch._C.has_openmp`: read from the cpu device's
    built kernel library (False without the cpu plugin)."""
    return _torch_longtail.has_openmp()
