"""`ember.backends.openmp`: Ember does not use openmp, so it is not available."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """False: no Ember device is built on openmp."""
    return False
