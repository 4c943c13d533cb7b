"""Elementwise kernels of the OpenCL device: copy_, fill_, arange_, unary, binary, where.

Every kernel is one launch. When all operands are contiguous with the output's shape it
runs the `contiguous` kernel (EM_VEC consecutive elements per work item, one linear
index); otherwise the `strided` one, with shape and strides (elements, output first, zero
where broadcast) in one EmGeometry struct passed by value. Programs are built per
(op, dtypes) from cl/elementwise.cl on first use and cached (_launch.kernel, on disk too).
A Python scalar operand travels as a kernel argument, never as a buffer.
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod
from typing import Any

import numpy as np

from ember._dispatch import KernelRegistry
from ember._ops import names
from ember._tensor import Tensor
from ember_opencl import _ew_expressions as ex
from ember_opencl._ew_programs import (
    BITS,
    GROUP,
    KERNELS,
    LOCAL,
    Scalar,
    arange_kernel,
    binary_kernels,
    copy_kernels,
    fill_kernels,
    groups,
    has_fp64,
    items,
    raise_if_flagged,
    scalar_to,
    strides_at,
    unary_kernels,
    where_kernels,
)
from ember_opencl._launch import LOCAL_SIZE, geometry, launch, launcher, setter

__all__ = ["register"]

# Argument setters per kernel signature (see _launch.setter): m buffer, l long, v by value.
# The strided kernels take the EmGeometry struct after the contiguous ones' arguments;
# kernels that can fail take the error-flag buffer last.
_SET_UNARY_STRIDED = setter("mlmllv")
_SET_BINARY_STRIDED = setter("mlmlmllv")
_SET_BINARY_FLAGGED = setter("mlmlmllm")
_SET_BINARY_STRIDED_FLAGGED = setter("mlmlmllvm")
_SET_SCALAR_STRIDED = setter("mlmlvlv")
_SET_SCALAR_FLAGGED = setter("mlmlvlm")
_SET_SCALAR_STRIDED_FLAGGED = setter("mlmlvlvm")
_SET_FILL = setter("mlvl")
_SET_FILL_STRIDED = setter("mlvlv")
_SET_ARANGE = setter("mlvvllvl")
_SET_WHERE = setter("mlmlmlmll")
_SET_WHERE_STRIDED = setter("mlmlmlmllv")
# The contiguous kernels of small ops, with their setters and local size built in.
_LAUNCH_UNARY = launcher("mlmll", LOCAL)
_LAUNCH_BINARY = launcher("mlmlmll", LOCAL)
_LAUNCH_SCALAR = launcher("mlmlvl", LOCAL)


# --- unary ---------------------------------------------------------------------------------


def _unary_kernel(op: str) -> Callable[[Tensor, Tensor], None]:
    def run(out: Tensor, a: Tensor) -> None:
        dev = out._device
        dtype = a._dtype
        ks = KERNELS.get((dev.index, "unary", op, dtype)) or unary_kernels(dev, op, dtype)
        shape = out._shape
        n = prod(shape)
        if out._contiguous and a._contiguous and a._shape == shape:
            args: tuple[Any, ...] = (
                out._storage.handle,
                out._offset,
                a._storage.handle,
                a._offset,
                n,
            )
            size = ((n + GROUP - 1) // GROUP * LOCAL_SIZE or LOCAL_SIZE,)  # groups(n)
            _LAUNCH_UNARY(dev, ks[0], size, *args)
        else:
            g = geometry(shape, out._strides, strides_at(a, shape))
            args = (out._storage.handle, out._offset, a._storage.handle, a._offset, n, g)
            launch(dev, ks[1], items(n), args, LOCAL, _SET_UNARY_STRIDED)

    run.__name__ = run.__qualname__ = f"opencl_{op}"
    return run


# --- binary --------------------------------------------------------------------------------


def _check_scalar(op: str, dtype: Any, scalar: Scalar, side: str) -> None:
    if dtype.is_floating_point or dtype.name == "bool":
        return
    if side == "b" and op in ex.INTEGER_DIVISIONS and scalar == 0:
        raise RuntimeError("ZeroDivisionError")
    if side == "b" and op == "pow" and not isinstance(scalar, float) and scalar < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def _with_scalar(op: str, out: Tensor, t: Tensor, scalar: Scalar, side: str) -> None:
    dev = out._device
    dtype = t._dtype
    _check_scalar(op, dtype, scalar, side)
    ks = KERNELS.get((dev.index, "binary", op, dtype, side)) or binary_kernels(dev, op, dtype, side)
    # A scalar joining a float16 tensor stays in float, the op's math type (PyTorch's rule).
    value = np.float32(scalar) if dtype.name == "float16" else scalar_to(dtype, scalar)
    shape = out._shape
    n = prod(shape)
    flag = ks[2]
    if out._contiguous and t._contiguous and t._shape == shape:
        size = ((n + GROUP - 1) // GROUP * LOCAL_SIZE or LOCAL_SIZE,)  # groups(n)
        args: tuple[Any, ...] = (
            out._storage.handle, out._offset, t._storage.handle, t._offset, value, n,
        )  # fmt: skip
        if flag is None:
            _LAUNCH_SCALAR(dev, ks[0], size, *args)
            return
        launch(dev, ks[0], size, (*args, flag), LOCAL, _SET_SCALAR_FLAGGED)
    else:
        g = geometry(shape, out._strides, strides_at(t, shape))
        args = (out._storage.handle, out._offset, t._storage.handle, t._offset, value, n, g)
        if flag is None:
            launch(dev, ks[1], items(n), args, LOCAL, _SET_SCALAR_STRIDED)
            return
        launch(dev, ks[1], items(n), (*args, flag), LOCAL, _SET_SCALAR_STRIDED_FLAGGED)
    if side == "a":
        raise_if_flagged(dev, flag)


def _binary_kernel(op: str) -> Callable[[Tensor, Scalar | Tensor, Scalar | Tensor], None]:
    # (device index, dtype) -> the contiguous kernel, once built and if it sets no error
    # flag: the small ops' hot path, one lookup of a 2-tuple (KERNELS has every kernel).
    plain: dict[tuple[int, Any], Any] = {}

    def run(out: Tensor, a: Tensor | Scalar, b: Tensor | Scalar) -> None:
        if isinstance(a, Tensor) and isinstance(b, Tensor):
            shape = out._shape
            if (
                out._contiguous
                and a._contiguous
                and b._contiguous
                and a._shape == shape
                and b._shape == shape
            ):
                dev = out._device
                k = plain.get((dev.index, a._dtype))
                if k is not None:
                    n = prod(shape)
                    _LAUNCH_BINARY(
                        dev, k, ((n + GROUP - 1) // GROUP * LOCAL_SIZE or LOCAL_SIZE,),  # groups(n)
                        out._storage.handle, out._offset, a._storage.handle, a._offset,
                        b._storage.handle, b._offset, n,
                    )  # fmt: skip
                    return
        _binary_any(op, plain, out, a, b)

    run.__name__ = run.__qualname__ = f"opencl_{op}"
    return run


def _binary_any(
    op: str, plain: dict[tuple[int, Any], Any], out: Tensor, a: Tensor | Scalar, b: Tensor | Scalar
) -> None:
    """`op` on any operands (the first call of a kernel, strides, scalars, error flags)."""
    if not isinstance(b, Tensor):
        if not isinstance(a, Tensor):
            raise TypeError(f"{op}: expected at least one tensor operand")
        _with_scalar(op, out, a, b, "b")
        return
    if not isinstance(a, Tensor):
        _with_scalar(op, out, b, a, "a")
        return
    dev = out._device
    dtype = a._dtype
    ks = KERNELS.get((dev.index, "binary", op, dtype, "")) or binary_kernels(dev, op, dtype)
    shape = out._shape
    n = prod(shape)
    flag = ks[2]
    if flag is None:
        plain[(dev.index, dtype)] = ks[0]
    if out._contiguous and a._contiguous and b._contiguous and a._shape == shape == b._shape:
        size = groups(n)
        args: tuple[Any, ...] = (
            out._storage.handle, out._offset, a._storage.handle, a._offset,
            b._storage.handle, b._offset, n,
        )  # fmt: skip
        if flag is None:
            _LAUNCH_BINARY(dev, ks[0], size, *args)
            return
        launch(dev, ks[0], size, (*args, flag), LOCAL, _SET_BINARY_FLAGGED)
    else:
        g = geometry(shape, out._strides, strides_at(a, shape), strides_at(b, shape))
        args = (
            out._storage.handle, out._offset, a._storage.handle, a._offset,
            b._storage.handle, b._offset, n, g,
        )  # fmt: skip
        if flag is None:
            launch(dev, ks[1], items(n), args, LOCAL, _SET_BINARY_STRIDED)
            return
        launch(dev, ks[1], items(n), (*args, flag), LOCAL, _SET_BINARY_STRIDED_FLAGGED)
    raise_if_flagged(dev, flag)


# --- memory --------------------------------------------------------------------------------


def copy_(dst: Tensor, src: Tensor) -> None:
    """dst[...] = src[...], converting dtype; src broadcasts to dst's shape."""
    dev = dst._device
    ks = KERNELS.get((dev.index, "copy", dst._dtype, src._dtype)) or copy_kernels(
        dev, dst._dtype, src._dtype
    )
    shape = dst._shape
    n = prod(shape)
    if dst._contiguous and src._contiguous and src._shape == shape:
        args: tuple[Any, ...] = (
            dst._storage.handle,
            dst._offset,
            src._storage.handle,
            src._offset,
            n,
        )
        _LAUNCH_UNARY(dev, ks[0], groups(n), *args)
    else:
        g = geometry(shape, dst._strides, strides_at(src, shape))
        args = (dst._storage.handle, dst._offset, src._storage.handle, src._offset, n, g)
        launch(dev, ks[1], items(n), args, LOCAL, _SET_UNARY_STRIDED)


def fill_(dst: Tensor, value: Scalar) -> None:
    """Every element of dst (any strides) becomes value."""
    dev = dst._device
    dtype = dst._dtype
    size = dtype.itemsize
    ks = KERNELS.get((dev.index, "fill", size)) or fill_kernels(dev, size)
    bits = np.array(scalar_to(dtype, value)).view(BITS[size])[()]
    n = prod(dst._shape)
    if dst._contiguous:
        args: tuple[Any, ...] = (dst._storage.handle, dst._offset, bits, n)
        launch(dev, ks[0], groups(n), args, LOCAL, _SET_FILL)
    else:
        g = geometry(dst._shape, dst._strides)
        args = (dst._storage.handle, dst._offset, bits, n, g)
        launch(dev, ks[1], items(n), args, LOCAL, _SET_FILL_STRIDED)


def arange_(out: Tensor, start: Scalar, step: Scalar) -> None:
    """out[i] = start + i * step for a 1-d contiguous out."""
    if len(out._shape) != 1 or not out._contiguous:
        raise RuntimeError("arange_: expected a 1-d contiguous output")
    dev = out._device
    k = arange_kernel(dev, out._dtype)
    use_int = not isinstance(start, float) and not isinstance(step, float)
    in_real = not use_int or out._dtype.is_floating_point
    real = np.float64 if has_fp64(dev) else np.float32
    n = out._shape[0]
    args = (
        out._storage.handle, out._offset, real(start), real(step),
        int(start) if use_int else 0, int(step) if use_int else 0, np.int32(in_real), n,
    )  # fmt: skip
    launch(dev, k, items(n), args, LOCAL, _SET_ARANGE)


def where(out: Tensor, cond: Tensor, a: Tensor, b: Tensor) -> None:
    """out = a where cond else b; cond is bool, all broadcast to out's shape."""
    dev = out._device
    size = out._dtype.itemsize
    ks = KERNELS.get((dev.index, "where", size)) or where_kernels(dev, size)
    shape = out._shape
    n = prod(shape)
    handles = (
        out._storage.handle, out._offset, cond._storage.handle, cond._offset,
        a._storage.handle, a._offset, b._storage.handle, b._offset, n,
    )  # fmt: skip
    if (
        out._contiguous
        and cond._contiguous
        and a._contiguous
        and b._contiguous
        and cond._shape == a._shape == b._shape == shape
    ):
        launch(dev, ks[0], groups(n), handles, LOCAL, _SET_WHERE)
    else:
        g = geometry(
            shape,
            out._strides,
            strides_at(cond, shape),
            strides_at(a, shape),
            strides_at(b, shape),
        )
        launch(dev, ks[1], items(n), (*handles, g), LOCAL, _SET_WHERE_STRIDED)


# --- registration --------------------------------------------------------------------------


def register(registry: KernelRegistry) -> None:
    """Register this family's kernels for the opencl device."""
    for name in names.UNARY:
        registry.register(name, "opencl", _unary_kernel(name))
    for name in names.BINARY:
        registry.register(name, "opencl", _binary_kernel(name))
    registry.register(names.WHERE.name, "opencl", where)
    registry.register(names.COPY.name, "opencl", copy_)
    registry.register(names.FILL.name, "opencl", fill_)
    registry.register(names.ARANGE.name, "opencl", arange_)
