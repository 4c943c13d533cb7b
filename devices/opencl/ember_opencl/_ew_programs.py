"""Programs of the elementwise family: cl/elementwise.cl specialised per (op, dtypes).

Each `*KERNELS(dev, ...)` builds (on first use) the program for one op and dtype and
returns its (contiguous, strided, error flag) kernels; `kernels_elementwise` looks them
up in `KERNELS` first, so the hot path is one dict lookup. Keys start with the device's
index, not the device: this family only sees opencl devices, and an int hashes in C.
Also here: what the kernels share (scalar conversion, broadcast strides, launch sizes).
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any, Final

import numpy as np
import pyopencl as cl

from ember._dtype import bool as _BOOL
from ember._ops import names
from ember._tensor import Tensor
from ember_opencl import _ew_expressions as ex
from ember_opencl._launch import GEOMETRY_C, LOCAL_SIZE, ctype, kernel, prelude, queue_for

Shape = tuple[int, ...]
Scalar = bool | int | float

_TEMPLATE: Final = files("ember_opencl").joinpath("cl/elementwise.cl").read_text()
_VEC: Final = 8  # elements per work item in contiguous kernels (~0.95x of float4 a+b)
GROUP: Final = LOCAL_SIZE * _VEC  # elements per work-group of a contiguous kernel
LOCAL: Final = (LOCAL_SIZE,)
BITS: Final = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_BITS_C: Final = {1: "uchar", 2: "ushort", 4: "uint", 8: "ulong"}
_UNSIGNED_C: Final = {"bool": "uchar", "uint8": "uchar", "int8": "uchar", "int32": "uint"}
_U64: Final = 1 << 64
_ZERO: Final = np.zeros(1, np.int32)

Kernels = tuple[Any, Any, Any]  # (contiguous, strided, error-flag buffer or None)
KERNELS: dict[tuple[Any, ...], Kernels] = {}  # (device index, family, ...) -> kernels


def has_fp64(dev: Any) -> bool:
    return "cl_khr_fp64" in dev._backend.cl_device(dev.index).extensions


def _bits_prelude(itemsize: int, prefix: str) -> str:
    c = _BITS_C[itemsize]
    return (
        f"#define {prefix}_T {c}\n#define {prefix}_C {c}\n"
        f"#define {prefix}_LOAD(p, i) ((p)[i])\n#define {prefix}_STORE(p, i, v) ((p)[i] = (v))\n"
    )


def _fill_in(expr: str, dtype: Any) -> str:
    compute = "float" if dtype.name == "float16" else ctype(dtype)
    return expr.format(
        T=compute,
        U=_UNSIGNED_C.get(dtype.name, "ulong"),
        S="d" if dtype.name == "float64" else "f",
        F="" if dtype.name == "float64" else "f",
    )


def _build(
    dev: Any, key: tuple[Any, ...], name: str, defines: str, flagged: bool = False
) -> Kernels:
    if flagged:
        defines += "#define EM_FLAGS\n"
    source = f"{GEOMETRY_C}\n#define EM_NAME {name}_\n#define EM_VEC {_VEC}\n{defines}\n{_TEMPLATE}"
    found = (
        kernel(dev, source, f"{name}_contiguous"),
        kernel(dev, source, f"{name}_strided"),
        _error_flag(dev) if flagged else None,
    )
    KERNELS[key] = found
    return found


_flags: dict[Any, Any] = {}


def _error_flag(dev: Any) -> Any:
    """The device's int error flag that kernels set (0 = no error)."""
    flag = _flags.get(dev)
    if flag is None:
        context = dev._backend.context(dev.index)
        flag = _flags[dev] = cl.Buffer(
            context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=_ZERO
        )
    return flag


def raise_if_flagged(dev: Any, flag: Any) -> None:
    # Raising where the CPU device raises needs the flag now: this waits for the kernel
    # (only integer divisions by a tensor pay it; float math and scalar divisors don't).
    queue = queue_for(dev)
    seen = np.zeros(1, np.int32)
    cl.enqueue_copy(queue, seen, flag, is_blocking=True)
    if seen[0]:
        cl.enqueue_copy(queue, flag, _ZERO, is_blocking=True)
        raise RuntimeError("ZeroDivisionError: integer division by zero")


def strides_at(t: Tensor, shape: Shape) -> Shape:
    """`t`'s strides viewed at `shape`: zero where it broadcasts."""
    if t._shape == shape:
        return t._strides
    lead = len(shape) - len(t._shape)
    if lead < 0 or any(s != 1 and s != n for s, n in zip(t._shape, shape[lead:], strict=True)):
        raise RuntimeError(
            f"opencl kernel: shape {list(t._shape)} does not broadcast to {list(shape)}"
        )
    strides = [0] * lead
    for size, stride in zip(t._shape, t._strides, strict=True):
        strides.append(0 if size == 1 else stride)
    return tuple(strides)


def groups(n: int) -> tuple[int]:
    return ((n + GROUP - 1) // GROUP * LOCAL_SIZE or LOCAL_SIZE,)


def items(n: int) -> tuple[int]:
    return ((n + LOCAL_SIZE - 1) // LOCAL_SIZE * LOCAL_SIZE or LOCAL_SIZE,)


# --- Python scalars in a dtype (the CPU device's em_ew_scalar_to) ----------------------------


def scalar_to(dtype: Any, value: Scalar) -> Any:
    """`value` as a NumPy scalar of `dtype`: float to integer truncates (through int32
    for the narrow types), integers wrap, anything to bool is value != 0."""
    if dtype.name == "bool":
        return np.uint8(value != 0)
    if dtype.is_floating_point:
        return dtype.numpy.type(value)
    if isinstance(value, float):
        bits = 63 if dtype.itemsize == 8 else 31
        # Out of range (or NaN), x86's conversion gives the "integer indefinite" value.
        value = int(value) if abs(value) < 2.0**bits else -(1 << bits)
    wrapped = (int(value) + (1 << 63)) % _U64 - (1 << 63)
    return np.array(wrapped, np.int64).astype(dtype.numpy)[()]


# --- programs per op ------------------------------------------------------------------------


def unary_kernels(dev: Any, op: str, dtype: Any) -> Kernels:
    key = (dev.index, "unary", op, dtype)
    found = KERNELS.get(key)
    if found is not None:
        return found
    expr = ex.UNARY[op].get(ex.family(dtype.name))
    if expr is None:
        raise RuntimeError(f"{op}: not implemented for dtype {dtype.name} on opencl")
    defines = (
        prelude(dtype, "O") + prelude(dtype, "A") + "#define EM_UNARY\n"
        f"#define EM_OP(x) {_fill_in(expr, dtype)}\n"
    )
    return _build(dev, key, f"{op}_{dtype.name}", defines)


def binary_kernels(dev: Any, op: str, dtype: Any, scalar: str = "") -> Kernels:
    key = (dev.index, "binary", op, dtype, scalar)
    found = KERNELS.get(key)
    if found is not None:
        return found
    expr = ex.BINARY[op].get(ex.family(dtype.name))
    if expr is None:
        raise RuntimeError(f"{op}: not implemented for dtype {dtype.name} on opencl")
    out_dtype = dtype if op in names.BINARY_ARITHMETIC else _BOOL
    kind = "#define EM_BINARY_SCALAR\n" if scalar else "#define EM_BINARY\n"
    defines = (
        prelude(out_dtype, "O") + prelude(dtype, "A") + prelude(dtype, "B") + kind
        + ("#define EM_SCALAR_A\n" if scalar == "a" else "")
        + f"#define EM_OP(a, b) {_fill_in(expr, dtype)}\n"
    )  # fmt: skip
    flagged = op in ex.INTEGER_DIVISIONS and ex.family(dtype.name) in ("signed", "unsigned")
    name = f"{op}_{dtype.name}{'_scalar_' + scalar if scalar else ''}"
    return _build(dev, key, name, defines, flagged)


def copy_kernels(dev: Any, dst: Any, src: Any) -> Kernels:
    key = (dev.index, "copy", dst, src)
    found = KERNELS.get(key)
    if found is not None:
        return found
    if dst is src:
        # Same dtype: move the bits, whatever they mean.
        defines = _bits_prelude(dst.itemsize, "O") + _bits_prelude(src.itemsize, "A")
        expr = "x"
    else:
        defines = prelude(dst, "O") + prelude(src, "A")
        expr = ex.convert(dst.name, src.name, ctype(dst))
        if dst.name == "float16" and src.name == "float64":
            # One rounding, double to half, as the CPU device does (not through float).
            defines += "#undef O_STORE\n#define O_STORE(p, i, v) vstore_half_rte((v), (i), (p))\n"
    defines += f"#define EM_UNARY\n#define EM_OP(x) {expr}\n"
    return _build(dev, key, f"copy_{dst.name}_from_{src.name}", defines)


def fill_kernels(dev: Any, itemsize: int) -> Kernels:
    key = (dev.index, "fill", itemsize)
    found = KERNELS.get(key)
    if found is not None:
        return found
    defines = _bits_prelude(itemsize, "O") + "#define EM_FILL\n"
    return _build(dev, key, f"fill_{8 * itemsize}bit", defines)


def arange_kernel(dev: Any, dtype: Any) -> Any:
    key = (dev.index, "arange", dtype)
    found = KERNELS.get(key)
    if found is not None:
        return found[0]
    real = "double" if has_fp64(dev) else "float"
    defines = prelude(dtype, "O") + f"#define EM_ARANGE\n#define EM_REAL {real}\n"
    if dtype.is_floating_point:
        defines += "#define EM_FROM_REAL(v) (v)\n"
        if dtype.name == "float16" and real == "double":
            defines += "#undef O_STORE\n#define O_STORE(p, i, v) vstore_half_rte((v), (i), (p))\n"
    else:
        defines += "#define EM_FROM_REAL(v) ((long)(v))\n"
    source = f"{GEOMETRY_C}\n#define EM_NAME arange_{dtype.name}_\n#define EM_VEC 1\n"
    found_kernel = kernel(dev, source + defines + _TEMPLATE, f"arange_{dtype.name}_contiguous")
    KERNELS[key] = (found_kernel, None, None)
    return found_kernel


def where_kernels(dev: Any, itemsize: int) -> Kernels:
    key = (dev.index, "where", itemsize)
    found = KERNELS.get(key)
    if found is not None:
        return found
    defines = _bits_prelude(itemsize, "O") + "#define EM_WHERE\n"
    return _build(dev, key, f"where_{8 * itemsize}bit", defines)
