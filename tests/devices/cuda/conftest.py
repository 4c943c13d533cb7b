"""Fixtures of the cuda device's tests, which run without a GPU.

NVRTC (the `nvidia-cuda-nvrtc` wheel, through CuPy's raw bindings) compiles for real on
any machine; tests that need it skip only where it, CuPy or the runtime headers are not
installed (`pip install 'ember-cuda[cuda13]'`; `make test` installs them). Nothing here
pretends to be a GPU: the device is reported unavailable, with the driver's own status.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

DEVICE_ROOT = Path(__file__).resolve().parents[3] / "devices" / "cuda"


def _nvrtc_missing() -> str | None:
    if importlib.util.find_spec("cupy_backends") is None:
        return "CuPy is not installed (pip install 'ember-cuda[cuda13]')"
    try:
        from cupy_backends.cuda.libs import nvrtc

        nvrtc.getVersion()
    except Exception as error:  # the library is missing or does not load
        return f"NVRTC is not installed or does not load ({error})"
    from ember_cuda import _nvrtc

    if _nvrtc.runtime_include_dir() is None:
        return "the CUDA runtime headers (nvidia-cuda-runtime wheel) are not installed"
    return None


@pytest.fixture(scope="session")
def nvrtc() -> None:
    """Skip the test where NVRTC cannot compile here."""
    missing = _nvrtc_missing()
    if missing is not None:
        pytest.skip(missing)


@pytest.fixture
def cache(tmp_path: Path, nvrtc: None) -> Iterator[Path]:
    """A fresh cubin cache folder (EMBER_CACHE_DIR) and an empty memory cache."""
    from ember_cuda import _nvrtc

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EMBER_CACHE_DIR", str(tmp_path))
        _nvrtc.clear_memory_cache()
        yield tmp_path / "cuda"
    _nvrtc.clear_memory_cache()


@pytest.fixture(scope="session")
def session_cache_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cuda-cache")


@pytest.fixture
def session_cache(session_cache_root: Path, nvrtc: None) -> Iterator[Path]:
    """EMBER_CACHE_DIR set, for one test, to a folder that the session's tests share."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EMBER_CACHE_DIR", str(session_cache_root))
        yield session_cache_root / "cuda"
