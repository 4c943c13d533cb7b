"""`ember.backends.cpu`: the cpu device's compiled C kernels (portable C, no vendor library)."""

from __future__ import annotations

__all__ = ["get_cpu_capability"]


def get_cpu_capability() -> str:
    """'DEFAULT': Ember's cpu kernels are portable C compiled for the host, not ISA-dispatched."""
    return "DEFAULT"
