"""`ember.backends.mkldnn`: Ember has no mkldnn tensors or ops, so it is not available."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """False: no `to_mkldnn` layout or mkldnn op exists in Ember. (The cpu device may run
    its float32 GEMM on oneDNN's sgemm, see docs/devices/cpu.md; that is a kernel choice
    inside the device, not the mkldnn backend torch's flag describes.)"""
    return False
