"""Binary elementwise ops by PyTorch's rules: the general path of every call that no fast
path of `elementwise.py` takes.

Its meta step promotes (result_type, with Python scalars as weak operands), checks dtypes
per op (bitwise ops on integers, no bool subtraction), broadcasts, checks `out=` (device,
shape, castability, no overlap with the inputs) and integer divisions by zero, then
launches the planned kernel and records the graph. `output` and `finish` are how unary ops
write into `out=` too.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from ember import _dtype
from ember._dispatch import Op
from ember._errors import DTypeError
from ember._ops import _launch, binary_formulas, names, pointwise_formulas
from ember._ops._launch import launch_binary, launch_reduction
from ember._ops._meta import broadcast_shapes, broadcast_strides, same_device
from ember._ops._overlap import check_no_overlap
from ember._ops.conversion import cast, python_scalar
from ember._ops.special_formulas import SPECIAL_BINARY
from ember._tensor import Tensor, empty_tensor, make_view
from ember.autograd._graph import needs_grad, record

__all__ = [
    "FLOAT_ONLY", "FORMULAS", "INTEGRAL_ONLY", "INT_CHECKED", "NO_BOOL", "OP_FLAGS", "TO_BOOL",
    "binary_general", "finish", "output",
]  # fmt: skip

FLOAT_ONLY: Final = 1  # integer and bool inputs compute in the default float dtype
TO_BOOL: Final = 2  # the result is bool (comparisons, logical ops)
INTEGRAL_ONLY: Final = 4  # bitwise ops
NO_BOOL: Final = 8  # PyTorch rejects bool inputs (sub, neg)
INT_CHECKED: Final = 16  # integer operands are checked first (division by zero, powers)
_INT_DIVISIONS: Final = frozenset({"floor_divide", "trunc_divide", "remainder", "fmod"})

_BINARY_FLAGS: Final = {
    "div": FLOAT_ONLY, "pow": INT_CHECKED, "sub": NO_BOOL,
    **dict.fromkeys(_INT_DIVISIONS, INT_CHECKED),
    "bitwise_and": INTEGRAL_ONLY, "bitwise_or": INTEGRAL_ONLY, "bitwise_xor": INTEGRAL_ONLY,
    **{name: TO_BOOL for name in names.BINARY_COMPARISON},
    **dict.fromkeys(("atan2", "hypot", "copysign", "nextafter"), FLOAT_ONLY),
    **dict.fromkeys(("bitwise_left_shift", "bitwise_right_shift"), INTEGRAL_ONLY),
    **dict.fromkeys(SPECIAL_BINARY, FLOAT_ONLY),
}  # fmt: skip
OP_FLAGS: dict[Op, int] = {names.BINARY[n]: _BINARY_FLAGS.get(n, 0) for n in names.BINARY}
_SCALARS: Final = (int, float, bool)
# Per op: its derivative formula (None: not differentiable) and its node's name.
_ALL_FORMULAS: Final = {**binary_formulas.FORMULAS, **pointwise_formulas.BINARY}
FORMULAS: dict[Op, tuple[binary_formulas.Formula | None, str]] = {
    op: (_ALL_FORMULAS.get(n), n.capitalize() + "Backward") for n, op in names.BINARY.items()
}
_bool = _dtype.bool


def binary_general(op: Op, a: Any, b: Any, out: Tensor | None) -> Tensor:
    flags = OP_FLAGS[op]
    # NumPy scalars (np.float32(2), np.int64(3), np.bool_(True)) join as Python scalars.
    if isinstance(a, np.generic):
        a = a.item()
    if isinstance(b, np.generic):
        b = b.item()
    a, b = _scalar_tensor_to_scalar(a, b), _scalar_tensor_to_scalar(b, a)
    a_is_tensor, b_is_tensor = isinstance(a, Tensor), isinstance(b, Tensor)
    if not a_is_tensor and not b_is_tensor:
        raise TypeError(f"{op.name}(): expected at least one tensor argument, got {a!r} and {b!r}")
    for value in (a, b):
        if not isinstance(value, (Tensor, *_SCALARS)):
            raise TypeError(f"{op.name}(): unsupported operand type {type(value).__name__}")
    if a_is_tensor and b_is_tensor:
        dev = same_device(op.name, a, b)
        shape = broadcast_shapes(op.name, a._shape, b._shape)
    else:
        t = a if a_is_tensor else b
        dev, shape = t._device, t._shape
    compute = _dtype.result_type(a, b)
    compute = _check_compute_dtype(op, flags, compute, a, b)
    result_dtype = _bool if flags & TO_BOOL else compute
    operands = [_prepare(x, compute, shape) for x in (a, b)]
    grad = needs_grad(a, b) and not flags & TO_BOOL and result_dtype.is_floating_point
    if grad and out is not None:
        raise RuntimeError(
            f"{op.name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )
    if out is not None:
        check_no_overlap(op.name, out, operands)
    target = output(op.name, out, shape, result_dtype, dev)
    _check_operands(op, flags, compute, operands[1])
    launch_binary(op, target, operands[0], operands[1], compute)
    result = finish(out, target)
    if grad:
        formula, name = FORMULAS[op]
        if formula is not None:
            save = () if formula.save is None else formula.save(a, b)
            scalars = tuple(None if isinstance(x, Tensor) else x for x in (a, b))
            record(name, formula, (a, b), result, save, ctx=scalars)
    return result


def _check_operands(op: Op, flags: int, compute: _dtype.dtype, b: Any) -> None:
    """PyTorch's errors of integer division by zero and of integral negative powers."""
    if not flags & INT_CHECKED or compute.is_floating_point:
        return
    if op.name == "pow":
        if not isinstance(b, Tensor) and b < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return
    if isinstance(b, Tensor):
        zero = binary_general(names.BINARY["eq"], b, 0, None)
        found = False
        if zero.numel():
            ndim = len(zero._shape)
            flag = empty_tensor((1,) * ndim, _bool, zero._device)
            # any() of a bool tensor is its amax: a primitive (any is a composite).
            launch_reduction(names.REDUCTIONS["amax"], flag, zero, tuple(range(ndim)))
            found = bool(flag.item())
    else:
        found = b == 0
    if found:
        raise RuntimeError(f"{op.name}: ZeroDivisionError (integer division by zero)")


def _scalar_tensor_to_scalar(x: Any, other: Any) -> Any:
    # A 0-d cpu tensor may join tensors of another device, as a scalar does in PyTorch.
    if (
        isinstance(x, Tensor)
        and isinstance(other, Tensor)
        and not x._shape
        and x._device is not other._device
        and x._device.type == "cpu"
    ):
        return _dtype_preserving_item(x)
    return x


def _dtype_preserving_item(x: Tensor) -> Any:
    return x.item()


def _check_compute_dtype(op: Op, flags: int, compute: _dtype.dtype, a: Any, b: Any) -> _dtype.dtype:
    if flags & INTEGRAL_ONLY and compute.is_floating_point:
        raise DTypeError(f"{op.name}(): not supported for floating-point dtype {compute.name}")
    if flags & NO_BOOL and compute is _bool:
        raise DTypeError(
            f"{op.name}(): subtraction with two bool tensors is not supported; "
            "use the `^` or `logical_xor()` operator instead"
        )
    if flags & FLOAT_ONLY and not compute.is_floating_point:
        return _dtype.get_default_dtype()
    return compute


def _prepare(x: Any, compute: _dtype.dtype, shape: tuple[int, ...]) -> Any:
    """A tensor operand cast to the compute dtype and broadcast; scalars converted."""
    if not isinstance(x, Tensor):
        return python_scalar(x, compute)
    x = cast(x, compute)
    if x._shape != shape:
        x = make_view(x, x._offset, shape, broadcast_strides(x._shape, x._strides, shape))
    return x


def output(
    name: str, out: Tensor | None, shape: tuple[int, ...], dt: _dtype.dtype, dev: Any
) -> Tensor:
    """Where a kernel writes: a new tensor, `out` itself, or a temporary to convert into `out`."""
    if out is None:
        return empty_tensor(shape, dt, dev)
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be a Tensor, not {type(out).__name__}")
    if out._device is not dev:
        raise RuntimeError(f"{name}(): out is on {out._device} but the inputs are on {dev}")
    if out._shape != shape:
        raise RuntimeError(
            f"{name}(): out has shape {list(out._shape)} but the result has shape {list(shape)}"
        )
    if not _can_cast(dt, out._dtype):
        raise RuntimeError(
            f"{name}(): result type {dt.name} can't be cast to the desired output type "
            f"{out._dtype.name}"
        )
    return out if out._dtype is dt else empty_tensor(shape, dt, dev)


def finish(out: Tensor | None, target: Tensor) -> Tensor:
    """Complete a write into `out` (converting from a temporary) and bump its version."""
    if out is None:
        return target
    if out is not target:
        _launch.copy(out, target)
    out._storage.version += 1  # only once the kernels succeeded
    return out


def _can_cast(source: _dtype.dtype, target: _dtype.dtype) -> bool:
    """PyTorch's rule for writing results into `out`/in-place targets: no lower category."""
    return target.category >= source.category
