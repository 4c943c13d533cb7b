"""Neural-network building blocks: `Module`, `Parameter`, containers and layers.

The layers are `ember.nn.modules`' (listed once, in its `__all__`), re-exported here as
torch.nn re-exports torch.nn.modules.
"""

from __future__ import annotations

import importlib
from typing import Any

from ember.nn import functional, init, modules, utils
from ember.nn.modules import *  # noqa: F403
from ember.nn.parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = [
    *modules.__all__,
    "Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter",
    "functional", "init", "utils",
]  # fmt: skip


def __getattr__(name: str) -> Any:
    # ember.nn.parallel brings ember.distributed: imported on first use, not with ember.
    if name == "parallel":
        return importlib.import_module("ember.nn.parallel")
    raise AttributeError(f"module 'ember.nn' has no attribute {name!r}")
