"""Loads the compiled kernels, after the OpenBLAS they link against.

The extension links libscipy_openblas by name; loading the copy that the
scipy-openblas32 wheel installed (RTLD_GLOBAL) first lets the dynamic loader resolve it
without an rpath into the temporary build environment.
"""

from __future__ import annotations

import ctypes
import os

import scipy_openblas32

# OpenMP workers that spin between parallel regions starve OpenBLAS's own threads (and each
# other) on a machine with few cores: a 2-thread training step ran 4-5x slower than with
# one thread. Sleeping workers cost a wake-up per region, which large ops don't notice.
# Read by libgomp when it initialises, i.e. when the extension below loads it; a user's
# own setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

ctypes.CDLL(
    os.path.join(scipy_openblas32.get_lib_dir(), scipy_openblas32.get_library(fullname=True)),
    mode=ctypes.RTLD_GLOBAL,
)

from ember_cpu._kernels import ffi, lib  # noqa: E402 - must follow the preload above

__all__ = ["check", "ffi", "lib"]


def check(status: int, op: str) -> None:
    """Raise the error a kernel reported through a non-zero status."""
    if status != 0:
        message = ffi.string(lib.em_last_error()).decode()
        raise (IndexError if status == 1 else RuntimeError)(f"{op}: {message}")
