"""Kernels of the planned families, on strided NumPy views of storages built from plans;
elementwise ones rendered from the NumPy column of `ember.plugins.expressions`."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ember.plugins import expressions, ops, special_numpy
from ember.plugins.sdk import ElementwisePlan, MatmulPlan, ReductionPlan, Scalar, Storage, dtype

Kernel = Callable[..., None]


def array(storage: Storage, dt: dtype, offset: int, shape: Any, strides: Any) -> np.ndarray:
    """The elements of `storage` at `offset`, `shape` and `strides` (all in elements)."""
    size = dt.itemsize
    return np.ndarray(shape, dt.numpy, storage.handle, offset * size, [s * size for s in strides])


def _operand(x: Storage | Scalar, plan: ElementwisePlan | MatmulPlan, i: int) -> np.ndarray:
    """Operand i of a plan, in its compute type (float16 and bfloat16 compute in float32, as
    {T} in C)."""
    dt = plan.dtypes[i]
    compute = np.float32 if dt.name in ("float16", "bfloat16") else dt.numpy
    if isinstance(x, Storage):
        shape = plan.shapes[i] if isinstance(plan, MatmulPlan) else plan.shape
        view = array(x, dt, plan.offsets[i], shape, plan.strides[i])
        return view if i == 0 else view.astype(compute, copy=False)
    return np.asarray(x, compute)


def elementwise(select: Callable[[ElementwisePlan], Callable[..., Any]]) -> Kernel:
    """The kernel `out = f(inputs...)`, where f = select(plan)."""

    def kernel(out: Storage, *operands: Any) -> None:
        *inputs, plan = operands
        with np.errstate(all="ignore"):  # overflow, NaN and inf are values here, not errors
            result = select(plan)(*(_operand(x, plan, i) for i, x in enumerate(inputs, 1)))
            np.copyto(_operand(out, plan, 0), result, casting="unsafe")

    return kernel


def _compile(expression: str, arguments: str) -> Callable[..., Any]:
    code = compile(f"lambda {arguments}: {expression}", f"<numpy: {expression}>", "eval")
    names = {"np": np, "math": math, "special": special_numpy}
    return eval(code, names)  # the runtime's own table, never user input


def rendered(cells: dict[str, str], arguments: str) -> Kernel:
    """The kernel of one row of the table (unary: arguments "x"; binary: "a, b")."""
    functions = {family: _compile(expression, arguments) for family, expression in cells.items()}
    return elementwise(lambda plan: functions[expressions.family(plan.dtypes[1].name)])


def _reduction(reduce: Callable[[np.ndarray, Any, Any], Any], scan: bool = False) -> Kernel:
    """A kernel over (kept..., reduced...) views; float sums accumulate in float64."""

    def kernel(out: Storage, a: Storage, plan: ReductionPlan) -> None:
        shape, strides = plan.kept + plan.reduced, plan.kept_strides + plan.reduced_strides
        x = array(a, plan.dtypes[1], plan.offsets[1], shape, strides)
        strides = plan.kept_out_strides + (plan.reduced_out_strides if scan else ())
        o = array(out, plan.dtypes[0], plan.offsets[0], shape[: len(strides)], strides)
        accumulator = np.float64 if plan.dtypes[0].is_floating_point else o.dtype
        with np.errstate(all="ignore"):
            result = reduce(x, tuple(range(len(plan.kept), x.ndim)), accumulator)
            np.copyto(o, result, casting="unsafe")

    return kernel


_conversion = functools.cache(lambda dst, src: _compile(expressions.numpy_convert(dst, src), "x"))
RENDERED = {name: rendered(cells, "x") for name, cells in expressions.NUMPY_UNARY.items()}
RENDERED.update({name: rendered(c, "a, b") for name, c in expressions.NUMPY_BINARY.items()})
KERNELS: dict[str, Kernel] = {
    # copy_ casts as C does (expressions.numpy_convert), compiled once per dtype pair.
    ops.COPY: elementwise(lambda plan: _conversion(plan.dtypes[0].name, plan.dtypes[1].name)),
    ops.FILL: lambda dst, value, plan: _operand(dst, plan, 0).fill(value),
    ops.WHERE: elementwise(lambda plan: np.where),
    "sum": _reduction(lambda x, axes, accumulator: np.sum(x, axes, accumulator)),
    "prod": _reduction(lambda x, axes, accumulator: np.prod(x, axes, accumulator)),
    "amax": _reduction(lambda x, axes, _: np.max(x, axes)),  # NaN propagates
    "amin": _reduction(lambda x, axes, _: np.min(x, axes)),
    "any": _reduction(lambda x, axes, _: np.any(x, axes)),
    "all": _reduction(lambda x, axes, _: np.all(x, axes)),
    # The first extreme, and a NaN before any number, as PyTorch.
    ops.ARGMAX: _reduction(lambda x, axes, _: np.argmax(x, -1)),
    ops.ARGMIN: _reduction(lambda x, axes, _: np.argmin(x, -1)),
    ops.CUMSUM: _reduction(lambda x, axes, accumulator: np.cumsum(x, -1, accumulator), True),
    ops.BMM: elementwise(lambda plan: np.matmul),  # and mm, a composite: a batch of one
}
