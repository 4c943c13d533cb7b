"""Optimizers (`SGD`, `Adam`, `AdamW`, `RMSprop`) and learning-rate schedulers (`lr_scheduler`)."""

from __future__ import annotations

from ember.optim import lr_scheduler, swa_utils
from ember.optim.adadelta import Adadelta
from ember.optim.adafactor import Adafactor
from ember.optim.adagrad import Adagrad
from ember.optim.adam import Adam
from ember.optim.adamax import Adamax
from ember.optim.adamw import AdamW
from ember.optim.asgd import ASGD
from ember.optim.lbfgs import LBFGS
from ember.optim.muon import Muon
from ember.optim.nadam import NAdam
from ember.optim.optimizer import Optimizer
from ember.optim.radam import RAdam
from ember.optim.rmsprop import RMSprop
from ember.optim.rprop import Rprop
from ember.optim.sgd import SGD

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]
__all__ += ["swa_utils"]
__all__ += ["ASGD", "LBFGS", "Adadelta", "Adagrad", "Adamax", "NAdam", "RAdam", "Rprop"]
__all__ += ["Adafactor", "Muon"]
