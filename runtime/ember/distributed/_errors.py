"""The errors of ember.distributed, named as PyTorch's (`torch.distributed.DistError`...)."""

from __future__ import annotations

__all__ = ["DistBackendError", "DistError", "DistNetworkError", "DistStoreError"]


class DistError(RuntimeError):
    """A collective failed or was called wrongly (ranks disagree, group misused)."""


class DistBackendError(DistError):
    """The communication engine itself reported an error (MPI, NCCL)."""


class DistNetworkError(DistError):
    """The transport between ranks failed."""


class DistStoreError(DistError):
    """A rendezvous store failed (kept for PyTorch's names; MPI needs no store)."""
