"""CUDA C to cubin through NVRTC, cached in memory and on disk; failures as CompileError.

NVRTC compiles without a GPU or a driver (it is a library, `nvidia-cuda-nvrtc`), so every
program of this device is checked on CPU-only machines. Programs compile to cubin for one
architecture (default sm_90), not PTX: a driver older than the NVRTC that wrote the PTX
refuses to load it, while a cubin needs no JIT at all.

The disk cache is `$EMBER_CACHE_DIR/cuda` (default `~/.cache/ember/cuda`): `<key>.cubin`
beside `<key>.json` (NVRTC's log, for register and spill counts, and the kernels' lowered
names), the key the sha256 of the source, the options, the NVRTC version, the architecture
and the bundled headers. Writes are atomic (temporary file + rename), the metadata first,
so a reader never sees a cubin without its log; a file that is missing, truncated or not a
cubin is compiled again and overwritten.

Shared kernel headers go into the source text (`ember.plugins.kernels.source`), not
through an include path, so that editing one changes the key.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import re
import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Final

from ember.library import CompileError
from ember.plugins.sdk import cache_dir as shared_cache_dir
from ember.plugins.sdk import write_atomically

__all__ = [
    "DEFAULT_ARCH",
    "STATS",
    "Cubin",
    "KernelResources",
    "cache_dir",
    "clear_memory_cache",
    "compile_cuda",
    "default_options",
    "include_dirs",
    "nvrtc_version",
]

#: Hopper (H100/H200): the GPU this device is first proven on.
DEFAULT_ARCH: Final = "sm_90"
#: Where cuda_fp16.h / cuda_bf16.h live in the nvidia-cuda-runtime wheels (13.x, 12.x).
_RUNTIME_INCLUDES: Final = ("cu13/include", "cuda_runtime/include")
#: Tiny stand-ins for <math.h> and <stdint.h>, which NVRTC does not ship but the runtime's
#: expression prelude includes (CUDA's math functions are built into NVRTC).
SHIM_DIR: Final = Path(__file__).resolve().parent / "cu" / "shim"

#: Counters for tests and benchmarks: NVRTC compilations, disk and memory cache hits.
STATS: dict[str, int] = {"compiles": 0, "disk_hits": 0, "memory_hits": 0}

_memory: dict[str, Cubin] = {}
_lock = threading.Lock()

# `name.cu(12): error: ...`, `name.cu(3): warning #177-D: ...`, `... catastrophic error: ...`
_DIAGNOSTIC: Final = re.compile(
    r"^(?P<file>[^\n()]+)\((?P<line>\d+)\): (?P<kind>(?:catastrophic )?error|warning)\b.*$",
    re.MULTILINE,
)
_PTXAS_WARNING: Final = re.compile(r"^ptxas (?:warning|error)\b.*$", re.MULTILINE)
_PTXAS_ENTRY: Final = re.compile(r"Compiling entry function '(?P<name>[^']+)'")
_PTXAS_STACK: Final = re.compile(
    r"(?P<stack>\d+) bytes stack frame, (?P<stores>\d+) bytes spill stores, "
    r"(?P<loads>\d+) bytes spill loads"
)
_PTXAS_REGISTERS: Final = re.compile(r"Used (?P<registers>\d+) registers")


@dataclass(frozen=True)
class KernelResources:
    """What ptxas reported for one kernel (`--ptxas-options=-v`)."""

    registers: int
    stack_bytes: int
    spill_store_bytes: int
    spill_load_bytes: int

    @property
    def spills(self) -> bool:
        return bool(self.spill_store_bytes or self.spill_load_bytes)


@dataclass(frozen=True)
class Cubin:
    """One compiled program: the cubin image, NVRTC's log and the kernels' lowered names."""

    image: bytes
    log: str
    name: str
    arch: str
    key: str
    #: name expression (as given to `compile_cuda`) -> the symbol in the cubin
    lowered: dict[str, str] = field(default_factory=dict)

    def warnings(self) -> list[str]:
        """The compiler's and ptxas's warning lines."""
        found = [m.group(0) for m in _DIAGNOSTIC.finditer(self.log) if m["kind"] == "warning"]
        return found + _PTXAS_WARNING.findall(self.log)

    def resources(self) -> dict[str, KernelResources]:
        """Registers, stack and spills per kernel symbol, from a `--ptxas-options=-v` log
        (empty when the program was compiled without it)."""
        found: dict[str, KernelResources] = {}
        # split() keeps each entry's name at an odd position, its report right after it
        parts = _PTXAS_ENTRY.split(self.log)
        for name, text in zip(parts[1::2], parts[2::2], strict=True):
            stack, registers = _PTXAS_STACK.search(text), _PTXAS_REGISTERS.search(text)
            if stack is None or registers is None:
                continue
            found[name] = KernelResources(
                int(registers["registers"]),
                int(stack["stack"]),
                int(stack["stores"]),
                int(stack["loads"]),
            )
        return found

    def symbols(self) -> set[str]:
        """The kernel (function) symbols defined in the cubin's ELF symbol table."""
        return _elf_functions(self.image)


def cache_dir() -> Path:
    """The folder of the on-disk cubin cache (it may not exist yet)."""
    return shared_cache_dir("cuda")


def _nvrtc() -> Any:
    try:
        # Through importlib: CuPy's Cython bindings have no type information to check.
        nvrtc = importlib.import_module("cupy_backends.cuda.libs.nvrtc")
    except ImportError as error:
        raise RuntimeError(
            "ember_cuda: NVRTC is not installed (pip install 'ember-cuda[cuda13]', or "
            f"[cuda12] for a CUDA 12 driver): {error}"
        ) from error
    return nvrtc


@cache
def nvrtc_version() -> tuple[int, int]:
    """NVRTC's (major, minor)."""
    major, minor = _nvrtc().getVersion()
    return int(major), int(minor)


@cache
def runtime_include_dir() -> Path | None:
    """The CUDA runtime wheel's include folder (cuda_fp16.h, cuda_bf16.h), if installed."""
    try:
        spec = importlib.util.find_spec("nvidia")  # the wheels' namespace package
    except ImportError:
        return None
    for base in (spec.submodule_search_locations or ()) if spec is not None else ():
        for sub in _RUNTIME_INCLUDES:
            folder = Path(base) / sub
            if (folder / "cuda_fp16.h").is_file():
                return folder
    return None


def include_dirs() -> list[Path]:
    """The include folders every program compiles with."""
    cuda = runtime_include_dir()
    return [SHIM_DIR] + ([cuda] if cuda is not None else [])


def default_options(arch: str = DEFAULT_ARCH) -> list[str]:
    """The options of every program: C++17, no fused multiply-add contraction (the cpu
    device's results bit for bit), unannotated functions on the device (the runtime's
    expression prelude is plain C), and the include folders."""
    return [
        f"-arch={arch}",
        "-std=c++17",
        "--fmad=false",
        "--device-as-default-execution-space",
        *(f"-I{folder}" for folder in include_dirs()),
    ]


@cache
def _headers_identity() -> str:
    """A digest of the headers that come through include folders, not the source."""
    digest = hashlib.sha256()
    for folder in include_dirs():
        names = ("cuda_fp16.h", "cuda_fp16.hpp", "cuda_bf16.h", "cuda_bf16.hpp")
        paths = sorted(folder.glob("*.h")) if folder == SHIM_DIR else [folder / n for n in names]
        for path in paths:
            if path.is_file():
                digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _key(source: str, options: Sequence[str], names: Sequence[str], arch: str) -> str:
    # The default include folders count by their headers' contents, not their paths, so
    # that a cache compiled in one environment serves another (a GPU machine's venv).
    defaults = {f"-I{folder}" for folder in include_dirs()}
    options = [option for option in options if option not in defaults]
    digest = hashlib.sha256()
    version = ".".join(map(str, nvrtc_version()))
    for part in (source, "\0".join(options), "\0".join(names), version, arch, _headers_identity()):
        digest.update(part.encode())
        digest.update(b"\0\0")
    return digest.hexdigest()


def compile_cuda(
    source: str,
    name: str = "program",
    *,
    options: Sequence[str] = (),
    arch: str = DEFAULT_ARCH,
    name_expressions: Sequence[str] = (),
    warnings_as_errors: bool = False,
    resource_usage: bool = False,
) -> Cubin:
    """Compile CUDA C++ `source` (the program named `<name>.cu` in diagnostics) to a cubin
    for `arch`, with `default_options` followed by `options`.

    `name_expressions` (kernel names, or C++ expressions such as `"scale<float>"`) are
    resolved to their symbols (`Cubin.lowered`); `resource_usage` asks ptxas for its
    register and spill report (`Cubin.resources`); `warnings_as_errors` turns any warning
    into a CompileError. Raises CompileError with NVRTC's log.
    """
    full_options = [*default_options(arch), *options]
    if resource_usage:
        full_options.append("--ptxas-options=-v")
    key = _key(source, full_options, name_expressions, arch)
    found = _memory.get(key)
    if found is None:
        # Not under a lock: NVRTC releases the GIL, so programs compile in parallel threads;
        # two threads racing for one key both compile it, and the first result stays.
        found = _load(key, name, arch)
        if found is None:
            found = _compile(source, name, full_options, name_expressions, arch, key)
            _store(found)
        with _lock:
            found = _memory.setdefault(key, found)
    else:
        STATS["memory_hits"] += 1
    if warnings_as_errors and found.warnings():
        raise _compile_error(found.log, name, full_options, "warnings (treated as errors)")
    return found


def _compile(
    source: str,
    name: str,
    options: list[str],
    name_expressions: Sequence[str],
    arch: str,
    key: str,
) -> Cubin:
    nvrtc = _nvrtc()
    STATS["compiles"] += 1
    program = nvrtc.createProgram(source, f"{name}.cu", [], [])
    try:
        for expression in name_expressions:
            nvrtc.addNameExpression(program, expression)
        try:
            nvrtc.compileProgram(program, options)
        except nvrtc.NVRTCError as error:
            log = nvrtc.getProgramLog(program)
            raise _compile_error(log or str(error), name, options, "errors") from None
        log = nvrtc.getProgramLog(program)
        lowered = {e: nvrtc.getLoweredName(program, e) for e in name_expressions}
        image = nvrtc.getCUBIN(program)
    finally:
        nvrtc.destroyProgram(program)
    return Cubin(bytes(image), log, name, arch, key, lowered)


def _compile_error(log: str, name: str, options: Sequence[str], what: str) -> CompileError:
    diagnostics = list(_DIAGNOSTIC.finditer(log))
    ptxas = _PTXAS_WARNING.findall(log)
    shown = "\n".join([m.group(0) for m in diagnostics] + ptxas) or log.strip()
    first = next((m for m in diagnostics if m["kind"] != "warning"), None) or (
        diagnostics[0] if diagnostics else None
    )
    return CompileError(
        f"ember_cuda: {name}.cu did not compile ({what}):\n{shown}",
        log=log,
        file=first["file"] if first else None,
        line=int(first["line"]) if first else None,
        command=f"nvrtcCompileProgram({' '.join(options)})",
    )


# -- the disk cache ----------------------------------------------------------------------


def _paths(key: str) -> tuple[Path, Path]:
    folder = cache_dir()
    return folder / f"{key}.cubin", folder / f"{key}.json"


def _load(key: str, name: str, arch: str) -> Cubin | None:
    """The cached program of `key`, or None when missing or unusable."""
    cubin_path, meta_path = _paths(key)
    try:
        image = cubin_path.read_bytes()
        meta = json.loads(meta_path.read_text())
        log, lowered = meta["log"], meta["lowered"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(log, str) or not isinstance(lowered, dict) or not _is_cubin(image):
        return None
    STATS["disk_hits"] += 1
    return Cubin(image, log, name, arch, key, {str(k): str(v) for k, v in lowered.items()})


def _store(cubin: Cubin) -> None:
    cubin_path, meta_path = _paths(cubin.key)
    try:
        cubin_path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(
            meta_path, json.dumps({"log": cubin.log, "lowered": cubin.lowered}).encode()
        )
        write_atomically(cubin_path, cubin.image)
    except OSError:
        return  # a read-only or full cache folder only costs the next process a compile


def clear_memory_cache() -> None:
    """Forget the programs compiled in this process (the disk cache stays)."""
    with _lock:
        _memory.clear()


# -- the cubin's ELF -----------------------------------------------------------------------

_ELF_HEADER: Final = struct.Struct("<16sHHIQQQIHHHHHH")
_SECTION: Final = struct.Struct("<IIQQQQIIQQ")
_SYMBOL: Final = struct.Struct("<IBBHQQ")
_SHT_SYMTAB: Final = 2
_STT_FUNC: Final = 2


def _is_cubin(image: bytes) -> bool:
    """A whole 64-bit little-endian ELF image (a truncated file fails the bounds)."""
    if len(image) < _ELF_HEADER.size or image[:6] != b"\x7fELF\x02\x01":
        return False
    fields = _ELF_HEADER.unpack_from(image)
    section_offset, section_size, sections = fields[6], fields[11], fields[12]
    return section_offset + section_size * sections <= len(image) and sections > 0


def _elf_functions(image: bytes) -> set[str]:
    if not _is_cubin(image):
        return set()
    fields = _ELF_HEADER.unpack_from(image)
    offset, size, count = fields[6], fields[11], fields[12]
    sections = [_SECTION.unpack_from(image, offset + i * size) for i in range(count)]
    names: set[str] = set()
    for section in sections:
        if section[1] != _SHT_SYMTAB:
            continue
        strings = sections[section[6]]  # sh_link: the symbol names' string table
        base, length = strings[4], strings[5]
        table = image[base : base + length]
        for at in range(section[4], section[4] + section[5], _SYMBOL.size):
            name_at, info = _SYMBOL.unpack_from(image, at)[:2]
            if info & 0xF == _STT_FUNC:
                names.add(table[name_at : table.index(b"\0", name_at)].decode())
    return names
