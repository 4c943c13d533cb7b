"""Optimizers (`SGD`, `Adam`, `AdamW`, `RMSprop`) and learning-rate schedulers (`lr_scheduler`)."""

from __future__ import annotations

from ember.optim import lr_scheduler
from ember.optim.adam import Adam
from ember.optim.adamw import AdamW
from ember.optim.optimizer import Optimizer
from ember.optim.rmsprop import RMSprop
from ember.optim.sgd import SGD

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]
