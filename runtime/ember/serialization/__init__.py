"""Checkpoints: `ember.save` / `ember.load`, and the allow-list of what a checkpoint may
name (`add_safe_globals`, `safe_globals`, `get_safe_globals`, `clear_safe_globals`).

`save` writes Ember's format: safetensors for the tensors, JSON for everything else, never
pickle (`_safetensors_format`, `_objects`). `load` reads that format, plain safetensors
files, and PyTorch's `torch.save` checkpoints (zip and legacy) through a restricted
unpickler (`_torch_format`). Whatever the file, loading rebuilds only tensors, containers,
plain values and allow-listed classes: it never runs code a file names.
"""

from __future__ import annotations

import os
from typing import Any

from ember.serialization._allowlist import (
    CheckpointRefused,
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    safe_globals,
)
from ember.serialization._safetensors_format import FileLike, MapLocation, place, read, save
from ember.serialization._torch_format import is_legacy_torch, is_torch_zip, read_legacy, read_zip

__all__ = [
    "CheckpointRefused",
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "load",
    "safe_globals",
    "save",
]


def load(
    f: FileLike,
    map_location: MapLocation = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    **pickle_load_args: Any,
) -> Any:
    """Read a checkpoint: Ember's own, a safetensors file (a dict of its tensors), or a
    PyTorch `.pt`/`.pth`. `map_location` places tensors: a device, a {saved: target} dict,
    or `fn(cpu_tensor, saved_location) -> tensor or None`.

    `weights_only` is accepted for PyTorch's signature, but either way Ember rebuilds only
    what `weights_only=True` allows in PyTorch plus the user's allow-list
    (`add_safe_globals`); `pickle_module` and pickle options are refused, `mmap` ignored
    (the file is read once).
    """
    if pickle_module is not None or pickle_load_args:
        raise TypeError(
            "ember.load: pickle_module and pickle load arguments are not supported: ember "
            "never unpickles with a user-chosen unpickler"
        )
    if isinstance(f, (str, os.PathLike)):
        name = os.fspath(f)
        with open(name, "rb") as file:
            data = file.read()
    else:
        name, data = repr(f), f.read()

    def placed(array: Any, key: str, location: str) -> Any:
        return place(name, array, key, location, map_location)

    if is_torch_zip(data):
        return read_zip(data, name, placed)
    if is_legacy_torch(data):
        return read_legacy(data, name, placed)
    return read(name, data, map_location)
