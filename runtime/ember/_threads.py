"""Intra-op thread count of the devices that compute on host threads."""

from __future__ import annotations

from ember.plugins._manager import MANAGER

__all__ = ["get_num_threads", "set_num_threads"]


def set_num_threads(n: int) -> None:
    """Set the number of threads host-computing devices (cpu) use within one op."""
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"set_num_threads expects a positive integer, got {n!r}")
    MANAGER.ensure_loaded()
    for info in MANAGER.device_types.values():
        if info.reason is None:
            info.backend.set_num_threads(n)


def get_num_threads() -> int:
    """The intra-op thread count of the cpu device (1 if no host-computing device)."""
    MANAGER.ensure_loaded()
    for info in MANAGER.device_types.values():
        if info.reason is None:
            count = info.backend.get_num_threads()
            if count is not None:
                return count
    return 1
