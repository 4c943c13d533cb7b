"""Reverse-mode automatic differentiation, recorded as ops run (define-by-run)."""

from __future__ import annotations

from ember.autograd._anomaly import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from ember.autograd._api import backward, grad
from ember.autograd._engine import queue_callback
from ember.autograd._function import Function, FunctionCtx, once_differentiable
from ember.autograd._gradcheck import GradcheckError, gradcheck, gradgradcheck
from ember.autograd._mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from ember.autograd._node import Node

__all__ = [
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "Node",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "inference_mode",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "once_differentiable",
    "queue_callback",
    "set_detect_anomaly",
    "set_grad_enabled",
]
