"""In-place forms of elementwise ops, by PyTorch's rules.

`apply_inplace(name, t, compute)` writes `compute(t)` into `t`: outside autograd straight
through a copy, inside it as PyTorch does (a leaf requiring grad, or a view of one, raises;
otherwise `t` continues the graph from the result's node and a view's base is rebased).
The result must keep t's shape and be castable to t's dtype without leaving its category
(float into int raises), checked before anything is written. The unary primitives and
composites of `ember._ops.unary` take their own in-place path (`unary_inplace`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._dispatch import Op
from ember._ops import _launch, names, unary
from ember._ops._binary_general import finish, output
from ember._tensor import Tensor
from ember.autograd._graph import before_write, check_inplace, needs_grad, write_back

__all__ = ["apply_inplace", "unary_inplace", "write_out"]


def _check_result(name: str, t: Tensor, result: Tensor) -> None:
    if result._shape != t._shape:
        raise RuntimeError(
            f"{name}(): output with shape {list(t._shape)} doesn't match the broadcast shape "
            f"{list(result._shape)}"
        )
    if result._dtype.category > t._dtype.category:
        raise RuntimeError(
            f"{name}(): result type {result._dtype.name} can't be cast to the desired output "
            f"type {t._dtype.name}"
        )


def apply_inplace(name: str, t: Any, compute: Callable[[Tensor], Tensor], *others: Any) -> Tensor:
    """t = compute(t), in place; `others` are the op's other operands (for autograd)."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): argument 'self' must be a Tensor, not {type(t).__name__}")
    if needs_grad(t, *others):
        check_inplace(t)
        result = compute(before_write(t))
        _check_result(name, t, result)
        write_back(t, result)
        return t
    result = compute(t)
    _check_result(name, t, result)
    _launch.copy(t, result)
    t._storage.version += 1
    return t


def unary_inplace(name: str) -> Callable[[Tensor], Tensor]:
    """`name_`, the in-place form of the unary op `name` of `ember._ops.names.UNARY`."""
    op: Op = names.UNARY[name]

    def function(input: Tensor) -> Tensor:
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}_(): argument 'input' must be a Tensor")
        if not input._dtype.is_floating_point and name in unary._FLOATING:
            raise RuntimeError(
                f"{name}_(): result type {unary._compute_dtype(op, input).name} can't be cast "
                f"to the desired output type {input._dtype.name}"
            )
        return unary._unary_inplace(op, input)

    function.__name__ = function.__qualname__ = name + "_"
    function.__doc__ = f"In place: input = {name}(input)."
    return function


def write_out(name: str, out: Tensor | None, result: Tensor) -> Tensor:
    """A composite's result, or that result written into `out=` by PyTorch's rules (its
    device and shape, a dtype of no lower category, no autograd)."""
    if out is None:
        return result
    if needs_grad(result):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )
    target = output(name, out, result._shape, result._dtype, result._device)
    _launch.copy(target, result)
    return finish(out, target)
