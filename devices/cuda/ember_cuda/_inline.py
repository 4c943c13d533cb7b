"""`load_inline`: CUDA C++ kernels given as a string, compiled by NVRTC to a cubin.

The compile side works without a GPU: the program goes through `_nvrtc.compile_cuda`
(memory, then the disk cache of cubins), with `#line 1 "<name>.cu"` before the user's
source (after the shared dialect, with `dialect=True`), so a failed compile raises
`ember.library.CompileError` positioned in the user's file, lines counted from its first
line. Each listed kernel is a name expression (`"scale"` for an `extern "C"` kernel,
`"scale<float>"` for a template instance) that NVRTC resolves to its symbol in the cubin.

Launching needs a GPU. Without one, calling a kernel raises RuntimeError naming why the
cuda device is unavailable; with one, the launch path (module load, packed arguments on
the current ember stream) awaits its first GPU run and raises NotImplementedError.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any, Final

from ember.plugins import kernels as shared_kernels
from ember_cuda import _nvrtc
from ember_cuda.backend import BACKEND

__all__ = ["InlineKernel", "InlineModule", "load_inline"]

_RESERVED: Final = frozenset({"cubin", "kernels", "name", "arch"})
_COMMENTS: Final = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)
_modules: dict[tuple[Any, ...], InlineModule] = {}
_lock = threading.Lock()


class InlineKernel:
    """One kernel of a `load_inline` module: `kernel(grid, block, *args, shared_mem=0)`."""

    __slots__ = ("lowered", "module", "name")

    def __init__(self, name: str, lowered: str, module: InlineModule) -> None:
        #: the name expression, as listed
        self.name = name
        #: its symbol in the cubin (the same for an `extern "C"` kernel)
        self.lowered = lowered
        self.module = module

    def __call__(
        self,
        grid: int | Sequence[int],
        block: int | Sequence[int],
        *args: Any,
        shared_mem: int = 0,
    ) -> None:
        reason = BACKEND.unavailable_reason()
        if reason is not None:
            raise RuntimeError(
                f"ember_cuda: cannot launch {self.name}: the cuda device is unavailable "
                f"({reason}); the kernel compiled, and its cubin is cached"
            )
        raise NotImplementedError(
            f"ember_cuda: launching {self.name} is not available yet: the launch path "
            "(module load, packed arguments on the current stream) has not run on a GPU"
        )

    def __repr__(self) -> str:
        return f"<InlineKernel {self.name} of {self.module.name}.cu>"


class InlineModule:
    """The kernels of one `load_inline` compile, as attributes (identifiers) and by
    `module[name]` (any name expression)."""

    def __init__(self, cubin: _nvrtc.Cubin, name: str, kernels: Sequence[str]) -> None:
        self.cubin = cubin
        self.name = name
        self.arch = cubin.arch
        self.kernels: tuple[str, ...] = tuple(kernels)
        self._by_name = {k: InlineKernel(k, cubin.lowered[k], self) for k in kernels}
        for kernel, launcher in self._by_name.items():
            if kernel.isidentifier():
                setattr(self, kernel, launcher)

    def __getitem__(self, name: str) -> InlineKernel:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(
                f"ember_cuda.load_inline: no kernel {name!r} in {self.name}.cu; "
                f"it has {', '.join(self.kernels)}"
            ) from None

    def __getattr__(self, name: str) -> Any:
        # Only reached for names that are not attributes: say what the module does have.
        raise AttributeError(
            f"ember_cuda.load_inline: no kernel {name!r} in {self.name}.cu; "
            f"it has {', '.join(self.kernels)}"
        )

    def __repr__(self) -> str:
        return f"<InlineModule {self.name}.cu ({', '.join(self.kernels)}) for {self.arch}>"


def load_inline(
    source: str,
    kernels: str | Sequence[str],
    *,
    name: str = "inline",
    options: Sequence[str] = (),
    arch: str = _nvrtc.DEFAULT_ARCH,
    dialect: bool = False,
    warnings_as_errors: bool = False,
) -> InlineModule:
    """Compile CUDA C++ `source` with NVRTC to a cubin for `arch` and return its kernels.

    `kernels` are name expressions of `__global__` functions; `options` follow the
    device's defaults (`-std=c++17 --fmad=false`, the include folders of cuda_fp16.h and
    cuda_bf16.h); `dialect=True` puts the shared kernel dialect (`em_dialect.h`) first.
    Compile errors (and warnings, with `warnings_as_errors`) raise
    `ember.library.CompileError`, positioned in `<name>.cu`.
    """
    listed = (kernels,) if isinstance(kernels, str) else tuple(kernels)
    call = (source, listed, name, tuple(options), arch, dialect, warnings_as_errors)
    found = _modules.get(call)
    if found is not None:
        return found
    if not name.isidentifier():
        raise ValueError(f"ember_cuda.load_inline: name must be an identifier, got {name!r}")
    _check_kernels(source, listed)
    prelude = shared_kernels.source() + "\n" if dialect else ""
    cubin = _nvrtc.compile_cuda(
        f'{prelude}#line 1 "{name}.cu"\n{source}',
        name,
        options=options,
        arch=arch,
        name_expressions=listed,
        warnings_as_errors=warnings_as_errors,
    )
    with _lock:
        found = _modules.setdefault(call, InlineModule(cubin, name, listed))
    return found


def _check_kernels(source: str, kernels: Sequence[str]) -> None:
    if not kernels:
        raise ValueError("ember_cuda.load_inline: name at least one kernel")
    code = _COMMENTS.sub(" ", source)
    for kernel in kernels:
        base = kernel.split("<", 1)[0].strip()
        if not base.isidentifier():
            raise ValueError(f"ember_cuda.load_inline: {kernel!r} is not a kernel name")
        if base in _RESERVED:
            raise ValueError(
                f"ember_cuda.load_inline: a kernel named {base!r} would hide "
                f"InlineModule.{base}; rename it"
            )
        if not re.search(rf"__global__[^;{{}}]*?\b{re.escape(base)}\s*\(", code):
            raise ValueError(
                f"ember_cuda.load_inline: no kernel {base} in the source "
                "(looked for `__global__ void name(...)`)"
            )
