"""Parallel training wrappers: `DistributedDataParallel` (torch.nn.parallel's)."""

from __future__ import annotations

from ember.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
