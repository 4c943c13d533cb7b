"""ember.library: define custom ops, add or override kernels for any op on any device,
and ask which kernel runs (see docs/plugins/writing-kernels.md)."""

from __future__ import annotations

from ember.library._compile_error import CompileError

__all__ = ["CompileError"]
