"""Memory layouts: Ember tensors are all strided (no sparse or mkldnn layouts)."""

from __future__ import annotations

from typing import Final

__all__ = ["layout", "strided"]


class layout:
    """A tensor layout; `ember.strided` is the only one."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name: Final = name

    def __repr__(self) -> str:
        return f"ember.{self.name}"

    def __reduce__(self) -> str:
        return self.name


strided = layout("strided")
