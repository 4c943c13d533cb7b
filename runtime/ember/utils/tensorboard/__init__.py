"""`ember.utils.tensorboard`: PyTorch's `torch.utils.tensorboard.SummaryWriter`.

Writes TensorBoard event files through the `tensorboard` package (its protocol buffers and
its event-file writer), so `tensorboard --logdir runs` shows what a PyTorch script logged:
scalars, histograms, images, text and hyperparameters. `tensorboard` is an optional
dependency (`pip install ember[tensorboard]`); importing this module without it raises
ImportError saying so, as PyTorch does.
"""

from __future__ import annotations

try:
    import tensorboard  # noqa: F401  (the dependency check, as torch.utils.tensorboard's)
except ImportError as error:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "ember.utils.tensorboard needs the tensorboard package (TensorBoard logging): "
        "pip install tensorboard (or ember[tensorboard])"
    ) from error

from ember.utils.tensorboard.writer import SummaryWriter

__all__ = ["SummaryWriter"]
