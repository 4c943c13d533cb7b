"""Utilities for training modules (PyTorch's torch.nn.utils)."""

from __future__ import annotations

from ember.nn.utils import rnn
from ember.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_, get_total_norm

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "rnn"]
