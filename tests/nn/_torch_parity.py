"""Helpers for layer tests that run the same module in Ember and in PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np

import ember


def copy_into_torch(ours: Any, theirs: Any) -> None:
    """Load our state_dict into the torch module (so both have the same weights and keys)."""
    import torch

    state = {name: torch.tensor(t.numpy(force=True)) for name, t in ours.state_dict().items()}
    theirs.load_state_dict(state, strict=True)


def assert_same_outputs(ours: Any, theirs: Any, atol: float = 1e-5, rtol: float = 1e-5) -> None:
    """Compare a tensor or a tuple of tensors (None allowed) from both frameworks."""
    if isinstance(ours, tuple):
        assert isinstance(theirs, tuple) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            assert_same_outputs(a, b, atol, rtol)
        return
    if ours is None:
        assert theirs is None
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(
        ours.numpy(force=True), theirs.numpy(force=True), atol=atol, rtol=rtol
    )


def assert_same_gradients(ours: Any, theirs: Any, atol: float = 1e-5, rtol: float = 1e-5) -> None:
    """The .grad of every named parameter agrees."""
    mine = dict(ours.named_parameters())
    for name, parameter in theirs.named_parameters():
        if parameter.grad is None:
            assert mine[name].grad is None, name
            continue
        assert mine[name].grad is not None, name
        np.testing.assert_allclose(
            mine[name].grad.numpy(force=True),
            parameter.grad.numpy(force=True),
            atol=atol,
            rtol=rtol,
            err_msg=name,
        )


def pair(array: np.ndarray, device: str, grad: bool = False) -> tuple[Any, Any]:
    """The same float32 data as an ember tensor and a torch tensor."""
    import torch

    data = np.asarray(array, dtype=np.float32)
    ours = ember.tensor(data, device=device)
    theirs = torch.tensor(data)
    if grad:
        ours.requires_grad_()
        theirs.requires_grad_()
    return ours, theirs
