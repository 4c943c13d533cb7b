"""Checkpoints: ember.save / ember.load on safetensors (being written)."""

from __future__ import annotations

from typing import Any


def save(obj: Any, path: Any) -> None:
    """Save a state dict."""
    raise NotImplementedError("ember.save is being written")


def load(path: Any, map_location: Any = None) -> Any:
    """Load a state dict."""
    raise NotImplementedError("ember.load is being written")
