"""Placeholder until this kernel family lands."""

from __future__ import annotations

from ember._dispatch import KernelRegistry


def register(registry: KernelRegistry) -> None:
    """Register this family's kernels for the cpu device."""
