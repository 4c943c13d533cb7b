"""The caching allocator under a training loop: no leaks, no raw allocations at steady state."""

from __future__ import annotations

import numpy as np

import ember
from ember import nn, optim
from ember.nn import functional as F

from ._work import idle

BATCH, FEATURES, HIDDEN, CLASSES = 128, 64, 256, 10


class _Training:
    """A small classifier, Adam, and one fixed batch uploaded at every step."""

    def __init__(self, dev: ember.device) -> None:
        ember.manual_seed(0)
        self.device = dev
        self.model = nn.Sequential(
            nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES)
        ).to(dev)
        self.optimizer = optim.Adam(self.model.parameters(), lr=1e-2)
        rng = np.random.default_rng(0)
        self.inputs = ember.from_numpy(rng.standard_normal((BATCH, FEATURES), np.float32))
        self.targets = ember.from_numpy(rng.integers(0, CLASSES, BATCH))

    def step(self) -> float:
        x = self.inputs.to(self.device, non_blocking=True)
        y = self.targets.to(self.device, non_blocking=True)
        loss = F.cross_entropy(self.model(x), y)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def parameter_bytes(self) -> int:
        return sum(p.numel() * p.element_size() for p in self.model.parameters())


def test_memory_allocated_returns_to_its_baseline_after_a_step(device: ember.device) -> None:
    idle(device)
    before = ember.memory_allocated(device)
    training = _Training(device)
    first = training.step()  # creates Adam's state
    training.optimizer.zero_grad(set_to_none=True)
    baseline = ember.memory_allocated(device)
    # parameters, exp_avg and exp_avg_sq stay allocated; nothing else
    assert baseline - before >= 3 * training.parameter_bytes()
    ember.reset_peak_memory_stats(device)
    second = training.step()
    training.optimizer.zero_grad(set_to_none=True)
    assert ember.max_memory_allocated(device) > baseline, "the step allocated nothing?"
    assert ember.memory_allocated(device) == baseline
    assert second < first


def test_steady_state_training_makes_no_raw_allocations(device: ember.device) -> None:
    idle(device)
    raw = ember.memory_stats(device)["num_raw_alloc"]
    training = _Training(device)
    # Two warm-up steps: the first creates the optimizer's state, which then holds blocks
    # that the second step's forward can no longer reuse (a multi-tensor step leaves no
    # temporaries behind to make up for them).
    losses = [training.step(), training.step()]
    warm = ember.memory_stats(device)["num_raw_alloc"]
    assert warm > raw, "the first steps found everything cached: the test shows nothing"
    losses += [training.step() for _ in range(5)]
    assert ember.memory_stats(device)["num_raw_alloc"] == warm
    assert losses[-1] < losses[0]
