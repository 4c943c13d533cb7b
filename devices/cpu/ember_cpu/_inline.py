"""`load_inline`: C kernels given as a string, compiled through cffi at first use.

The source is compiled with the built-in kernels' flags, OpenMP, OpenBLAS and the shared
kernel headers (`_build.compile_options()`, `ember.plugins.kernels.DIR`), into a cffi
API-mode extension whose functions Python calls directly, the cheapest call cffi offers.
We run the compiler ourselves, not through setuptools, so that its messages reach
`CompileError` with the user's file name and line numbers (`#line 1 "<name>.c"`).

Builds are cached in `$EMBER_CACHE_DIR/cpu-inline/<sha256>/` (default `~/.cache/ember`),
keyed by everything that shapes the binary: source, declarations, flags, the compiler's
`--version`, the CPU (the flags hold `-march=native`), the Python ABI, the shared headers
and the versions of ember, ember-cpu, cffi and OpenBLAS. A build is made in a temporary
folder and renamed into place, so concurrent processes never load half a file; a cached
file that does not load is rebuilt.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import importlib.util
import io
import os
import platform
import re
import shlex
import subprocess
import sys
import sysconfig
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, Final, NamedTuple

from ember.library import CompileError, inline_names
from ember.plugins.sdk import Tensor
from ember.plugins.sdk import cache_dir as shared_cache_dir
from ember_cpu import _lib  # noqa: F401 - preloads the OpenBLAS that inline builds link
from ember_cpu._prototypes import declarations_of

__all__ = ["STATS", "InlineLibrary", "cache_dir", "clear_memory_cache", "load_inline"]

# Bumped when the layout of a cache entry or the way it is built changes.
_CACHE_FORMAT: Final = "1"

#: Counters, for tests: builds compiled, loaded from disk, and found in memory.
STATS: dict[str, int] = {"compiles": 0, "disk_hits": 0, "memory_hits": 0}

# The variables that change how a library is built (`_build._cflags`, `_toolchain`).
_FLAG_ENV: Final = ("CC", "EMBER_CPU_CFLAGS")

_libraries: dict[tuple[Any, ...], InlineLibrary] = {}
_lock = threading.Lock()
_RESERVED: Final = frozenset(
    {"ffi", "lib", "path", "from_cache", "functions", "ptr", "_void_pointer"}
)
# The line after the user's source: rewritten to a `#line` back into the generated file,
# so that errors in cffi's wrappers point there and not past the end of the user's file.
_END_OF_SOURCE: Final = "/* ember_cpu.load_inline: end of the user's source */"


def cache_dir() -> Path:
    """The folder of the inline build cache (it may not exist yet)."""
    return shared_cache_dir("cpu-inline")


class InlineLibrary:
    """The functions of one `load_inline` build, as attributes (cffi functions).

    Pass a tensor to a pointer parameter as `library.ptr(t)`; pass Python ints and floats
    as they are (cffi converts them to the declared C type).
    """

    def __init__(
        self, module: ModuleType, functions: Sequence[str], path: Path, from_cache: bool
    ) -> None:
        #: The build's cffi FFI (casts, `new`, `string`, ...).
        self.ffi: Any = module.ffi
        #: Everything the declarations expose, the named functions included.
        self.lib: Any = module.lib
        self.functions: tuple[str, ...] = tuple(functions)
        #: The compiled extension.
        self.path = path
        #: Whether this build was loaded from the disk cache rather than compiled.
        self.from_cache = from_cache
        self._void_pointer = module.ffi.typeof("void *")
        for function in functions:
            setattr(self, function, getattr(module.lib, function))

    def ptr(self, tensor: Tensor) -> Any:
        """`tensor`'s first element as a `void *`, which cffi passes to any pointer parameter.

        The pointer keeps the tensor alive, so `lib.f(lib.ptr(ember.tensor(a)))` cannot
        hand the kernel freed memory (~1 µs more than a bare cast; keep the pointer to
        reuse it). It addresses the element at `tensor.storage_offset()`: a kernel that
        reads a non-contiguous tensor must be given its strides too.
        """
        if tensor.device.type != "cpu":
            raise ValueError(
                f"ember_cpu.load_inline: a kernel argument is on {tensor.device}; "
                "cpu kernels take cpu tensors (move it with .to('cpu'))"
            )
        address = self.ffi.cast(self._void_pointer, tensor.data_ptr())
        return self.ffi.gc(address, functools.partial(_keep_alive, tensor))

    def __getattr__(self, name: str) -> Any:
        # Only reached for names that are not attributes: say what the build does have.
        raise AttributeError(
            f"ember_cpu.load_inline: no function {name!r} in this library; "
            f"it has {', '.join(self.functions) or 'none'}"
        )

    def __repr__(self) -> str:
        return f"<InlineLibrary {', '.join(self.functions)} from {self.path}>"


def _keep_alive(tensor: Tensor, pointer: Any) -> None:
    """The destructor of a `ptr` result: it does nothing, but holds the tensor until then."""


def load_inline(
    source: str,
    functions: str | Sequence[str],
    *,
    name: str = "inline",
    cdef: str | None = None,
    extra_cflags: Sequence[str] = (),
    verbose: bool = False,
) -> InlineLibrary:
    """Compile C `source` (or find its build in the cache) and return its `functions`.

    `cdef` declares what Python sees; by default each function's definition header. Errors
    from the compiler raise `ember.library.CompileError`, positioned in `<name>.c`.
    """
    # Within a process the build depends only on the arguments and these variables, so
    # a repeated call skips the toolchain queries and the hash (~1 ms).
    listed = functions if isinstance(functions, str) else tuple(functions)
    call = (source, listed, name, cdef, tuple(extra_cflags), *map(os.environ.get, _FLAG_ENV))
    found = _libraries.get(call)
    if found is not None:
        STATS["memory_hits"] += 1
        return found
    names = inline_names(
        functions, caller="ember_cpu.load_inline", what="function", holder="InlineLibrary",
        reserved=_RESERVED,
    )  # fmt: skip
    if not name.isidentifier():
        raise ValueError(f"ember_cpu.load_inline: name must be a C identifier, got {name!r}")
    declarations = cdef if cdef is not None else declarations_of(source, names)
    toolchain = _toolchain(extra_cflags)
    key = _key(source, declarations, names, name, toolchain)
    with _lock:
        found = _libraries.get(call)
        if found is None:
            found = _load_or_compile(key, source, declarations, names, name, toolchain, verbose)
            _libraries[call] = found
        return found


def clear_memory_cache() -> None:
    """Forget the libraries loaded in this process (the disk cache stays)."""
    with _lock:
        _libraries.clear()


# -- the toolchain and the cache key -----------------------------------------------------


class _Toolchain(NamedTuple):
    """How to compile: the compiler, then Python's extension flags and ours, includes, links."""

    compiler: tuple[str, ...]
    flags: tuple[str, ...]
    includes: tuple[str, ...]
    links: tuple[str, ...]
    headers: tuple[str, ...]  # folders whose headers a source may include

    def command(self, c_file: str, output: str) -> list[str]:
        return [
            *self.compiler,
            *self.flags,
            *self.includes,
            c_file,
            "-shared",
            "-o",
            output,
            *self.links,
        ]


def _toolchain(extra_cflags: Sequence[str]) -> _Toolchain:
    """The built-in kernels' settings, with `$CC` (else Python's compiler) as setuptools does."""
    from ember_cpu._build import CSRC, compile_options, shared_kernels_dir  # cffi, OpenBLAS

    options = compile_options()
    python = [sysconfig.get_config_var(v) or "" for v in ("CFLAGS", "CCSHARED")]
    paths = sysconfig.get_paths()
    # The device's own headers too: kernels may include its vectorisable float32 math
    # (`elementwise_math.h`: em_expf, em_erff, em_tanhf, ...), which libm's is not.
    headers = (str(shared_kernels_dir()), str(CSRC))
    includes = dict.fromkeys(
        [paths["include"], paths["platinclude"], *options["include_dirs"], *headers]
    )
    links = [f"-L{d}" for d in options["library_dirs"]]
    links += [f"-l{library}" for library in options["libraries"]]
    return _Toolchain(
        compiler=tuple(shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")),
        flags=(*shlex.split(" ".join(python)), *options["extra_compile_args"], *extra_cflags),
        includes=tuple(f"-I{d}" for d in includes),
        links=(*links, *options["extra_link_args"]),
        headers=headers,
    )


@functools.cache
def _compiler_version(compiler: tuple[str, ...]) -> str:
    try:
        done = subprocess.run([*compiler, "--version"], capture_output=True, text=True)
    except OSError as error:
        raise CompileError(
            f"ember_cpu.load_inline: cannot run the C compiler {shlex.join(compiler)!r} "
            f"({error}); install one or set CC",
            log=str(error),
            command=shlex.join([*compiler, "--version"]),
        ) from error
    return done.stdout + done.stderr


@functools.cache
def _machine() -> str:
    """The CPU, as far as `-march=native` sees it."""
    try:
        with open("/proc/cpuinfo") as file:
            info = file.read()
    except OSError:
        return platform.machine() + platform.processor()
    lines = [line for line in info.splitlines() if line.startswith(("model name", "flags"))]
    return "\n".join([platform.machine(), *dict.fromkeys(lines)])


@functools.cache
def _dependencies(folders: tuple[str, ...]) -> str:
    """What the build includes or generates beyond the user's text: the includable
    headers' contents and the versions of the packages behind the rest."""
    headers = sorted(h for folder in folders for h in Path(folder).glob("*.h"))
    versions = []
    for distribution in ("ember", "ember-cpu", "cffi", "scipy-openblas32"):
        try:
            versions.append(f"{distribution} {importlib.metadata.version(distribution)}")
        except importlib.metadata.PackageNotFoundError:  # run from a source tree
            versions.append(f"{distribution} unknown")
    return "\n".join([*versions, *(header.read_text() for header in headers)])


def _key(
    source: str, declarations: str, functions: Sequence[str], name: str, toolchain: _Toolchain
) -> str:
    digest = hashlib.sha256()
    parts = (
        _CACHE_FORMAT,
        source,
        declarations,
        " ".join(functions),
        name,
        shlex.join(toolchain.command("<source>", "<output>")),
        _compiler_version(toolchain.compiler),
        _machine(),
        sys.implementation.cache_tag or "",
        sysconfig.get_config_var("EXT_SUFFIX") or "",
        _dependencies(toolchain.headers),
    )
    for part in parts:
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


# -- building and loading ----------------------------------------------------------------


def _load_or_compile(
    key: str,
    source: str,
    declarations: str,
    functions: Sequence[str],
    name: str,
    toolchain: _Toolchain,
    verbose: bool,
) -> InlineLibrary:
    module_name = f"{name}_{key[:16]}"
    folder = cache_dir() / key
    path = folder / f"{module_name}{sysconfig.get_config_var('EXT_SUFFIX') or '.so'}"
    module = _load(path, module_name) if path.is_file() else None
    from_cache = isinstance(module, ModuleType)
    if from_cache:
        STATS["disk_hits"] += 1
    else:
        path = _compile(folder, path, module_name, source, declarations, name, toolchain, verbose)
        module = _load(path, module_name)
    if not isinstance(module, ModuleType):  # undefined symbols only show when loading
        with contextlib.suppress(OSError):
            path.unlink()
        raise CompileError(
            f"ember_cpu.load_inline: {name}.c compiled, but loading it failed: {module}",
            log=str(module),
        )
    missing = [function for function in functions if not hasattr(module.lib, function)]
    if missing:
        raise ValueError(
            f"ember_cpu.load_inline: the declarations do not declare {', '.join(missing)}"
        )
    return InlineLibrary(module, functions, path, from_cache)


def _load(path: Path, module_name: str) -> ModuleType | ImportError:
    """The extension at `path`, or why it does not load."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        return ImportError(f"{path} is not an extension module")
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except ImportError as error:
        return error
    return module


def _compile(
    folder: Path,
    path: Path,
    module_name: str,
    source: str,
    declarations: str,
    name: str,
    toolchain: _Toolchain,
    verbose: bool,
) -> Path:
    """Compile into a temporary folder, then rename the library to `path`; return its path."""
    from cffi import FFI, CDefError

    ffi = FFI()
    try:
        ffi.cdef(declarations)
    except CDefError as error:
        raise ValueError(
            f"ember_cpu.load_inline: cffi cannot parse the declarations ({error}); "
            "pass cdef= with the prototypes and the types they use"
        ) from error
    ffi.set_source(module_name, f'#line 1 "{name}.c"\n{source}\n{_END_OF_SOURCE}\n')
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:  # an unwritable cache only costs the next process a compile
        folder = Path(tempfile.mkdtemp(prefix="ember-cpu-inline-"))
        path = folder / path.name
    STATS["compiles"] += 1
    with tempfile.TemporaryDirectory(dir=folder, prefix=".build-") as scratch:
        c_file = Path(scratch) / f"{module_name}.c"
        with contextlib.redirect_stdout(io.StringIO()):  # cffi announces the file it writes
            ffi.emit_c_code(str(c_file))
        _point_lines_back(c_file)
        output = Path(scratch) / path.name
        command = toolchain.command(str(c_file), str(output))
        # The C locale keeps the messages in the form _ERROR_LINE reads.
        environment = {**os.environ, "LC_ALL": "C"}
        done = subprocess.run(command, capture_output=True, text=True, env=environment)
        log = done.stdout + done.stderr
        if verbose:
            print(shlex.join(command), log, sep="\n")
        if done.returncode == 0:
            os.replace(c_file, folder / c_file.name)  # kept beside the library, for debugging
            os.replace(output, path)
    if done.returncode != 0:
        with contextlib.suppress(OSError):  # leave no empty entry behind (others may fill it)
            folder.rmdir()
        raise _compile_error(log, name, shlex.join(command))
    return path


def _point_lines_back(c_file: Path) -> None:
    lines = c_file.read_text().splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.strip() == _END_OF_SOURCE:
            lines[i] = f'#line {i + 2} "{c_file.name}"\n'
            break
    c_file.write_text("".join(lines))


_ERROR_LINE: Final = re.compile(
    r"^(?P<file>[^\s:][^:\n]*):(?P<line>\d+):(?:\d+:)?\s*(?:fatal )?error:.*$", re.MULTILINE
)


def _compile_error(log: str, name: str, command: str) -> CompileError:
    errors = list(_ERROR_LINE.finditer(log))
    shown = "\n".join(m.group(0) for m in errors) if errors else log.strip()
    first = errors[0] if errors else None
    return CompileError(
        f"ember_cpu.load_inline: {name}.c did not compile:\n{shown}",
        log=log,
        file=first.group("file") if first else None,
        line=int(first.group("line")) if first else None,
        command=command,
    )
