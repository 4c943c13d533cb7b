"""cffi build script: compiles every csrc/*.c into the `ember_cpu._kernels` extension.

Each kernel family owns one `csrc/<family>.c` and one `csrc/<family>.cdef` (the
declarations cffi exposes to Python). The elementwise loops are rendered from the
runtime's expression table (`_render.py`) into the extension's own source. The build runs
once, at install time; importing ember_cpu never compiles anything.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import scipy_openblas32
from cffi import FFI

HERE = Path(__file__).resolve().parent
CSRC = HERE / "csrc"
# The kernel sources this device shares with others (`ember.plugins.kernels`): from this
# source tree when building in it, else from the installed ember.
_TREE_KERNELS = HERE.parents[2] / "runtime/ember/plugins/kernels"
# Run as a build script (cffi_modules), this file is not imported as part of ember_cpu.
sys.path.insert(0, str(HERE.parent))
from ember_cpu._render import render  # noqa: E402 - needs the path above


def _cflags() -> list[str]:
    flags = os.environ.get("EMBER_CPU_CFLAGS")
    if flags is not None:
        return flags.split()
    # -march=native is safe: the extension is always compiled on the machine that runs it.
    # No math errno nor FP traps: libm calls inline, and the selects of the float32 math
    # (elementwise_math.h) if-convert, so their loops vectorise; results are unchanged.
    optimise = ["-O3", "-march=native", "-fopenmp", "-std=gnu11"]
    return [*optimise, "-fno-math-errno", "-fno-trapping-math"]


def _shared_kernels() -> Path:
    if (_TREE_KERNELS / "em_dialect.h").is_file():
        return _TREE_KERNELS
    from ember.plugins import kernels

    return kernels.DIR


def _build() -> FFI:
    ffibuilder = FFI()
    declarations = "\n".join(p.read_text() for p in sorted(CSRC.glob("*.cdef")))
    ffibuilder.cdef(declarations)
    sources = sorted(
        str(p.relative_to(Path.cwd())) if p.is_relative_to(Path.cwd()) else str(p)
        for p in CSRC.glob("*.c")
    )
    lib_dir = scipy_openblas32.get_lib_dir()
    ffibuilder.set_source(
        "ember_cpu._kernels",
        # The cdef text doubles as the C prototypes the generated wrappers call.
        '#include "ember_cpu.h"\n' + declarations + render(),
        sources=sources,
        include_dirs=[str(CSRC), str(_shared_kernels()), scipy_openblas32.get_include_dir()],
        library_dirs=[lib_dir],
        libraries=[scipy_openblas32.get_library()],
        extra_compile_args=_cflags(),
        extra_link_args=["-fopenmp"],
    )
    return ffibuilder


ffibuilder = _build()

if __name__ == "__main__":
    ffibuilder.compile(verbose="-v" in sys.argv)
