"""Elementwise ops: the meta step (promotion, broadcasting, checks) and their dispatch.

`a + b` on two tensors of one dtype, shape and device that need no grad takes the fast
path in `_binary`: one tuple comparison, one dict lookup, one allocation, one kernel call.
Everything else goes through `binary_general`, which implements PyTorch's rules.
"""

from __future__ import annotations

from typing import Any

from ember._dispatch import Op
from ember._ops import names
from ember._ops._binary_general import (
    FORMULAS,
    INTEGRAL_ONLY,
    OP_FLAGS,
    TO_BOOL,
    binary_general,
)
from ember._ops._binary_tables import SAME_OUT, WITH_FLOAT, WITH_INT
from ember._ops._launch import launch_binary
from ember._ops._meta import broadcast_shapes, broadcast_strides, broadcasts_to
from ember._tensor import Tensor, empty_tensor, make_view
from ember.autograd._graph import (
    before_write,
    check_inplace,
    needs_grad,
    record_elementwise,
    write_back,
)
from ember.autograd._mode import STATE as _GRAD_MODE
from ember.autograd._saved import alias

__all__ = [
    "add", "add_", "bitwise_and", "bitwise_or", "bitwise_xor", "div", "div_", "eq",
    "floor_divide", "fmod", "ge", "gt", "le", "logical_and", "logical_or", "logical_xor", "lt",
    "maximum", "minimum", "mul", "mul_", "multiply", "ne", "pow", "pow_", "remainder", "sub",
    "sub_", "subtract", "true_divide",
]  # fmt: skip


def _binary(op: Op, a: Any, b: Any, out: Tensor | None = None) -> Tensor:
    # The hottest path, on its own so that it runs the fewest bytecodes: two dense tensors
    # at their storages' starts, of one dtype, shape and device, with a native kernel.
    if out is not None:
        return _binary_out(op, a, b, out)
    if type(a) is Tensor:
        kind = type(b)
        if kind is Tensor:
            same = SAME_OUT[op].get(a._dtype)
            shape = a._shape
            dev = a._device
            if (
                same is not None
                and b._dtype is a._dtype
                and b._shape == shape
                and b._device is dev
                and a._contiguous
                and b._contiguous
                and not (a._offset or b._offset)
            ):
                fn = op.kernels.get(dev.type)
                if fn is not None:
                    result = empty_tensor(shape, same[0], dev)
                    plan = same[1][shape]
                    if plan.numel:
                        fn(result._storage, a._storage, b._storage, plan)
                    if (a._autograd is not None or b._autograd is not None) and same[2]:
                        _record_fast(op, a, b, result)
                    return result
        elif kind is float:  # t * 0.5: a dense tensor with a float that keeps its dtype
            entry = WITH_FLOAT[op].get(a._dtype)
            if entry is not None and a._contiguous and not a._offset:
                fn = op.kernels.get(a._device.type)
                if fn is not None:
                    result = empty_tensor(a._shape, entry[0], a._device)
                    plan = entry[1][a._shape]
                    if plan.numel:
                        fn(result._storage, a._storage, b, plan)
                    if a._autograd is not None and entry[3]:
                        _record_fast(op, a, b, result)
                    return result
    return _binary_fast(op, a, b, out)


def _binary_fast(op: Op, a: Any, b: Any, out: Tensor | None) -> Tensor:
    # Fast paths: tensors with an equal-shape tensor of the same dtype and device, or with a
    # Python int/float (a weak scalar, which keeps the tensor's dtype), where promotion
    # cannot change the dtype (see `fast_sets`). Tensors in autograd take them too and
    # record straight after the kernel. Broadcasting pairs and `out=` take them outside
    # autograd. (`out=` calls went to `_binary_out`.)
    if type(a) is Tensor:
        tensor, other = a, b
    elif type(b) is Tensor:
        tensor, other = b, a
    else:
        return binary_general(op, a, b, out)
    dt = tensor._dtype
    kind = type(other)
    if kind is Tensor:
        dev = tensor._device
        if other._dtype is not dt or other._device is not dev:
            return binary_general(op, a, b, out)
        same = SAME_OUT[op].get(dt)
        if same is None:
            return binary_general(op, a, b, out)
        fn = op.kernels.get(dev.type)
        if fn is None:
            return binary_general(op, a, b, out)
        out_dt = same[0]
        if other._shape == tensor._shape:
            result = empty_tensor(tensor._shape, out_dt, dev)
            if tensor._contiguous and other._contiguous and not (a._offset or b._offset):
                plan = same[1][tensor._shape]
                if plan.numel:
                    fn(result._storage, a._storage, b._storage, plan)
            else:
                launch_binary(op, result, a, b, dt)
            if (
                (tensor._autograd is not None or other._autograd is not None)
                and not OP_FLAGS[op] & TO_BOOL
                and dt.is_floating_point
            ):
                _record_fast(op, a, b, result)
            return result
        if tensor._autograd is None and other._autograd is None:
            shape = _broadcast_pair(a._shape, b._shape)
            if shape is not None:
                result = empty_tensor(shape, out_dt, dev)
                launch_binary(op, result, a, b, dt)
                return result
        return binary_general(op, a, b, out)
    if kind is float:
        entry = WITH_FLOAT[op].get(dt)
    elif kind is int:
        entry = WITH_INT[op].get(dt)
    else:
        return binary_general(op, a, b, out)
    fn = op.kernels.get(tensor._device.type)
    if entry is None or fn is None:
        return binary_general(op, a, b, out)
    result = empty_tensor(tensor._shape, entry[0], tensor._device)
    scalar = float(other) if dt.is_floating_point else other
    if tensor._contiguous and not tensor._offset:
        if tensor is a:
            plan = entry[1][a._shape]
            if plan.numel:
                fn(result._storage, a._storage, scalar, plan)
        else:
            plan = entry[2][b._shape]
            if plan.numel:
                fn(result._storage, scalar, b._storage, plan)
    elif tensor is a:
        launch_binary(op, result, a, scalar, dt)
    else:
        launch_binary(op, result, scalar, b, dt)
    if tensor._autograd is not None and entry[3]:
        _record_fast(op, a, b, result)
    return result


def _binary_out(op: Op, a: Any, b: Any, out: Tensor) -> Tensor:
    """`out=` fast path: operands of out's dtype, shape and device, nothing in autograd, and
    no operand sharing out's memory unless it is exactly out's elements."""
    if type(out) is Tensor and type(a) is Tensor and type(b) is Tensor:
        dt = out._dtype
        shape = out._shape
        dev = out._device
        same = SAME_OUT[op].get(dt)
        if (
            same is not None
            and same[0] is dt
            and a._dtype is dt
            and b._dtype is dt
            and a._shape == shape
            and b._shape == shape
            and a._device is dev
            and b._device is dev
            and out._contiguous
            and out._autograd is None
            and a._autograd is None
            and b._autograd is None
        ):
            fn = op.kernels.get(dev.type)
            if fn is not None:
                storage = out._storage
                if a._contiguous and b._contiguous and not (a._offset or b._offset or out._offset):
                    # Dense operands at their storages' starts: one sharing out's storage is
                    # exactly out's elements.
                    plan = same[1][shape]
                    if plan.numel:
                        fn(storage, a._storage, b._storage, plan)
                    storage.version += 1
                    return out
                if (
                    a._storage is not storage
                    or (a._offset == out._offset and a._strides == out._strides)
                ) and (
                    b._storage is not storage
                    or (b._offset == out._offset and b._strides == out._strides)
                ):
                    launch_binary(op, out, a, b, dt)
                    storage.version += 1
                    return out
    return binary_general(op, a, b, out)


def _broadcast_pair(x: tuple[int, ...], y: tuple[int, ...]) -> tuple[int, ...] | None:
    """The broadcast of two shapes, or None when they don't broadcast (the general path
    then raises its error)."""
    nx, ny = len(x), len(y)
    if nx < ny:
        x = (1,) * (ny - nx) + x
    elif ny < nx:
        y = (1,) * (nx - ny) + y
    result = []
    for p, q in zip(x, y, strict=True):
        if p == q or q == 1:
            result.append(p)
        elif p == 1:
            result.append(q)
        else:
            return None
    return tuple(result)


def _record_fast(op: Op, a: Any, b: Any, result: Tensor) -> None:
    """Record a fast-path result (operands of one dtype and shape, or a tensor and a scalar)."""
    if not _GRAD_MODE.enabled:
        return
    meta = a._autograd if type(a) is Tensor else None
    if meta is None or not meta.requires_grad:
        meta = b._autograd if type(b) is Tensor else None
        if meta is None or not meta.requires_grad:
            return
    formula, name = FORMULAS[op]
    if formula is None:
        return
    save = () if formula.save is None else formula.save(a, b)
    ctx = (None if type(a) is Tensor else a, None if type(b) is Tensor else b)
    record_elementwise(name, formula, (a, b), result, save, False, ctx)


def _inplace(op: Op, t: Tensor, other: Any) -> Tensor:
    # Fast path (optimizer updates): a contiguous float tensor with nothing to record, and a
    # Python number or a same-dtype, same-shape tensor that is t itself or shares no memory
    # with it. Writing into an operand is safe then: kernels read an element before writing.
    if type(t) is Tensor or isinstance(t, Tensor):
        dt = t._dtype
        if dt.is_floating_point and t._contiguous and not OP_FLAGS[op] & INTEGRAL_ONLY:
            quiet = not _GRAD_MODE.enabled or t._autograd is None
            kind = type(other)
            if kind is float or kind is int:
                fn = op.kernels.get(t._device.type)
                if quiet and fn is not None:
                    entry = WITH_FLOAT[op].get(dt)
                    if t._offset or entry is None or entry[0] is not dt:
                        launch_binary(op, t, t, float(other), dt)
                    else:
                        plan = entry[1][t._shape]
                        if plan.numel:
                            fn(t._storage, t._storage, float(other), plan)
                    t._storage.version += 1
                    return t
            elif (
                isinstance(other, Tensor)
                and other._dtype is dt
                and other._device is t._device
                and (other is t or other._storage is not t._storage)
                and (quiet and (not _GRAD_MODE.enabled or other._autograd is None))
            ):
                fn = op.kernels.get(t._device.type)
                if fn is not None and other._shape != t._shape:
                    # A bias-like operand (`out += bias`, a Linear's forward), which shares no
                    # memory with t: its stride-0 view over t's shape takes the strided launch.
                    if broadcasts_to(other._shape, t._shape):
                        strides = broadcast_strides(other._shape, other._strides, t._shape)
                        other = make_view(other, other._offset, t._shape, strides)
                    else:
                        fn = None  # the general path raises PyTorch's error
                if fn is not None:
                    same = SAME_OUT[op].get(dt)
                    if t._offset or other._offset or not other._contiguous or same is None:
                        launch_binary(op, t, t, other, dt)
                    elif same[0] is dt:
                        plan = same[1][t._shape]
                        if plan.numel:
                            fn(t._storage, t._storage, other._storage, plan)
                    else:
                        launch_binary(op, t, t, other, dt)
                    t._storage.version += 1
                    return t
    if not isinstance(t, Tensor):
        raise TypeError(f"{op.name}_(): self must be a Tensor")
    if isinstance(other, Tensor) and other._shape != t._shape:
        shape = broadcast_shapes(op.name + "_", t._shape, other._shape)
        if shape != t._shape:
            raise RuntimeError(
                f"{op.name}_(): output with shape {list(t._shape)} doesn't match the broadcast "
                f"shape {list(shape)}"
            )
    if needs_grad(t, other):
        return _inplace_recorded(op, t, other)
    return binary_general(op, t, other, t)


def _inplace_recorded(op: Op, t: Tensor, other: Any) -> Tensor:
    """An in-place op on a graph tensor: computed out of place, written back, rebased.

    `t` then continues the graph from the op's node, as PyTorch's in-place ops do. When the
    formula reads its operands, it gets a copy of t's old values (t itself is overwritten).
    """
    check_inplace(t)
    formula, _ = FORMULAS[op]
    first: Any = t
    if formula is not None and formula.save is not None:
        first = before_write(t)
    result = binary_general(op, first, other if other is not t else first, None)
    if result._dtype is not t._dtype:
        raise RuntimeError(
            f"{op.name}_(): result type {result._dtype.name} can't be cast to the desired "
            f"output type {t._dtype.name}"
        )
    write_back(t, result)
    return t


def detached(x: Any) -> Any:
    """`x` without autograd metadata (tensors), for values that another node records."""
    return alias(x) if isinstance(x, Tensor) and x._autograd is not None else x


_ADD, _SUB, _MUL, _DIV = (names.BINARY[n] for n in ("add", "sub", "mul", "div"))


def _scaled(other: Any, alpha: Any) -> Any:
    if alpha == 1:
        return other
    if not isinstance(other, Tensor):
        return other * alpha
    if isinstance(alpha, float) and not other._dtype.is_floating_point:
        raise RuntimeError(
            f"For integral input tensors, argument alpha must not be a floating point number "
            f"(got alpha={alpha} with {other._dtype.name} other)"
        )
    return mul(other, alpha)


def add(input: Any, other: Any, *, alpha: Any = 1, out: Tensor | None = None) -> Tensor:
    """input + alpha * other."""
    return _binary(_ADD, input, _scaled(other, alpha) if alpha != 1 else other, out)


def sub(input: Any, other: Any, *, alpha: Any = 1, out: Tensor | None = None) -> Tensor:
    """input - alpha * other."""
    return _binary(_SUB, input, _scaled(other, alpha) if alpha != 1 else other, out)


def mul(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    """input * other."""
    return _binary(_MUL, input, other, out)


def div(
    input: Any, other: Any, *, rounding_mode: str | None = None, out: Tensor | None = None
) -> Tensor:
    """input / other: true division, or rounded with rounding_mode "floor" or "trunc"."""
    if rounding_mode is None:
        return _binary(_DIV, input, other, out)
    if rounding_mode == "floor":
        return binary_general(names.BINARY["floor_divide"], input, other, out)
    if rounding_mode == "trunc":
        return binary_general(names.BINARY["trunc_divide"], input, other, out)
    raise ValueError(
        "div expected rounding_mode to be one of None, 'trunc', or 'floor' "
        f"but found '{rounding_mode}'"
    )


def add_(t: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """In place: t += alpha * other."""
    return _inplace(_ADD, t, _scaled(other, alpha))


def sub_(t: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """In place: t -= alpha * other."""
    return _inplace(_SUB, t, _scaled(other, alpha))


def mul_(t: Tensor, other: Any) -> Tensor:
    """In place: t *= other."""
    return _inplace(_MUL, t, other)


def div_(t: Tensor, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """In place: t /= other."""
    if rounding_mode is None:
        return _inplace(_DIV, t, other)
    return t.copy_(div(t, other, rounding_mode=rounding_mode))


def _binary_function(name: str) -> Any:
    op = names.BINARY[name]

    def function(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
        return _binary(op, input, other, out)

    function.__name__ = function.__qualname__ = name
    return function


floor_divide = _binary_function("floor_divide")
remainder = _binary_function("remainder")
fmod = _binary_function("fmod")
pow = _binary_function("pow")
maximum = _binary_function("maximum")
minimum = _binary_function("minimum")
bitwise_and = _binary_function("bitwise_and")
bitwise_or = _binary_function("bitwise_or")
bitwise_xor = _binary_function("bitwise_xor")
eq = _binary_function("eq")
ne = _binary_function("ne")
lt = _binary_function("lt")
le = _binary_function("le")
gt = _binary_function("gt")
ge = _binary_function("ge")
logical_and = _binary_function("logical_and")
logical_or = _binary_function("logical_or")
logical_xor = _binary_function("logical_xor")
true_divide = div
subtract = sub
multiply = mul


def pow_(t: Tensor, exponent: Any) -> Tensor:
    """In place: t **= exponent."""
    return _inplace(names.BINARY["pow"], t, exponent)
