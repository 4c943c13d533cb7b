"""Which library computes the cpu device's float32 matrix products.

OpenBLAS (the scipy-openblas32 wheel) computes every BLAS product the device makes, and
LAPACK. For float32 GEMM, oneDNN's `dnnl_sgemm` replaces it where oneDNN's CPU wheel
(`onednn-cpu-gomp`, Apache-2.0, a dependency on x86-64 Linux) is installed: on the
transformer shapes of the GPT benchmark it runs 10-25% faster at one thread, level with
the MKL inside PyTorch's wheel, while OpenBLAS spends a fifth of its time packing operands
of only 128 columns. oneDNN threads over the same libgomp as the device's own kernels, so
`ember.set_num_threads` governs both.

`EMBER_CPU_SGEMM=openblas` in the environment keeps OpenBLAS; `use()` switches at run
time (the tests run products under both).
"""

from __future__ import annotations

import ctypes
import os
import warnings
from importlib import metadata
from pathlib import Path
from typing import Final, Literal

from ember_cpu._lib import lib

__all__ = ["Engine", "available", "configure", "engine", "use"]

Engine = Literal["onednn", "openblas"]

_DISTRIBUTION: Final = "onednn-cpu-gomp"
_LIBRARY: Final = "libdnnl.so.3"

_onednn: ctypes.CDLL | None = None  # kept loaded while its function is installed
_current: Engine = "openblas"
_configured = False  # configure() ran


def _onednn_path() -> Path | None:
    """Where the installed oneDNN wheel put its shared library, if it is installed."""
    try:
        files = metadata.distribution(_DISTRIBUTION).files or []
    except metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.name == _LIBRARY:
            return Path(str(file.locate()))
    return None


def _load_onednn() -> ctypes.CDLL | None:
    global _onednn
    if _onednn is None:
        path = _onednn_path()
        if path is None or not path.exists():
            return None
        _onednn = ctypes.CDLL(str(path))
    return _onednn


def available() -> tuple[Engine, ...]:
    """The engines this installation can use."""
    path = _onednn_path()
    return ("onednn", "openblas") if path is not None and path.exists() else ("openblas",)


def engine() -> Engine:
    """The engine float32 products run on now."""
    return _current


def use(name: Engine) -> None:
    """Run float32 products on `name` from now on."""
    global _current
    if name == "openblas":
        lib.em_set_sgemm(0)
    elif name == "onednn":
        onednn = _load_onednn()
        if onednn is None:
            raise RuntimeError(
                f"the cpu device has no oneDNN: the {_DISTRIBUTION} wheel is not installed"
            )
        address = ctypes.cast(onednn.dnnl_sgemm, ctypes.c_void_p).value
        lib.em_set_sgemm(address or 0)
    else:
        raise ValueError(f"unknown sgemm engine {name!r}; expected 'onednn' or 'openblas'")
    _current = name


def configure() -> None:
    """The plugin's choice at load: oneDNN when installed, unless the environment says no.
    Once per process: registering the kernels again keeps whatever `use` chose since.

    Anything wrong here (a misspelt setting, a oneDNN that fails to load) warns and leaves
    OpenBLAS in charge: the device works either way."""
    global _configured
    if _configured:
        return
    _configured = True
    wanted = os.environ.get("EMBER_CPU_SGEMM", "").strip().lower()
    if wanted not in ("", "onednn", "openblas"):
        warnings.warn(
            f"EMBER_CPU_SGEMM={wanted!r} is not 'onednn' or 'openblas'; float32 GEMM stays "
            "on OpenBLAS",
            RuntimeWarning,
            stacklevel=2,
        )
        return
    if wanted == "openblas" or "onednn" not in available():
        return
    try:
        use("onednn")
    except (OSError, AttributeError, RuntimeError) as error:  # unloadable, or no dnnl_sgemm
        warnings.warn(
            f"oneDNN did not load ({error}); float32 GEMM stays on OpenBLAS",
            RuntimeWarning,
            stacklevel=2,
        )
