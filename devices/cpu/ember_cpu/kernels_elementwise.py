"""Elementwise kernels of the CPU device: copy_, fill_, arange_, unary, binary, where, random.

Every kernel makes one cffi call. When all operands are contiguous with the output's shape
it calls a flat entry point with addresses and an element count; otherwise it packs shape
and strides (elements, output first) into one bytes object for the strided entry point,
whose C iterator coalesces dims and broadcasts zero strides. Opcodes are resolved once,
by name, from the C tables (csrc/elementwise*.c), so the names live in one place.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from math import prod
from typing import Final

from ember._dispatch import KernelRegistry
from ember._ops import names
from ember._tensor import Tensor
from ember_cpu._lib import check, lib

__all__ = ["register"]

Shape = tuple[int, ...]
Scalar = bool | int | float

# _PACK[k](*values) packs k int64 values; geometry has (1 + operands) * ndim of them. C
# rejects more than EM_MAX_DIMS dims with a clear message.
_PACK: Final = tuple(struct.Struct(f"{k}q").pack for k in range(5 * 64 + 1))

# Flags of em_binary_scalar / em_binary_strided (csrc/elementwise_binary.c).
_SCALAR_B: Final = 1
_SCALAR_A: Final = 2
_SCALAR_INT: Final = 4
_U64: Final = (1 << 64) - 1
_INT64: Final = 4  # dtype code of int64 (csrc/ember_cpu.h)

_unary_flat = lib.em_unary
_unary_strided = lib.em_unary_strided
_binary_flat = lib.em_binary
_binary_scalar = lib.em_binary_scalar
_binary_strided = lib.em_binary_strided
_copy_flat = lib.em_copy
_copy_strided = lib.em_copy_strided
_fill_flat = lib.em_fill_flat


def _strides_at(t: Tensor, shape: Shape) -> Shape:
    """`t`'s strides viewed at `shape`: zero where it broadcasts."""
    if t._shape == shape:
        return t._strides
    lead = len(shape) - len(t._shape)
    if lead < 0 or any(s != 1 and s != n for s, n in zip(t._shape, shape[lead:], strict=True)):
        raise RuntimeError(
            f"cpu kernel: shape {list(t._shape)} does not broadcast to {list(shape)}"
        )
    strides = [0] * lead
    for size, stride in zip(t._shape, t._strides, strict=True):
        strides.append(0 if size == 1 else stride)
    return tuple(strides)


def _address(t: Tensor) -> int:
    return t._storage.ptr + t._offset * t._dtype.itemsize


# --- unary ---------------------------------------------------------------------------------


def _unary_kernel(name: str, op: int) -> Callable[[Tensor, Tensor], None]:
    def kernel(out: Tensor, a: Tensor) -> None:
        shape = out._shape
        dt = out._dtype
        size = dt.itemsize
        if out._contiguous and a._contiguous and a._shape == shape:
            status = _unary_flat(
                op,
                dt.index,
                prod(shape),
                out._storage.ptr + out._offset * size,
                a._storage.ptr + a._offset * size,
            )
        else:
            nd = len(shape)
            status = _unary_strided(
                op,
                dt.index,
                nd,
                _PACK[3 * nd](*shape, *out._strides, *_strides_at(a, shape)),
                out._storage.ptr + out._offset * size,
                a._storage.ptr + a._offset * size,
            )
        if status:
            check(status, name)

    kernel.__name__ = kernel.__qualname__ = f"cpu_{name}"
    return kernel


# --- binary --------------------------------------------------------------------------------


def _with_scalar(op: int, out: Tensor, t: Tensor, scalar: Scalar, side: int) -> int:
    """Run a binary op whose operand on `side` is a Python scalar; return the status."""
    shape = out._shape
    dt = t._dtype
    if isinstance(scalar, float):
        sd, si, flags = scalar, 0, side
    else:
        sd, si, flags = 0.0, scalar, side | _SCALAR_INT
    out_address = out._storage.ptr + out._offset * out._dtype.itemsize
    address = t._storage.ptr + t._offset * dt.itemsize
    if out._contiguous and t._contiguous and t._shape == shape:
        return int(_binary_scalar(op, dt.index, prod(shape), out_address, address, sd, si, flags))
    nd = len(shape)
    geometry = _PACK[3 * nd](*shape, *out._strides, *_strides_at(t, shape))
    a, b = (address, 0) if side == _SCALAR_B else (0, address)
    return int(_binary_strided(op, dt.index, nd, geometry, out_address, a, b, sd, si, flags))


def _binary_kernel(
    name: str, op: int
) -> Callable[[Tensor, Scalar | Tensor, Scalar | Tensor], None]:
    def kernel(out: Tensor, a: Tensor | Scalar, b: Tensor | Scalar) -> None:
        if isinstance(b, Tensor):
            if isinstance(a, Tensor):
                shape = out._shape
                dt = a._dtype
                if (
                    out._contiguous
                    and a._contiguous
                    and b._contiguous
                    and a._shape == shape
                    and b._shape == shape
                ):
                    size = dt.itemsize
                    out_offset = out._offset
                    a_offset = a._offset
                    b_offset = b._offset
                    # Offsets are mostly 0: skip the multiplications then.
                    status = _binary_flat(
                        op,
                        dt.index,
                        prod(shape),
                        out._storage.ptr + out_offset * out._dtype.itemsize
                        if out_offset
                        else out._storage.ptr,
                        a._storage.ptr + a_offset * size if a_offset else a._storage.ptr,
                        b._storage.ptr + b_offset * size if b_offset else b._storage.ptr,
                    )
                else:
                    nd = len(shape)
                    geometry = _PACK[4 * nd](
                        *shape, *out._strides, *_strides_at(a, shape), *_strides_at(b, shape)
                    )
                    status = _binary_strided(
                        op, dt.index, nd, geometry, _address(out), _address(a), _address(b),
                        0.0, 0, 0,
                    )  # fmt: skip
            else:
                status = _with_scalar(op, out, b, a, _SCALAR_A)
        elif isinstance(a, Tensor):
            status = _with_scalar(op, out, a, b, _SCALAR_B)
        else:
            raise TypeError(f"{name}: expected at least one tensor operand")
        if status:
            check(status, name)

    kernel.__name__ = kernel.__qualname__ = f"cpu_{name}"
    return kernel


# --- memory --------------------------------------------------------------------------------


def copy_(dst: Tensor, src: Tensor) -> None:
    """dst[...] = src[...], converting dtype; src broadcasts to dst's shape."""
    shape = dst._shape
    dst_dtype = dst._dtype
    src_dtype = src._dtype
    if dst._contiguous and src._contiguous and src._shape == shape:
        status = _copy_flat(
            dst_dtype.index,
            src_dtype.index,
            prod(shape),
            dst._storage.ptr + dst._offset * dst_dtype.itemsize,
            src._storage.ptr + src._offset * src_dtype.itemsize,
        )
    else:
        nd = len(shape)
        status = _copy_strided(
            dst_dtype.index,
            src_dtype.index,
            nd,
            _PACK[3 * nd](*shape, *dst._strides, *_strides_at(src, shape)),
            _address(dst),
            _address(src),
        )
    if status:
        check(status, "copy_")


def _scalar_args(value: Scalar) -> tuple[float, int, int]:
    """A scalar as em_* kernels take it: (as double, as int64, 1 if the int64 is meant)."""
    if isinstance(value, float) or not -(1 << 63) <= value < 1 << 63:
        return float(value), 0, 0
    return 0.0, int(value), 1


def fill_(dst: Tensor, value: Scalar) -> None:
    """Every element of dst (any strides) becomes value."""
    shape = dst._shape
    dt = dst._dtype
    if dst._contiguous:
        address = dst._storage.ptr + dst._offset * dt.itemsize
        if isinstance(value, float):
            status = _fill_flat(dt.index, prod(shape), address, value, 0, 0)
        else:
            status = _fill_flat(dt.index, prod(shape), address, *_scalar_args(value))
    else:
        d, i, use_int = _scalar_args(value)
        nd = len(shape)
        geometry = _PACK[2 * nd](*shape, *dst._strides)
        status = lib.em_fill(dst._dtype.index, nd, geometry, _address(dst), d, i, use_int)
    if status:
        check(status, "fill_")


def arange_(out: Tensor, start: Scalar, step: Scalar) -> None:
    """out[i] = start + i * step for a 1-d contiguous out."""
    if len(out._shape) != 1 or not out._contiguous:
        raise RuntimeError("arange_: expected a 1-d contiguous output")
    use_int = not isinstance(start, float) and not isinstance(step, float)
    status = lib.em_arange(
        out._dtype.index, out._shape[0], _address(out), float(start), float(step),
        int(start) if use_int else 0, int(step) if use_int else 0, use_int,
    )  # fmt: skip
    if status:
        check(status, "arange_")


def where(out: Tensor, cond: Tensor, a: Tensor, b: Tensor) -> None:
    """out = a where cond else b; cond is bool, all broadcast to out's shape."""
    shape = out._shape
    if (
        out._contiguous
        and cond._contiguous
        and a._contiguous
        and b._contiguous
        and cond._shape == a._shape == b._shape == shape
    ):
        status = lib.em_where(
            out._dtype.index, prod(shape), _address(out), _address(cond), _address(a), _address(b)
        )
    else:
        nd = len(shape)
        geometry = _PACK[5 * nd](
            *shape,
            *out._strides,
            *_strides_at(cond, shape),
            *_strides_at(a, shape),
            *_strides_at(b, shape),
        )
        status = lib.em_where_strided(
            out._dtype.index, nd, geometry,
            _address(out), _address(cond), _address(a), _address(b),
        )  # fmt: skip
    if status:
        check(status, "where")


# --- random (Philox4x32-10; the exact stream is specified in csrc/random.c) -----------------


def _geometry(t: Tensor) -> bytes:
    nd = len(t._shape)
    return _PACK[2 * nd](*t._shape, *t._strides)


def uniform_(t: Tensor, low: float, high: float, seed: int, offset: int) -> None:
    """t = uniform samples in [low, high) from counters offset, offset + 1, ..."""
    status = lib.em_uniform(
        t._dtype.index, len(t._shape), _geometry(t), _address(t),
        float(low), float(high), seed & _U64, offset & _U64,
    )  # fmt: skip
    if status:
        check(status, "uniform_")


def normal_(t: Tensor, mean: float, std: float, seed: int, offset: int) -> None:
    """t = normal samples (Box-Muller) from counters offset, offset + 1, ..."""
    status = lib.em_normal(
        t._dtype.index, len(t._shape), _geometry(t), _address(t),
        float(mean), float(std), seed & _U64, offset & _U64,
    )  # fmt: skip
    if status:
        check(status, "normal_")


def random_(t: Tensor, low: int, high: int, seed: int, offset: int) -> None:
    """t = integers uniform in [low, high), any dtype."""
    if not (-(1 << 63) <= low < 1 << 63 and low < high and high - low <= 1 << 64):
        raise RuntimeError(f"random_: bounds [{low}, {high}) are outside the int64 range")
    status = lib.em_random(
        t._dtype.index, len(t._shape), _geometry(t), _address(t),
        low, (high - low) & _U64, seed & _U64, offset & _U64,
    )  # fmt: skip
    if status:
        check(status, "random_")


def randperm_(out: Tensor, seed: int, offset: int) -> None:
    """out (int64, 1-d) = a random permutation of 0..n-1: the argsort of n Philox keys."""
    if len(out._shape) != 1 or out._dtype.index != _INT64:
        raise RuntimeError("randperm_: expected a 1-d int64 output")
    status = lib.em_randperm(
        out._shape[0], _address(out), out._strides[0], seed & _U64, offset & _U64
    )
    if status:
        check(status, "randperm_")


# --- registration --------------------------------------------------------------------------


def _opcode(lookup: Callable[[bytes], int], name: str) -> int:
    code = int(lookup(name.encode()))
    if code < 0:
        raise RuntimeError(f"ember_cpu: the C kernels lack elementwise op {name!r}")
    return code


def register(registry: KernelRegistry) -> None:
    """Register this family's kernels for the cpu device."""
    for name in names.UNARY:
        registry.register(name, "cpu", _unary_kernel(name, _opcode(lib.em_unary_opcode, name)))
    for name in names.BINARY:
        registry.register(name, "cpu", _binary_kernel(name, _opcode(lib.em_binary_opcode, name)))
    registry.register(names.WHERE.name, "cpu", where)
    registry.register(names.COPY.name, "cpu", copy_)
    registry.register(names.FILL.name, "cpu", fill_)
    registry.register(names.ARANGE.name, "cpu", arange_)
    registry.register(names.UNIFORM.name, "cpu", uniform_)
    registry.register(names.NORMAL.name, "cpu", normal_)
    registry.register(names.RANDOM.name, "cpu", random_)
    registry.register(names.RANDPERM.name, "cpu", randperm_)
