"""Ember's CPU device: C kernels compiled through cffi at install time.

`load_inline` compiles a user's C source with the same flags (see `ember_cpu._inline`);
it is imported on first use, so importing this package stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ember_cpu._inline import InlineLibrary, load_inline

__all__ = ["InlineLibrary", "load_inline"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from ember_cpu import _inline

        return getattr(_inline, name)
    raise AttributeError(f"module 'ember_cpu' has no attribute {name!r}")
