"""The on-disk cache every device keeps its compiled programs in, and how to write into it.

One root for all of them, `$EMBER_CACHE_DIR` (default `~/.cache/ember`), a folder per
device or compiler below it, so that deleting the root clears every cache at once.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Final

__all__ = ["CACHE_ENV", "cache_dir", "write_atomically"]

CACHE_ENV: Final = "EMBER_CACHE_DIR"


def cache_dir(name: str) -> Path:
    """The cache folder `name` (e.g. "opencl") under the root; it may not exist yet."""
    root = os.environ.get(CACHE_ENV)
    base = Path(root) if root else Path.home() / ".cache" / "ember"
    return base / name


def write_atomically(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file and a rename, so that a concurrent
    reader sees the old file or the new one, never half of one; raises OSError."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
