"""`ember.backends.mkldnn`: Ember does not use mkldnn, so it is not available."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """False: no Ember device is built on mkldnn."""
    return False
