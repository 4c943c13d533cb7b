"""A custom op's schema, read from its Python signature: what each parameter is, and what
the op returns.

The annotations are the schema (as in `torch.library.custom_op`): every parameter needs
one, from a small set of kinds, so that the runtime knows which arguments are tensors
(dispatch, the meta step's cache key, autograd) and which are plain values.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Union

from ember._device import device
from ember._dtype import dtype
from ember._tensor import Tensor

__all__ = ["Kind", "Param", "Schema", "infer_schema"]


class Kind(Enum):
    TENSOR = "Tensor"
    OPTIONAL_TENSOR = "Tensor?"
    TENSOR_LIST = "Tensor[]"
    VALUE = "value"  # int, float, bool, str, dtype, device (or None where optional)
    VALUE_LIST = "value[]"  # a sequence of ints, floats or bools


_VALUES = (int, float, bool, str, dtype, device)


@dataclass(frozen=True)
class Param:
    name: str
    kind: Kind
    default: Any  # inspect.Parameter.empty when required
    keyword_only: bool

    @property
    def is_tensor(self) -> bool:
        return self.kind is not Kind.VALUE and self.kind is not Kind.VALUE_LIST


@dataclass(frozen=True)
class Schema:
    name: str
    params: tuple[Param, ...]
    returns: tuple[Kind, ...] | None  # None: returns nothing (a mutating op)
    returns_tuple: bool  # several outputs, or one in a tuple/list

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def __str__(self) -> str:
        params = ", ".join(f"{p.kind.value} {p.name}" for p in self.params)
        if self.returns is None:
            returns = "()"
        elif self.returns_tuple:
            returns = "(" + ", ".join(k.value for k in self.returns) + ")"
        else:
            returns = self.returns[0].value
        return f"{self.name}({params}) -> {returns}"


def _kind(name: str, annotation: Any, where: str) -> Kind:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is Tensor:
        return Kind.TENSOR
    if origin in (Union, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        if rest == [Tensor]:
            return Kind.OPTIONAL_TENSOR
        if len(rest) == 1:
            inner = _kind(name, rest[0], where)
            if inner in (Kind.VALUE, Kind.VALUE_LIST):
                return inner
    if annotation in _VALUES:
        return Kind.VALUE
    if origin in (list, tuple, Sequence, typing.Sequence) and args:
        element = args[0]
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            element = args[0] if all(a is args[0] for a in args) else None
        if element is Tensor:
            return Kind.TENSOR_LIST
        if element in (int, float, bool):
            return Kind.VALUE_LIST
    raise ValueError(
        f"custom_op {where}: parameter {name!r} has an unsupported type {annotation!r}; "
        "supported: Tensor, Tensor | None, list[Tensor], int, float, bool, str, ember.dtype, "
        "ember.device (each optionally | None), and sequences of int, float or bool"
    )


def _returns(annotation: Any, where: str) -> tuple[tuple[Kind, ...] | None, bool]:
    if annotation is None or annotation is type(None):
        return None, False
    if annotation is Tensor:
        return (Kind.TENSOR,), False
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is tuple and args and all(a is Tensor for a in args):
        return (Kind.TENSOR,) * len(args), True
    raise ValueError(
        f"custom_op {where}: unsupported return type {annotation!r}; an op returns a Tensor, "
        "a tuple of Tensors, or None (when it only mutates its arguments)"
    )


def infer_schema(name: str, fn: Callable[..., Any]) -> Schema:
    """The schema of `fn`, which must annotate every parameter and its return."""
    signature = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn)
    except Exception as error:
        raise ValueError(f"custom_op {name}: cannot resolve the annotations: {error}") from error
    params = []
    for p in signature.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise ValueError(f"custom_op {name}: *args and **kwargs are not supported")
        if p.name not in hints:
            raise ValueError(f"custom_op {name}: parameter {p.name!r} needs a type annotation")
        kind = _kind(p.name, hints[p.name], name)
        params.append(Param(p.name, kind, p.default, p.kind is p.KEYWORD_ONLY))
    if "return" not in hints:
        raise ValueError(f"custom_op {name}: the return type needs an annotation")
    returns, returns_tuple = _returns(hints["return"], name)
    if not any(p.is_tensor for p in params):
        raise ValueError(f"custom_op {name}: an op takes at least one Tensor (to dispatch on)")
    return Schema(name, tuple(params), returns, returns_tuple)
