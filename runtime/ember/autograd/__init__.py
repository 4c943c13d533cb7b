"""Reverse-mode automatic differentiation, recorded as ops run (define-by-run)."""

from __future__ import annotations

from ember.autograd._api import backward, grad
from ember.autograd._graph import Node
from ember.autograd._mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

__all__ = [
    "Node",
    "backward",
    "enable_grad",
    "grad",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_grad_enabled",
]
