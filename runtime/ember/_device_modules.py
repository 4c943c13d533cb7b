"""`ember.get_device_module`: the namespace module of a device type, as torch's."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from ember.accelerator import current_accelerator

__all__ = ["get_device_module"]

# The device types that have a torch-style namespace module (ember.cuda, ember.cpu).
_MODULES = {"cpu": "ember.cpu", "cuda": "ember.cuda"}


def get_device_module(device: Any = None) -> ModuleType:
    """`ember.cuda` for 'cuda', `ember.cpu` for 'cpu'; None: the accelerator's, else cpu's."""
    if device is None:
        found = current_accelerator()
        name = "cpu" if found is None else found.type
    else:
        name = device if isinstance(device, str) else device.type
        name = name.partition(":")[0]
    module = _MODULES.get(name)
    if module is None:
        raise RuntimeError(
            f"Device '{name}' does not have a corresponding module registered as 'ember.{name}'."
        )
    return importlib.import_module(module)
