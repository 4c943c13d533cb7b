"""`load_inline`: OpenCL C kernels given as a string, launched on ember's streams.

The program goes through the device's program cache (`_programs.build`: memory, then
binaries on disk). `#line 1 "<name>.cl"` precedes the user's source (after the shared
dialect, with `dialect=True`), so a failed build raises `ember.library.CompileError`
positioned in the user's file, lines counted from its first line.

Each named kernel becomes an `InlineKernel`, which converts its arguments by the
parameter types declared in the source: a tensor passes its buffer, a Python number
becomes the declared scalar type (`int` → int32, `float` → float32, ...), so a call needs
no NumPy scalars and no `set_scalar_arg_dtypes`. It enqueues through `_launch.launch`, on
the current ember stream of the device, like the built-in kernels.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np
import pyopencl as cl

import ember
from ember.library import CompileError, inline_names
from ember.plugins import kernels as shared_kernels
from ember.plugins.sdk import Tensor, device_index
from ember_opencl import _launch, _programs
from ember_opencl.backend import BACKEND

__all__ = ["InlineKernel", "InlineProgram", "load_inline"]

#: The OpenCL C scalar types a Python number converts to.
SCALAR_TYPES: Final[dict[str, np.dtype[Any]]] = {
    "char": np.dtype(np.int8),
    "uchar": np.dtype(np.uint8),
    "short": np.dtype(np.int16),
    "ushort": np.dtype(np.uint16),
    "int": np.dtype(np.int32),
    "uint": np.dtype(np.uint32),
    "long": np.dtype(np.int64),
    "ulong": np.dtype(np.uint64),
    "half": np.dtype(np.float16),
    "float": np.dtype(np.float32),
    "double": np.dtype(np.float64),
}
# C's other spellings of the same types.
_SPELLINGS: Final = {
    **{name: name for name in SCALAR_TYPES},
    **{f"signed {name}": name for name in ("char", "short", "int", "long")},
    **{f"unsigned {name}": f"u{name}" for name in ("char", "short", "int", "long")},
    "signed": "int",
    "unsigned": "uint",
}

_ADDRESS_SPACES: Final = frozenset(
    {"__global", "global", "__constant", "constant", "__local", "local"}
)
_QUALIFIERS: Final = frozenset({"const", "volatile", "restrict", "__private", "private"})
_MEMORY_OBJECTS: Final = re.compile(r"\b(?:image\w*_t|sampler_t|pipe|queue_t)\b")
_RESERVED: Final = frozenset({"device", "kernels", "program"})
_COMMENTS: Final = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)
_DIRECTIVES: Final = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.MULTILINE)

Converter = Callable[[Any], Any]

_programs_built: dict[tuple[Any, ...], InlineProgram] = {}
_lock = threading.Lock()


class InlineKernel:
    """A launcher: `kernel(global_size, *args, local_size=None)` enqueues the kernel on
    the current stream of its device and returns the cl.Event.

    A `__global`/`__constant` pointer takes a tensor of the device whose storage starts
    at the tensor (`storage_offset() == 0`) and whose dtype is the pointer's element type
    when that is a listed scalar (`half` for float16, `uchar` for bool), or a cl.Buffer
    or None; a scalar of a
    listed type (`SCALAR_TYPES`) takes a Python or NumPy number; other parameters
    (`__local` memory, vectors, structs, images) take what pyopencl takes.
    """

    __slots__ = ("_convert", "_device", "_kernel", "_set_args", "name", "parameters")

    def __init__(self, kernel: Any, device: ember.device, parameters: Sequence[str]) -> None:
        self.name: str = kernel.function_name
        #: The declared parameters, as written in the source.
        self.parameters: tuple[str, ...] = tuple(parameters)
        self._kernel = kernel
        self._device = device
        kinds = [_kind(parameter) for parameter in parameters]
        self._convert: tuple[Converter, ...] = tuple(
            _converter(kind, _pointee(parameter), device, self.name, i)
            for i, (kind, parameter) in enumerate(zip(kinds, parameters, strict=True))
        )
        # By-value bytes and buffers go through the multi-argument setters; `__local`
        # sizes and images only through pyopencl's general set_arg.
        if any(kind in ("local", "object") for kind in kinds):
            self._set_args: _launch.Setter = _set_each
        else:
            self._set_args = _launch.setter("".join("m" if k == "buffer" else "v" for k in kinds))

    def __call__(
        self,
        global_size: int | Sequence[int],
        *args: Any,
        local_size: int | Sequence[int] | None = None,
    ) -> Any:
        if len(args) != len(self._convert):
            raise TypeError(
                f"{self.name}() takes {len(self._convert)} kernel arguments "
                f"({', '.join(self.parameters)}), got {len(args)}"
            )
        values = [convert(value) for convert, value in zip(self._convert, args, strict=True)]
        return _launch.launch(
            self._device,
            self._kernel,
            _size(global_size),
            values,
            None if local_size is None else _size(local_size),
            self._set_args,
        )

    def __repr__(self) -> str:
        return f"<InlineKernel {self.name}({', '.join(self.parameters)}) on {self._device}>"


class InlineProgram:
    """The kernels of one `load_inline` build, as `InlineKernel` attributes."""

    def __init__(self, program: Any, device: ember.device, kernels: dict[str, InlineKernel]):
        #: The built cl.Program.
        self.program = program
        self.device = device
        self.kernels: tuple[str, ...] = tuple(kernels)
        for name, kernel in kernels.items():
            setattr(self, name, kernel)

    def __getattr__(self, name: str) -> Any:
        # Only reached for names that are not attributes: say what the build does have.
        raise AttributeError(
            f"ember_opencl.load_inline: no kernel {name!r} in this program; "
            f"it has {', '.join(self.kernels)}"
        )

    def __repr__(self) -> str:
        return f"<InlineProgram {', '.join(self.kernels)} on {self.device}>"


def load_inline(
    source: str,
    kernels: str | Sequence[str],
    *,
    name: str = "inline",
    options: str = "",
    device: Any = None,
    dialect: bool = False,
) -> InlineProgram:
    """Build OpenCL C `source` for `device` (default: the default device if it is an
    OpenCL one, else `opencl:0`) and return launchers for `kernels`.

    `dialect=True` puts the shared kernel dialect (`em_dialect.h`) before the source.
    Build errors raise `ember.library.CompileError`, positioned in `<name>.cl`.
    """
    dev = _device(device)
    listed = kernels if isinstance(kernels, str) else tuple(kernels)
    call = (dev, source, listed, name, options, dialect)
    found = _programs_built.get(call)
    if found is not None:
        return found
    names = inline_names(
        kernels, caller="ember_opencl.load_inline", what="kernel", holder="InlineProgram",
        reserved=_RESERVED,
    )  # fmt: skip
    if not name.isidentifier():
        raise ValueError(f"ember_opencl.load_inline: name must be an identifier, got {name!r}")
    signatures = _signatures(source, names)
    prelude = shared_kernels.source() + "\n" if dialect else ""
    full_source = f'{prelude}#line 1 "{name}.cl"\n{source}'
    with _lock:
        found = _programs_built.get(call)
        if found is not None:
            return found
        program = _build(dev, full_source, options, name)
        built = {
            kernel: InlineKernel(_kernel(dev, full_source, kernel, options), dev, parameters)
            for kernel, parameters in signatures.items()
        }
        found = _programs_built[call] = InlineProgram(program, dev, built)
        return found


def _device(device: Any) -> ember.device:
    if device is None:
        default = ember.get_default_device()
        return default if default.type == "opencl" else ember.device("opencl").placement
    dev = ember.device(device).placement
    if dev.type != "opencl":
        raise ValueError(f"ember_opencl.load_inline: {dev} is not an opencl device")
    return dev


def _build(dev: ember.device, source: str, options: str, name: str) -> Any:
    try:
        return _programs.build(BACKEND.context(device_index(dev)), source, options)
    except RuntimeError as error:
        if not isinstance(error.__cause__, cl.Error):
            raise
        raise _compile_error(str(error.__cause__), name, options) from error


def _kernel(dev: ember.device, source: str, kernel: str, options: str) -> Any:
    try:
        return _launch.kernel(dev, source, kernel, options)
    except cl.Error as error:  # declared in the text, but not built (`#if 0`, ...)
        raise ValueError(
            f"ember_opencl.load_inline: the built program has no kernel {kernel!r} ({error})"
        ) from error


# Drivers write `file:line:col: error: ...` (clang, NVIDIA) or `error: file:line:col: ...`
# (PoCL).
_ERROR_LINE: Final = re.compile(
    r"^(?:(?P<file>[^\s:][^:\n]*):(?P<line>\d+):(?:\d+:)?\s*(?:fatal )?error:"
    r"|(?:fatal )?error:\s*(?P<file2>[^\s:][^:\n]*):(?P<line2>\d+):).*$",
    re.MULTILINE,
)


def _compile_error(log: str, name: str, options: str) -> CompileError:
    errors = list(_ERROR_LINE.finditer(log))
    shown = "\n".join(m.group(0) for m in errors) if errors else log.strip()
    first = errors[0] if errors else None
    return CompileError(
        f"ember_opencl.load_inline: {name}.cl did not build:\n{shown}",
        log=log,
        file=(first.group("file") or first.group("file2")) if first else None,
        line=int(first.group("line") or first.group("line2")) if first else None,
        command=f"clBuildProgram(options={options!r})",
    )


# -- kernel signatures -------------------------------------------------------------------


def _signatures(source: str, kernels: Sequence[str]) -> dict[str, list[str]]:
    """Each kernel's parameter declarations, read from its `__kernel void name(...)`."""
    code = _DIRECTIVES.sub(" ", _COMMENTS.sub(" ", source))
    found = {kernel: _parameters(code, kernel) for kernel in kernels}
    missing = [kernel for kernel, parameters in found.items() if parameters is None]
    if missing:
        raise ValueError(
            f"ember_opencl.load_inline: no kernel {', '.join(missing)} in the source "
            "(looked for `__kernel void name(...)`)"
        )
    return {kernel: parameters for kernel, parameters in found.items() if parameters is not None}


def _parameters(code: str, kernel: str) -> list[str] | None:
    match = re.search(rf"\b(?:__)?kernel\b[^;{{}}]*?\bvoid\s+{re.escape(kernel)}\s*\(", code)
    if match is None:
        return None
    depth, start = 0, match.end()
    parameters, current = [], start
    for i in range(start, len(code)):
        if code[i] == "(":
            depth += 1
        elif code[i] == ")" and depth > 0:
            depth -= 1
        elif code[i] == ")" or (code[i] == "," and depth == 0):
            parameters.append(" ".join(code[current:i].split()))
            current = i + 1
            if code[i] == ")":
                return [p for p in parameters if p not in ("", "void")]
    return None


def _kind(parameter: str) -> str:
    """`buffer`, `local`, `object` (images, samplers), `value` (vectors, structs) or a
    scalar type name of `SCALAR_TYPES`."""
    words = parameter.replace("*", " * ").split()
    if "__local" in words or "local" in words:
        return "local"
    if "*" in words or _ADDRESS_SPACES.intersection(words):
        return "buffer"
    if _MEMORY_OBJECTS.search(parameter):
        return "object"
    type_words = [w for w in words[:-1] if w not in _QUALIFIERS]  # the last word is the name
    return _SPELLINGS.get(" ".join(type_words), "value")


def _pointee(parameter: str) -> str | None:
    """A pointer parameter's element type, when it is one of `SCALAR_TYPES`."""
    words = parameter.replace("*", " * ").split()[:-1]  # the last word is the name
    skipped = _QUALIFIERS | _ADDRESS_SPACES | {"*"}
    return _SPELLINGS.get(" ".join(w for w in words if w not in skipped))


# -- argument conversion -------------------------------------------------------------------


def _converter(
    kind: str, pointee: str | None, device: ember.device, kernel: str, index: int
) -> Converter:
    if kind == "buffer":
        return lambda value: _buffer(value, pointee, device, kernel, index)
    dtype = SCALAR_TYPES.get(kind)
    if dtype is None:
        return _unchanged
    integral = dtype.kind in "iu"
    to_scalar = dtype.type

    def scalar(value: Any) -> Any:
        if isinstance(value, int | np.integer) or (
            not integral and isinstance(value, float | np.floating)
        ):
            return to_scalar(value)
        raise TypeError(
            f"{kernel}(): argument {index} is declared {kind}; got {type(value).__name__} {value!r}"
        )

    return scalar


def _buffer(value: Any, pointee: str | None, device: ember.device, kernel: str, index: int) -> Any:
    if isinstance(value, Tensor):
        if value.device is not device:
            raise ValueError(
                f"{kernel}(): argument {index} is a tensor on {value.device}; "
                f"the kernel runs on {device}"
            )
        if pointee is not None and _element_type(value) != pointee:
            raise TypeError(
                f"{kernel}(): argument {index} points to {pointee}; got a {value.dtype.name} tensor"
            )
        if value.storage_offset() != 0:
            raise ValueError(
                f"{kernel}(): argument {index} starts {value.storage_offset()} elements into "
                "its storage, which a buffer argument cannot express: pass a tensor that "
                "owns its storage (t.clone()), or the buffer t.untyped_storage().handle "
                "and the offset t.storage_offset() as two arguments"
            )
        return value.untyped_storage().handle
    if value is None or isinstance(value, cl.MemoryObjectHolder):
        return value
    raise TypeError(
        f"{kernel}(): argument {index} is a buffer; got {type(value).__name__} "
        "(pass an ember tensor, a cl.Buffer or None)"
    )


def _element_type(tensor: Tensor) -> str | None:
    try:
        return _launch.ctype(tensor.dtype)
    except KeyError:  # a dtype without an OpenCL C type: nothing to compare
        return None


def _unchanged(value: Any) -> Any:
    return value


def _set_each(kernel: Any, args: Sequence[Any]) -> None:
    for i, value in enumerate(args):
        kernel.set_arg(i, value)


def _size(size: int | Sequence[int]) -> tuple[int, ...]:
    return (size,) if isinstance(size, int) else tuple(size)
