"""`ember.cpu.amp`: torch's deprecated aliases of `ember.amp` bound to cpu."""

from __future__ import annotations

from ember.amp._deprecated import autocast_for, grad_scaler_for

__all__ = ["GradScaler", "autocast"]

autocast = autocast_for("cpu")
GradScaler = grad_scaler_for("cpu")
