"""Kernel parameters packed on the host as the CUDA ABI lays them out, and checked in C.

A launch with packed arguments (`cuLaunchKernel`'s `CU_LAUNCH_PARAM_BUFFER_POINTER`) hands
the driver one buffer holding every parameter at its offset: each at the next multiple of
its alignment, as the fields of a C struct. `ParamLayout` computes those offsets and packs
the values with one `struct.Struct`, so a launch builds no object per argument.

The layout is not trusted: `static_asserts(...)` renders C++ assertions that a struct of
the same parameter types has the same offsets and sizes, and every program of this device
carries them, so NVRTC checks the packer against the compiler on every CPU-only CI run.
The strided geometry (`EmGeometry`, int64 fields only) is asserted by size and alignment.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any, Final

__all__ = [
    "GEOMETRY",
    "GEOMETRY_CUDA",
    "MAX_DIMS",
    "MAX_OPERANDS",
    "PARAM_TYPES",
    "ParamLayout",
    "pack_geometry",
]

MAX_DIMS: Final = 16
MAX_OPERANDS: Final = 4

#: The strided iteration's geometry (shape, and strides per operand, output first), as
#: OpenCL's EmGeometry: 1 + 16 + 4 * 16 int64.
GEOMETRY: Final = struct.Struct(f"<{1 + MAX_DIMS + MAX_OPERANDS * MAX_DIMS}q")

#: C parameter type -> (struct format of its value, alignment)
PARAM_TYPES: Final[dict[str, tuple[str, int]]] = {
    "pointer": ("Q", 8),  # a device address, as an int
    "em_i64": ("q", 8),
    "em_u64": ("Q", 8),
    "long long": ("q", 8),
    "unsigned long long": ("Q", 8),
    "int": ("i", 4),
    "unsigned int": ("I", 4),
    "short": ("h", 2),
    "unsigned short": ("H", 2),
    "signed char": ("b", 1),
    "unsigned char": ("B", 1),
    "float": ("f", 4),
    "double": ("d", 8),
    "EmGeometry": (f"{GEOMETRY.size}s", 8),
}

#: The geometry struct in CUDA C, with its layout asserted against `GEOMETRY`.
GEOMETRY_CUDA: Final = f"""
#define EM_MAX_DIMS {MAX_DIMS}
#define EM_MAX_OPERANDS {MAX_OPERANDS}
typedef struct {{
    em_i64 ndim;
    em_i64 shape[EM_MAX_DIMS];
    em_i64 stride[EM_MAX_OPERANDS][EM_MAX_DIMS];
}} EmGeometry;
static_assert(sizeof(EmGeometry) == {GEOMETRY.size}, "EmGeometry: host packing differs");
static_assert(alignof(EmGeometry) == 8, "EmGeometry: host packing differs");
"""


def pack_geometry(shape: Sequence[int], strides: Sequence[Sequence[int]]) -> bytes:
    """The EmGeometry of an iteration over `shape` with one stride tuple (in elements, 0
    where broadcast) per operand, output first."""
    if len(strides) > MAX_OPERANDS:
        raise RuntimeError(f"cuda geometry: at most {MAX_OPERANDS} operands, got {len(strides)}")
    nd = len(shape)
    if nd > MAX_DIMS:
        raise RuntimeError(
            f"cuda: {nd} dimensions remain after merging shape {list(shape)}; "
            f"kernels support at most {MAX_DIMS}"
        )
    pad = (0,) * (MAX_DIMS - nd)
    flat: list[int] = [nd, *shape, *pad]
    for k in range(MAX_OPERANDS):
        flat += (*strides[k], *pad) if k < len(strides) else (0,) * MAX_DIMS
    return GEOMETRY.pack(*flat)


class ParamLayout:
    """Offsets and packing of one kernel's parameter list (C type names of PARAM_TYPES)."""

    __slots__ = ("_struct", "offsets", "size", "types")

    def __init__(self, types: Sequence[str]) -> None:
        self.types: tuple[str, ...] = tuple(types)
        offsets: list[int] = []
        fmt, end = "<", 0
        for name in self.types:
            code, align = PARAM_TYPES[name]
            start = -(-end // align) * align
            fmt += "x" * (start - end) + code
            offsets.append(start)
            end = start + struct.calcsize("<" + code)
        self.offsets: tuple[int, ...] = tuple(offsets)
        #: the parameter buffer's size in bytes (CU_LAUNCH_PARAM_BUFFER_SIZE)
        self.size: int = end
        self._struct = struct.Struct(fmt)

    def pack(self, *values: Any) -> bytes:
        """The parameter buffer of `values` (ints for pointers, bytes for EmGeometry)."""
        return self._struct.pack(*values)

    def static_asserts(self, tag: str) -> str:
        """C++ asserting that the compiler lays these parameters out at `offsets`; `tag` (a
        C identifier) prefixes the mirror structs.

        NVRTC has no `offsetof`, so each parameter's end is pinned exactly instead: with
        its predecessors as a struct followed by `char tail[K]`, where K pads the end to
        the struct's alignment A, the size is end + K, and with `char tail[K + 1]` it is
        end + K + A; only the true end satisfies both. Ends and sizes give the offsets.
        """
        lines = []
        for i, name in enumerate(self.types):
            c = "void*" if name == "pointer" else name
            code, align = PARAM_TYPES[name]
            size = struct.calcsize("<" + code)
            fields = "".join(
                f" {'void*' if t == 'pointer' else t} f{j};"
                for j, t in enumerate(self.types[: i + 1])
            )
            most = max(PARAM_TYPES[t][1] for t in self.types[: i + 1])
            end = self.offsets[i] + size
            pad = -end % most
            tail = f" char tail[{pad}];" if pad else ""
            where = f'"{tag}: parameter {i} ({name}) is not where the host packs it"'
            lines.append(
                f"struct {tag}_{i}a {{{fields}{tail} }};\n"
                f"struct {tag}_{i}b {{{fields} char tail[{pad + 1}]; }};\n"
                f"static_assert(sizeof({c}) == {size} && alignof({c}) == {align}, {where});\n"
                f"static_assert(sizeof({tag}_{i}a) == {end + pad} && "
                f"sizeof({tag}_{i}b) == {end + pad + most}, {where});\n"
            )
        return "".join(lines)
