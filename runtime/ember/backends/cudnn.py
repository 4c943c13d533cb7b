"""`ember.backends.cudnn`: Ember never uses cuDNN, so it is not available; the flags are kept."""

from __future__ import annotations

__all__ = ["allow_tf32", "benchmark", "deterministic", "enabled", "is_available", "version"]

enabled: bool = True
benchmark: bool = False
deterministic: bool = False
allow_tf32: bool = True


def is_available() -> bool:
    """False: Ember's cuda device compiles its own kernels and does not link cuDNN."""
    return False


def version() -> int | None:
    """None, as PyTorch answers when cuDNN is not available."""
    return None
