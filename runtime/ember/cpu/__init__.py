"""`ember.cpu`: torch.cpu's small namespace — the host device is always there."""

from __future__ import annotations

from ember._stream import synchronize as _synchronize
from ember.cpu import amp

__all__ = ["amp", "current_device", "device_count", "is_available", "synchronize"]


def is_available() -> bool:
    """True: Ember's cpu device is built in."""
    return True


def device_count() -> int:
    """1, as torch.cpu answers."""
    return 1


def current_device() -> str:
    """'cpu', as torch.cpu answers."""
    return "cpu"


def synchronize(device: object = None) -> None:
    """Wait for the cpu device's work (its kernels are synchronous)."""
    del device
    _synchronize("cpu")
