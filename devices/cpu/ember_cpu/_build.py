"""cffi build script: compiles every csrc/*.c into the `ember_cpu._kernels` extension.

Each kernel family owns one `csrc/<family>.c` and one `csrc/<family>.cdef` (the
declarations cffi exposes to Python). The elementwise loops are rendered from the
runtime's expression table (`_render.py`) into the extension's own source. The build runs
once, at install time; importing ember_cpu never compiles anything.

`compile_options()` is the one list of flags, include directories and libraries, so that
`ember_cpu.load_inline` compiles user kernels exactly as the built-in ones. Importing
this module (rather than running it) builds nothing.
"""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path
from typing import TypedDict

import scipy_openblas32
from cffi import FFI

HERE = Path(__file__).resolve().parent
CSRC = HERE / "csrc"
# The kernel sources this device shares with others (`ember.plugins.kernels`): from this
# source tree when building in it, else from the installed ember.
_TREE_KERNELS = HERE.parents[2] / "runtime/ember/plugins/kernels"


class CompileOptions(TypedDict):
    """The compiler and linker settings every CPU kernel is built with (setuptools' names)."""

    include_dirs: list[str]
    library_dirs: list[str]
    libraries: list[str]
    extra_compile_args: list[str]
    extra_link_args: list[str]


def _cflags() -> list[str]:
    flags = os.environ.get("EMBER_CPU_CFLAGS")
    if flags is not None:
        return flags.split()
    # -march=native is safe: the extension is always compiled on the machine that runs it.
    # No math errno nor FP traps: libm calls inline, and the selects of the float32 math
    # (elementwise_math.h) if-convert, so their loops vectorise; results are unchanged.
    optimise = ["-O3", "-march=native", "-fopenmp", "-std=gnu11"]
    if platform.machine().lower() in ("x86_64", "amd64"):
        # GCC's tuning for AMD Zen 1 (what -march=native picks on many EPYC VMs) prefers
        # 128-bit vectors even where AVX2 has 256: 6-13% on float32 exp, add and sum here.
        optimise.append("-mprefer-vector-width=256")
    return [*optimise, "-fno-math-errno", "-fno-trapping-math"]


def shared_kernels_dir() -> Path:
    """The folder of `ember.plugins.kernels` (em_dialect.h, ...), an include directory."""
    if (_TREE_KERNELS / "em_dialect.h").is_file():
        return _TREE_KERNELS
    from ember.plugins import kernels

    return kernels.DIR


def compile_options() -> CompileOptions:
    """Flags (`EMBER_CPU_CFLAGS` replaces ours), OpenMP, OpenBLAS and the shared kernels."""
    return CompileOptions(
        include_dirs=[str(shared_kernels_dir()), scipy_openblas32.get_include_dir()],
        library_dirs=[scipy_openblas32.get_lib_dir()],
        libraries=[scipy_openblas32.get_library()],
        extra_compile_args=_cflags(),
        extra_link_args=["-fopenmp"],
    )


def _build() -> FFI:
    from ember_cpu._render import render

    ffibuilder = FFI()
    declarations = "\n".join(p.read_text() for p in sorted(CSRC.glob("*.cdef")))
    ffibuilder.cdef(declarations)
    sources = sorted(
        str(p.relative_to(Path.cwd())) if p.is_relative_to(Path.cwd()) else str(p)
        for p in CSRC.glob("*.c")
    )
    options = compile_options()
    options["include_dirs"].insert(0, str(CSRC))
    ffibuilder.set_source(
        "ember_cpu._kernels",
        # The cdef text doubles as the C prototypes the generated wrappers call.
        '#include "ember_cpu.h"\n' + declarations + render(),
        sources=sources,
        **options,
    )
    return ffibuilder


if __name__ != "ember_cpu._build":
    # Run as a build script (cffi_modules), this file is not imported as part of ember_cpu.
    sys.path.insert(0, str(HERE.parent))
    ffibuilder = _build()

if __name__ == "__main__":
    ffibuilder.compile(verbose="-v" in sys.argv)
