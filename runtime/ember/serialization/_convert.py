"""`python -m ember convert in.pt out.safetensors`: any checkpoint `ember.load` reads, as a
plain safetensors file of its tensors named by their path ("model.fc.weight"), readable by
every framework's safetensors loader."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import safetensors.numpy

from ember._tensor import Tensor
from ember.nn.modules.module import Module
from ember.serialization import load
from ember.serialization._safetensors_format import _atomic_write

__all__ = ["convert", "flatten_tensors"]


def flatten_tensors(obj: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(path, leaf) for every leaf of nested dicts, lists and tuples."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from flatten_tensors(value, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(obj, (list, tuple)):
        for i, value in enumerate(obj):
            yield from flatten_tensors(value, f"{prefix}.{i}" if prefix else str(i))
    else:
        yield prefix, obj


def convert(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> list[str]:
    """Write `source`'s tensors to `target` (safetensors, atomically); return the paths of
    the non-tensor values left out."""
    obj = load(source, map_location="cpu")
    if isinstance(obj, Module):
        obj = obj.state_dict()
    arrays: dict[str, np.ndarray] = {}
    skipped: list[str] = []
    for path, leaf in flatten_tensors(obj):
        if isinstance(leaf, Tensor):
            arrays[path or "tensor"] = np.ascontiguousarray(leaf.detach().numpy())
        elif isinstance(leaf, np.ndarray):
            arrays[path or "array"] = np.ascontiguousarray(leaf)
        else:
            skipped.append(path or "(the top level)")
    payload = safetensors.numpy.save(arrays, metadata={"format": "pt"})
    _atomic_write(os.fspath(target), payload)
    return skipped
