"""`ember.cuda.amp`: torch's deprecated aliases of `ember.amp` bound to cuda."""

from __future__ import annotations

from ember.amp._deprecated import autocast_for, grad_scaler_for

__all__ = ["GradScaler", "autocast"]

autocast = autocast_for("cuda")
GradScaler = grad_scaler_for("cuda")
