"""The shared kernel sources (`ember.plugins.kernels`) compile in every dialect they claim.

Each header is compiled on its own, so that it includes what it uses: as strict C99 with
gcc (the cpu device's compiler), as C++ (what NVRTC and nvcc parse), and as CUDA C with
nvcc where a CUDA toolkit is installed. OpenCL C is covered by the opencl device, which
builds every program from `kernels.source(...)` in its own tests.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ember.plugins import kernels

HEADERS = sorted(p.name for p in kernels.DIR.glob("em_*.h"))


def _compile(command: list[str], tmp_path: Path, name: str, suffix: str) -> None:
    unit = tmp_path / f"unit{suffix}"
    unit.write_text(f'#include "{name}"\nint em_unit_anchor;\n')
    result = subprocess.run(
        [*command, "-I", str(kernels.DIR), str(unit)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_every_header_is_listed() -> None:
    assert "em_dialect.h" in HEADERS and len(HEADERS) > 1


@pytest.mark.parametrize("name", HEADERS)
def test_compiles_as_strict_c99(name: str, tmp_path: Path) -> None:
    gcc = ["gcc", "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"]
    _compile([*gcc, "-Wno-unused-function", "-Wno-unused-parameter"], tmp_path, name, ".c")


@pytest.mark.parametrize("name", HEADERS)
def test_compiles_as_cpp(name: str, tmp_path: Path) -> None:
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("no g++ on this machine")
    _compile([gxx, "-std=c++17", "-Wall", "-Werror", "-fsyntax-only"], tmp_path, name, ".cpp")


@pytest.mark.parametrize("name", HEADERS)
def test_compiles_as_cuda(name: str, tmp_path: Path) -> None:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("no CUDA toolkit (nvcc) on this machine")
    _compile([nvcc, "-std=c++17", "-arch=sm_90", "-c", "-o", "unit.o"], tmp_path, name, ".cu")


def test_source_inlines_each_local_include_once() -> None:
    text = kernels.source(*(h for h in HEADERS if h != "em_dialect.h"))
    assert text.startswith(kernels.DIR.joinpath("em_dialect.h").read_text())
    assert text.count("#define EM_DIALECT_H") == 1
    assert '#include "' not in text
