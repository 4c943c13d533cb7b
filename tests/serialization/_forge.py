"""A checkpoint forged by hand: for files whose structure an attacker chose."""

from __future__ import annotations

import hashlib
import json
import pathlib
from typing import Any

import numpy as np
import safetensors.numpy


def forge(
    path: pathlib.Path,
    structure: Any,
    arrays: dict[str, np.ndarray] | None = None,
    metadata: dict[str, str] | None = None,
) -> None:
    """A checkpoint written by hand, with a valid digest: only the structure is crafted."""
    text = structure if isinstance(structure, str) else json.dumps(structure)
    fields = {"format": "ember", "version": "1", "structure": text, "sha256": "0" * 64}
    fields.update(metadata or {})
    payload = bytearray(safetensors.numpy.save(arrays or {}, metadata=fields))
    placeholder = b'"sha256":"' + b"0" * 64 + b'"'
    start = payload.find(placeholder)
    if start >= 0:
        digest = hashlib.sha256(payload).hexdigest().encode()
        payload[start : start + len(placeholder)] = b'"sha256":"' + digest + b'"'
    path.write_bytes(bytes(payload))
