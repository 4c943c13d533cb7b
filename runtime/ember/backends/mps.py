"""`ember.backends.mps`: Ember does not use mps, so it is not available."""

from __future__ import annotations

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    """False: no Ember device is built on mps."""
    return False


def is_built() -> bool:
    """False: Ember has no MPS device plugin."""
    return False
