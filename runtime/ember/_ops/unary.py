"""Unary elementwise ops, `where` and `clamp`."""

from __future__ import annotations

from typing import Any, Final

from ember import _dtype
from ember._dispatch import Op
from ember._errors import DTypeError
from ember._ops import _launch, names, pointwise_formulas, unary_formulas
from ember._ops._binary_general import binary_general, finish, output
from ember._ops._meta import broadcast_shapes, broadcast_strides, same_device
from ember._ops.conversion import cast, python_scalar
from ember._ops.creation import full
from ember._ops.elementwise import (
    _binary,
    before_write,
    check_inplace,
    detached,
    write_back,
)
from ember._plan import ElementwisePlan, flat_plans
from ember._tensor import Tensor, empty_tensor, make_view
from ember.autograd._graph import needs_grad, record, record_elementwise

__all__ = [
    "abs", "bitwise_not", "ceil", "clamp", "clamp_", "clip", "cos", "erf", "exp", "exp_", "expm1",
    "floor", "gelu", "log", "log1p", "logical_not", "neg", "negative", "reciprocal", "relu",
    "relu_", "round", "rsqrt", "sigmoid", "sign", "sin", "sqrt", "square", "tanh", "trunc",
    "where",
]  # fmt: skip

# Ops whose integer inputs compute in the default float dtype (torch.exp(int) is float32).
_FLOATING: Final = frozenset(
    {"exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tanh", "erf", "rsqrt",
     "reciprocal", "sigmoid", "gelu",
     "lgamma", "digamma", "erfinv", "erfc", "erfcx", "ndtri", "i0", "i0e", "i1", "i1e",
     "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_k0",
     "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
     "airy_ai", "spherical_bessel_j0"}
) | frozenset(pointwise_formulas.UNARY)  # fmt: skip
# Rounding is the identity on integers, as in PyTorch.
_ROUNDING: Final = frozenset({"floor", "ceil", "round", "trunc"})
_bool = _dtype.bool


def _compute_dtype(op: Op, t: Tensor) -> _dtype.dtype:
    dt = t._dtype
    if op.name in _FLOATING and not dt.is_floating_point:
        return _dtype.get_default_dtype()
    if dt is _bool and op.name in ("neg", "abs"):
        raise DTypeError(
            f"{op.name}(): not supported for bool tensors; use logical_not() or ~ instead"
        )
    return dt


def _unary(op: Op, t: Any, out: Tensor | None = None) -> Tensor:
    # The hot path: a dense float tensor at its storage's start, into a new tensor or into
    # a dense `out` of its dtype and shape (sharing t's storage only as t's very elements).
    if type(t) is Tensor:
        dt = t._dtype
        if dt.is_floating_point and t._contiguous and not t._offset:
            fn = op.kernels.get(t._device.type)
            if fn is not None:
                if out is None:
                    result = empty_tensor(t._shape, dt, t._device)
                    plan = _FLAT_PLANS[dt][t._shape]
                    if plan.numel:
                        fn(result._storage, t._storage, plan)
                    if t._autograd is not None and needs_grad(t):
                        _record_fast(op, t, result)
                    return result
                if (
                    type(out) is Tensor
                    and out._dtype is dt
                    and out._shape == t._shape
                    and out._device is t._device
                    and out._contiguous
                    and not out._offset
                    and out._autograd is None
                    and t._autograd is None
                ):
                    plan = _FLAT_PLANS[dt][t._shape]
                    if plan.numel:
                        fn(out._storage, t._storage, plan)
                    out._storage.version += 1
                    return out
    return _unary_general(op, t, out)


def _unary_general(op: Op, t: Any, out: Tensor | None) -> Tensor:
    if type(t) is not Tensor and not isinstance(t, Tensor):
        raise TypeError(f"{op.name}(): argument 'input' must be a Tensor, not {type(t).__name__}")
    fn = op.kernels.get(t._device.type)
    if out is None and fn is not None and t._dtype.is_floating_point:
        result = empty_tensor(t._shape, t._dtype, t._device)
        if t._contiguous:
            plan = _flat_plan(t, result)
            if plan.numel:
                fn(result._storage, t._storage, plan)
        else:
            _launch.launch_unary(op, result, t)
        if t._autograd is not None and needs_grad(t):
            _record_fast(op, t, result)
        return result
    compute = _compute_dtype(op, t)
    if op.name in _ROUNDING and not compute.is_floating_point:
        target = output(op.name, out, t._shape, compute, t._device)
        _launch.copy(target, t)
        return finish(out, target)
    source = cast(t, compute)
    if fn is None and op.composite:
        # The composite's own ops record the graph.
        result = _COMPOSITES[op.name](source)
        if out is None:
            return result
        target = output(op.name, out, result._shape, compute, t._device)
        _launch.copy(target, result)
        return finish(out, target)
    grad = needs_grad(t) and compute.is_floating_point
    if grad and out is not None:
        raise RuntimeError(
            f"{op.name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )
    target = output(op.name, out, t._shape, compute, t._device)
    _launch.launch_unary(op, target, source)
    result = finish(out, target)
    if grad:
        _record(op, t, result)
    return result


# Per dtype: the contiguous plans of a unary op's fast path (out and input of that dtype).
_FLAT_PLANS: Final = {dt: flat_plans((dt, dt)) for dt in _dtype.ALL_DTYPES}


def _flat_plan(t: Tensor, result: Tensor) -> ElementwisePlan:
    """The plan of a new contiguous `result` from contiguous `t` (the fast path's)."""
    dt = t._dtype
    if t._offset:
        numel = result._storage.nbytes // dt.itemsize  # a fresh result's storage is exact
        return ElementwisePlan((numel,), ((1,), (1,)), (0, t._offset), (dt, dt), True)
    return _FLAT_PLANS[dt][t._shape]


def _record_fast(op: Op, t: Tensor, result: Tensor) -> None:
    """Record a fast-path result (same shape and dtype as t: nothing to reduce or cast)."""
    formula, saves = unary_formulas.FORMULAS[op.name]
    save = (t,) if saves == "input" else ()
    record_elementwise(_NAMES[op], formula, (t,), result, save, saves == "output", None)


def _record(op: Op, t: Tensor, result: Tensor) -> None:
    formula, saves = unary_formulas.FORMULAS[op.name]
    name = _NAMES[op]
    if saves == "output":
        record(name, formula, (t,), result, save_output=True)
    else:
        record(name, formula, (t,), result, (t,) if saves == "input" else ())


_NAMES: Final = {op: name.capitalize() + "Backward" for name, op in names.UNARY.items()}


# Generic formulas of the composite unary ops; a device may register fused kernels instead.
def _sign(t: Tensor) -> Tensor:
    if t._dtype is _bool:
        return t.clone()
    # sign(NaN) is 0 in PyTorch: NaN compares false both ways.
    positive = cast(_binary(names.BINARY["gt"], t, 0), t._dtype)
    negative = cast(_binary(names.BINARY["lt"], t, 0), t._dtype)
    return _binary(names.BINARY["sub"], positive, negative)


def _reciprocal(t: Tensor) -> Tensor:
    return _binary(names.BINARY["div"], 1.0, t)


def _rsqrt(t: Tensor) -> Tensor:
    return _reciprocal(_unary(names.UNARY["sqrt"], t))


def _sigmoid(t: Tensor) -> Tensor:
    return _reciprocal(_binary(names.BINARY["add"], _unary(names.UNARY["exp"], neg(t)), 1.0))


def _relu(t: Tensor) -> Tensor:
    return _binary(names.BINARY["maximum"], t, 0)


def _gelu(t: Tensor) -> Tensor:
    inner = _unary(names.UNARY["erf"], _binary(names.BINARY["mul"], t, 0.7071067811865476))
    return _binary(
        names.BINARY["mul"],
        _binary(names.BINARY["mul"], t, 0.5),
        _binary(names.BINARY["add"], inner, 1.0),
    )


_COMPOSITES: Final = {
    "sign": _sign, "reciprocal": _reciprocal, "rsqrt": _rsqrt, "sigmoid": _sigmoid,
    "relu": _relu, "gelu": _gelu,
}  # fmt: skip


def _unary_function(name: str) -> Any:
    op = names.UNARY[name]

    def function(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        return _unary(op, input, out)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"Elementwise {name}."
    return function


neg = _unary_function("neg")
abs = _unary_function("abs")
exp = _unary_function("exp")
log = _unary_function("log")
log1p = _unary_function("log1p")
expm1 = _unary_function("expm1")
sqrt = _unary_function("sqrt")
sin = _unary_function("sin")
cos = _unary_function("cos")
tanh = _unary_function("tanh")
erf = _unary_function("erf")
floor = _unary_function("floor")
ceil = _unary_function("ceil")
round = _unary_function("round")
trunc = _unary_function("trunc")
sign = _unary_function("sign")
rsqrt = _unary_function("rsqrt")
reciprocal = _unary_function("reciprocal")
sigmoid = _unary_function("sigmoid")
relu = _unary_function("relu")
gelu = _unary_function("gelu")
negative = neg


def exp_(t: Tensor) -> Tensor:
    """In place: t = exp(t)."""
    return _unary_inplace(names.UNARY["exp"], t)


def relu_(t: Tensor) -> Tensor:
    """In place: t = max(t, 0)."""
    return _unary_inplace(names.UNARY["relu"], t)


def _unary_inplace(op: Op, t: Tensor) -> Tensor:
    if not needs_grad(t):
        return _unary(op, t, out=t)
    check_inplace(t)
    # A formula (or a composite's ops) reading the input gets a copy of its old values.
    keeps_input = op.composite or unary_formulas.FORMULAS[op.name][1] == "input"
    result = _unary(op, before_write(t) if keeps_input else t)
    if result._dtype is not t._dtype:
        raise RuntimeError(
            f"{op.name}_(): result type {result._dtype.name} can't be cast to the desired "
            f"output type {t._dtype.name}"
        )
    write_back(t, result)
    return t


def square(t: Tensor) -> Tensor:
    """t * t."""
    return _binary(names.BINARY["mul"], t, t)


def logical_not(t: Tensor, *, out: Tensor | None = None) -> Tensor:
    """True where t is zero."""
    return binary_general(names.BINARY["eq"], t, 0, out)


def bitwise_not(t: Tensor) -> Tensor:
    """~t: logical not for bool, two's complement for integers."""
    if t._dtype is _bool:
        return logical_not(t)
    if t._dtype.is_floating_point:
        raise DTypeError(f"bitwise_not(): not supported for floating-point dtype {t._dtype.name}")
    # All bits set: -1, or the largest value of an unsigned dtype (-1 is out of its range).
    return _binary(names.BINARY["bitwise_xor"], t, -1 if t._dtype.is_signed else 255)


def where(condition: Tensor, input: Any, other: Any) -> Tensor:
    """input where condition is true, other elsewhere (broadcast together)."""
    if not isinstance(condition, Tensor):
        raise TypeError("where(): argument 'condition' must be a Tensor")
    if condition._dtype is not _bool:
        raise DTypeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{condition._dtype.name}"
        )
    tensors = [x for x in (condition, input, other) if isinstance(x, Tensor)]
    dev = same_device("where", *tensors)
    shape = broadcast_shapes("where", *(t._shape for t in tensors))
    dt = _dtype.result_type(input, other)
    operands = []
    for value in (condition, input, other):
        if not isinstance(value, Tensor):
            value = full((), python_scalar(value, dt), dtype=dt, device=dev)
        value = cast(value, dt) if value is not condition else value
        if value._shape != shape:
            value = make_view(
                value, value._offset, shape, broadcast_strides(value._shape, value._strides, shape)
            )
        operands.append(value)
    out = empty_tensor(shape, dt, dev)
    _launch.launch_where(out, operands[0], operands[1], operands[2])
    if dt.is_floating_point and needs_grad(input, other):
        backward = unary_formulas.where_backward
        record("WhereBackward", backward, (condition, input, other), out, (condition,))
    return out


def clamp(t: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """Limit values to [min, max]; NaN stays NaN. min > max gives max everywhere."""
    if min is None and max is None:
        raise RuntimeError("clamp: At least one of 'min' or 'max' must not be None")
    result = _clamped(t, min, max)
    if result._dtype.is_floating_point and needs_grad(t, min, max):
        _record_clamp(t, min, max, result)
    return result


clip = clamp


def _clamped(t: Tensor, low: Any, high: Any) -> Tensor:
    """The values of clamp, computed without recording (clamp has its own formula)."""
    result = detached(t)
    if low is not None:
        result = _binary(names.BINARY["maximum"], result, detached(low))
    if high is not None:
        result = _binary(names.BINARY["minimum"], result, detached(high))
    return result


def _record_clamp(t: Tensor, low: Any, high: Any, result: Tensor) -> None:
    save = [x for x in (t, low, high) if isinstance(x, Tensor)]
    scalars = tuple(None if isinstance(x, Tensor) else x for x in (low, high))
    given = (low is not None, high is not None)
    backward = unary_formulas.clamp_backward
    record("ClampBackward", backward, (t, low, high), result, save, ctx=(scalars, given))


def clamp_(t: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """In place clamp."""
    if min is None and max is None:
        raise RuntimeError("clamp: At least one of 'min' or 'max' must not be None")
    result_dtype = _dtype.result_type(t, *(v for v in (min, max) if v is not None))
    if result_dtype is not t._dtype and result_dtype.category > t._dtype.category:
        # Checked before writing anything: a failing clamp_ leaves t untouched.
        raise RuntimeError(
            f"clamp_(): result type {result_dtype.name} can't be cast to the desired output "
            f"type {t._dtype.name}"
        )
    if not needs_grad(t, min, max):
        if min is not None:
            binary_general(names.BINARY["maximum"], t, min, t)
        if max is not None:
            binary_general(names.BINARY["minimum"], t, max, t)
        return t
    check_inplace(t)
    original = before_write(t)
    result = _clamped(original, min, max)
    if result._dtype is not t._dtype:
        raise RuntimeError(
            f"clamp_(): result type {result._dtype.name} can't be cast to the desired output "
            f"type {t._dtype.name}"
        )
    _record_clamp(original, min, max, result)
    write_back(t, result)
    return t
