"""Exception types of Ember beyond Python's own."""

from __future__ import annotations

__all__ = ["DTypeError", "OutOfMemoryError"]


class DTypeError(TypeError, RuntimeError):
    """An op received a tensor of a dtype it does not support.

    It is a TypeError (the Python convention for a wrong kind of argument) and a
    RuntimeError (what PyTorch raises for these cases), so code written either way
    catches it.
    """


class OutOfMemoryError(RuntimeError):
    """A device allocation failed even after the caching allocator released its cache.

    A RuntimeError, as PyTorch's torch.OutOfMemoryError is; the message names the device,
    the requested size and what the allocator holds.
    """
