"""`ember.backends.opt_einsum`: Ember does not use opt_einsum, so it is not available."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """False: no Ember device is built on opt_einsum."""
    return False
