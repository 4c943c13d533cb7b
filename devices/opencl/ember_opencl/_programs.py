"""Built OpenCL programs, cached per (context, source, options) in memory and on disk.

The disk cache lives in `$EMBER_CACHE_DIR/opencl` (default `~/.cache/ember/opencl`); one
file per program, named by the sha256 of the source, the options and the identity of the
platform, device and driver, holding `program.binaries[0]`. A file that does not load
(truncated, another driver's, garbage) is rebuilt from source and overwritten. Writes
are atomic (temporary file + rename), so concurrent processes never read half a file.

pyopencl's own compiler cache is pointed into the same folder; PoCL keeps its kernel
cache in `POCL_CACHE_DIR` (set to a folder beside ours unless the user set it, which only
works before the first OpenCL call in the process). Both caches key on the full source,
so they can never hand back a stale program; deleting the folder clears all three.
"""

from __future__ import annotations

import hashlib
import os
import threading
import warnings
from pathlib import Path
from typing import Any

import pyopencl as cl

from ember.plugins.sdk import cache_dir as shared_cache_dir
from ember.plugins.sdk import write_atomically

__all__ = ["STATS", "build", "cache_dir", "clear_memory_cache"]


#: Counters, for tests and benchmarks: programs built from source, loaded from disk,
#: and found in memory.
STATS: dict[str, int] = {"source_builds": 0, "disk_hits": 0, "memory_hits": 0}

_programs: dict[tuple[Any, str, str], Any] = {}
_lock = threading.Lock()


def cache_dir() -> Path:
    """The folder of the on-disk program cache (it may not exist yet)."""
    return shared_cache_dir("opencl")


def default_pocl_cache() -> None:
    """Point PoCL's kernel cache beside ours unless the user chose one (call before cl init)."""
    os.environ.setdefault("POCL_CACHE_DIR", str(cache_dir() / "pocl"))


def _identity(device: Any) -> str:
    platform = device.platform
    return "\n".join(
        (
            platform.name,
            platform.version,
            device.name,
            device.version,
            device.driver_version,
            ".".join(map(str, cl.VERSION)),
        )
    )


def _key(device: Any, source: str, options: str) -> str:
    digest = hashlib.sha256()
    for part in (source, options, _identity(device)):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _build_error(error: Exception, device: Any, options: str) -> RuntimeError:
    return RuntimeError(
        f"ember_opencl: building an OpenCL program failed on {device.name!r} "
        f"(options {options!r}):\n{error}"
    )


def _pyopencl_cache() -> str | None:
    """pyopencl's compiler-cache folder inside ours; None (its default) when unwritable."""
    folder = cache_dir() / "pyopencl"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return str(folder)


def _from_source(context: Any, device: Any, source: str, options: str) -> Any:
    STATS["source_builds"] += 1
    try:
        with warnings.catch_warnings():
            # A successful build's log (PoCL's ABI notes on vector returns, ...) is not
            # the user's business; a failed one is raised below, log included.
            warnings.simplefilter("ignore", cl.CompilerWarning)
            return cl.Program(context, source).build(options=options, cache_dir=_pyopencl_cache())
    except (cl.RuntimeError, cl.Error) as error:
        raise _build_error(error, device, options) from error


def _from_binary(context: Any, device: Any, path: Path, options: str) -> Any | None:
    """The program stored at `path`, or None when missing or unusable."""
    try:
        binary = path.read_bytes()
    except OSError:
        return None
    if not binary:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cl.CompilerWarning)
            program = cl.Program(context, [device], [binary]).build(options=options)
    except Exception:  # any failure to load a cached binary means rebuild
        return None
    STATS["disk_hits"] += 1
    return program


def _store(path: Path, program: Any) -> None:
    try:
        write_atomically(path, program.binaries[0])
    except OSError:
        return  # a read-only or full cache folder only costs the next process a rebuild


def build(context: Any, source: str, options: str = "") -> Any:
    """The built cl.Program for `source` on `context`'s (single) device."""
    key = (context, source, options)
    program = _programs.get(key)
    if program is not None:
        STATS["memory_hits"] += 1
        return program
    with _lock:
        program = _programs.get(key)
        if program is not None:
            return program
        device = context.devices[0]
        path = cache_dir() / f"{_key(device, source, options)}.bin"
        program = _from_binary(context, device, path, options)
        if program is None:
            program = _from_source(context, device, source, options)
            _store(path, program)
        _programs[key] = program
        return program


def clear_memory_cache() -> None:
    """Forget the programs built in this process (the disk cache stays)."""
    with _lock:
        _programs.clear()
