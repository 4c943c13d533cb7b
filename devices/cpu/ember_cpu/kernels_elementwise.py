"""Elementwise kernels of the CPU device: copy_, fill_, unary, binary and where.

Each kernel is one cffi call into a loop rendered from the runtime's expression table
(`_render.py`). A contiguous plan calls a flat entry point with addresses and the element
count; any other plan passes its shape and strides, packed, to the strided entry point.
Loops are looked up by name once, when the kernels register: `ids[dtype.index]`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import ember
from ember.plugins import ops
from ember.plugins.sdk import ElementwisePlan, KernelRegistry, Scalar, Storage
from ember_cpu._geometry import pack_elementwise
from ember_cpu._lib import check, lib

__all__ = ["register"]

_DTYPES: Final = tuple(
    getattr(ember, name)
    for name in (
        "bool",
        "uint8",
        "int8",
        "int32",
        "int64",
        "float16",
        "float32",
        "float64",
        "bfloat16",
    )
)

_flat2 = lib.em_flat2
_flat3 = lib.em_flat3
_flat_scalar = lib.em_flat_scalar
_strided = lib.em_strided


def _ids(name: str) -> tuple[int, ...]:
    """The rendered loop of `name` ("op" or "copy.dst") per dtype index; -1 where none."""
    ids = [-1] * len(_DTYPES)
    for dt in _DTYPES:
        ids[dt.index] = lib.em_kernel_id(f"{name}.{dt.name}".encode())
    return tuple(ids)


def _scalar(value: Scalar) -> tuple[float, int]:
    """A scalar as the C side reads it: as a double for float loops, an int64 for others."""
    return (value, 0) if type(value) is float else (float(value), int(value))


def _unary_kernel(name: str) -> Callable[[Storage, Storage, ElementwisePlan], None]:
    ids = _ids(name)

    def kernel(out: Storage, a: Storage, plan: ElementwisePlan) -> None:
        dt = plan.dtypes[0]
        if plan.flat:
            status = _flat2(ids[dt.index], plan.numel, out.ptr, a.ptr)
        else:
            size = dt.itemsize
            out_ptr, a_ptr = out.ptr + plan.offsets[0] * size, a.ptr + plan.offsets[1] * size
            if plan.contiguous:
                status = _flat2(ids[dt.index], plan.numel, out_ptr, a_ptr)
            else:
                geometry = pack_elementwise(plan)
                status = _strided(
                    ids[dt.index], plan.ndim, geometry, out_ptr, a_ptr, 0, 0, 0, 0.0, 0
                )
        if status:
            check(status, name)

    kernel.__name__ = kernel.__qualname__ = f"cpu_{name}"
    return kernel


def _binary_kernel(
    name: str,
) -> Callable[[Storage, Storage | Scalar, Storage | Scalar, ElementwisePlan], None]:
    ids = _ids(name)

    def kernel(
        out: Storage, a: Storage | Scalar, b: Storage | Scalar, plan: ElementwisePlan
    ) -> None:
        # The hot path first: operands at their storages' starts, a flat loop.
        loop = ids[plan.dtypes[1].index]
        if plan.flat and type(a) is Storage:
            if type(b) is Storage:
                status = _flat3(loop, plan.numel, out.ptr, a.ptr, b.ptr)
            elif type(b) is float:
                status = _flat_scalar(loop, plan.numel, out.ptr, a.ptr, 0, 2, b, 0)
            else:
                status = _with_scalar(loop, out, a, b, plan)
        else:
            status = _binary_general(loop, out, a, b, plan)
        if status:
            check(status, name)

    kernel.__name__ = kernel.__qualname__ = f"cpu_{name}"
    return kernel


def _binary_general(
    loop: int, out: Storage, a: Storage | Scalar, b: Storage | Scalar, plan: ElementwisePlan
) -> int:
    """A binary op at offsets, strided or with a scalar operand; returns the C status."""
    if type(a) is not Storage or type(b) is not Storage:
        return _with_scalar(loop, out, a, b, plan)
    o = plan.offsets
    size = plan.dtypes[1].itemsize
    out_ptr = out.ptr + o[0] * plan.dtypes[0].itemsize
    a_ptr, b_ptr = a.ptr + o[1] * size, b.ptr + o[2] * size
    if plan.contiguous:
        return int(_flat3(loop, plan.numel, out_ptr, a_ptr, b_ptr))
    geometry = pack_elementwise(plan)
    return int(_strided(loop, plan.ndim, geometry, out_ptr, a_ptr, b_ptr, 0, 0, 0.0, 0))


def _with_scalar(
    loop: int, out: Storage, a: Storage | Scalar, b: Storage | Scalar, plan: ElementwisePlan
) -> int:
    """A binary op with one Python scalar operand; returns the C status."""
    side, tensor, value = (2, a, b) if isinstance(a, Storage) else (1, b, a)
    assert isinstance(tensor, Storage) and not isinstance(value, Storage)
    f, i = _scalar(value)
    o = plan.offsets
    out_ptr = out.ptr + o[0] * plan.dtypes[0].itemsize
    t_ptr = tensor.ptr + o[3 - side] * plan.dtypes[3 - side].itemsize
    a_ptr, b_ptr = (0, t_ptr) if side == 1 else (t_ptr, 0)
    if plan.contiguous:
        return int(_flat_scalar(loop, plan.numel, out_ptr, a_ptr, b_ptr, side, f, i))
    geometry = pack_elementwise(plan)
    return int(_strided(loop, plan.ndim, geometry, out_ptr, a_ptr, b_ptr, 0, side, f, i))


def _copy_ids() -> tuple[tuple[int, ...], ...]:
    by_dst: list[tuple[int, ...]] = [()] * len(_DTYPES)
    for dt in _DTYPES:
        by_dst[dt.index] = _ids(f"copy.{dt.name}")
    return tuple(by_dst)


_COPY: Final = _copy_ids()
_FILL: Final = _ids("fill")
_WHERE: Final = _ids("where")


def copy_(dst: Storage, src: Storage, plan: ElementwisePlan) -> None:
    """dst = src converted from plan.dtypes[1] to plan.dtypes[0]."""
    dst_dt, src_dt = plan.dtypes
    loop = _COPY[dst_dt.index][src_dt.index]
    o = plan.offsets
    dst_ptr = dst.ptr + o[0] * dst_dt.itemsize
    src_ptr = src.ptr + o[1] * src_dt.itemsize
    if plan.contiguous:
        status = _flat2(loop, plan.numel, dst_ptr, src_ptr)
    else:
        geometry = pack_elementwise(plan)
        status = _strided(loop, plan.ndim, geometry, dst_ptr, src_ptr, 0, 0, 0, 0.0, 0)
    if status:
        check(status, "copy_")


def fill_(dst: Storage, value: Scalar, plan: ElementwisePlan) -> None:
    """Every element of dst becomes value (of dst's dtype's Python type)."""
    dt = plan.dtypes[0]
    f, i = _scalar(value)
    dst_ptr = dst.ptr + plan.offsets[0] * dt.itemsize
    if plan.contiguous:
        status = _flat_scalar(_FILL[dt.index], plan.numel, dst_ptr, 0, 0, 1, f, i)
    else:
        geometry = pack_elementwise(plan)
        status = _strided(_FILL[dt.index], plan.ndim, geometry, dst_ptr, 0, 0, 0, 1, f, i)
    if status:
        check(status, "fill_")


def where(out: Storage, condition: Storage, a: Storage, b: Storage, plan: ElementwisePlan) -> None:
    """out = condition ? a : b; condition bool, a and b of out's dtype."""
    dt = plan.dtypes[0]
    size = dt.itemsize
    o = plan.offsets
    pointers = (
        out.ptr + o[0] * size,
        condition.ptr + o[1],
        a.ptr + o[2] * size,
        b.ptr + o[3] * size,
    )
    if plan.contiguous:
        status = lib.em_flat4(_WHERE[dt.index], plan.numel, *pointers)
    else:
        status = _strided(_WHERE[dt.index], plan.ndim, pack_elementwise(plan), *pointers, 0, 0.0, 0)
    if status:
        check(status, "where")


def register(registry: KernelRegistry) -> None:
    """Register this family's kernels for the cpu device."""
    for name in ops.UNARY:
        registry.register(name, "cpu", _unary_kernel(name), rendered=True)
    for name in ops.BINARY:
        registry.register(name, "cpu", _binary_kernel(name), rendered=True)
    registry.register(ops.WHERE, "cpu", where)
    registry.register(ops.COPY, "cpu", copy_)
    registry.register(ops.FILL, "cpu", fill_)
