"""A custom op's call: the table of custom ops, the generated `__call__` and the autograd
function class that `register_autograd` builds."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Protocol

from ember._cdispatch import OpCall
from ember._device import device as Device
from ember._tensor import Tensor
from ember.autograd._function import Function
from ember.autograd._mode import STATE
from ember.library._schema import Kind, Schema

if TYPE_CHECKING:
    from ember.library._custom_op import CustomOpDef

__all__ = ["CUSTOM_OPS", "CustomOp", "call_form", "function_class", "install_call"]

#: name -> definition, for `ember.ops.<namespace>.<name>` and the registry's checks
CUSTOM_OPS: dict[str, CustomOpDef] = {}

_EMPTY = inspect.Parameter.empty


def call_form(schema: Schema, args: tuple[Any, ...]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    positional = tuple(a for p, a in zip(schema.params, args, strict=True) if not p.keyword_only)
    keywords = {p.name: a for p, a in zip(schema.params, args, strict=True) if p.keyword_only}
    return positional, keywords


def function_class(
    name: str,
    forward: Callable[..., Any],
    backward: Callable[..., Any],
    setup_context: Callable[..., Any] | None,
) -> type[Function]:
    def setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        if setup_context is not None:
            setup_context(ctx, inputs, output)

    title = "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", name) if part)
    namespace = {
        "forward": staticmethod(forward),
        "setup_context": staticmethod(setup),
        "backward": staticmethod(backward),
    }
    return type(title, (Function,), namespace)


class CustomOp(Protocol):
    """What `custom_op` returns: a function (the op's call, generated for its parameters,
    so that calling it costs one Python frame) carrying the op's registration methods."""

    name: str
    schema: Schema
    definition: CustomOpDef
    __wrapped__: Callable[..., Any]

    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def register_kernel(
        self, device_type: str, fn: Callable[..., Any] | None = None, *, priority: int = 0
    ) -> Any: ...
    def register_fake(self, fn: Callable[..., Any]) -> Callable[..., Any]: ...
    def register_autograd(
        self, backward: Callable[..., Any], *, setup_context: Callable[..., Any] | None = None
    ) -> None: ...


def install_call(op: CustomOpDef) -> CustomOp:
    """Write the op's call, or rewrite it in place when what it must check changes
    (`register_fake` adds the meta step's key).

    The call is an `OpCall` (C, `_cdispatch.c`): its fast path takes positional calls on
    tensors outside autograd that share a device (and whose key is checked, with a fake),
    and everything else goes to the generated Python function, which does it all."""
    source, scope = _call_source(op)
    name = op.name.rpartition("::")[2]
    code = compile(source, f"<custom op {op.name}>", "exec")
    namespace: dict[str, Any] = {}
    call: Any = op._call
    if call is not None:
        exec(code, call.fallback.__globals__, namespace)
        call.fallback.__code__ = namespace[name].__code__
        call.use_key = op._fake is not None
        return call
    exec(code, scope, namespace)
    fallback = namespace[name]
    fallback.__qualname__ = op.name
    kinds = tuple(_FAST_KINDS.get(p.kind, -1) for p in op.schema.params)
    fast = not op.mutates_args and -1 not in kinds and _TENSOR in kinds
    call = OpCall(
        fallback, op._op, op._default, op._checked, Tensor, Device, kinds if fast else (), fast
    )
    call.use_key = op._fake is not None
    call.__qualname__ = call.__name__ = op.name
    call.__module__ = op.__wrapped__.__module__
    call.__doc__ = op.__wrapped__.__doc__
    call.__wrapped__ = op.__wrapped__
    call.name, call.schema, call.definition = op.name, op.schema, op
    call.register_kernel = op.register_kernel
    call.register_fake = op.register_fake
    call.register_autograd = op.register_autograd
    op._call = call
    return call


# The parameter kinds the C fast path takes (its codes); others always use the fallback.
_TENSOR: Final = 0
_FAST_KINDS: Final = {Kind.TENSOR: _TENSOR, Kind.VALUE: 1}


def _call_source(op: CustomOpDef) -> tuple[str, dict[str, Any]]:
    """The call's source and globals. The hot path checks that every tensor is on the
    first one's device by identity, and, when the op has a fake, looks the call's key up;
    anything else (a new key, a wrong argument, mixed devices) goes to `_first`, which
    raises or records the key."""
    params = op.schema.params
    signature, call, key, same, grads = [], [], [], [], []
    tensors = [p for p in params if p.kind is Kind.TENSOR]
    first = tensors[0] if tensors else None
    for p in params:
        n = p.name
        signature.append(n if p.default is _EMPTY else f"{n}=_defaults[{n!r}]")
        call.append(f"{n}={n}" if p.keyword_only else n)
        if p.kind is Kind.TENSOR:
            key.append(f"{n}._shape, {n}._dtype")
            grads.append(f"{n}._autograd is None")
            if p is not first:
                same.append(f"{n}._device is dev")
        elif p.kind is Kind.OPTIONAL_TENSOR:
            key.append(f"None if {n} is None else ({n}._shape, {n}._dtype)")
            grads.append(f"({n} is None or {n}._autograd is None)")
            same.append(f"({n} is None or {n}._device is dev)")
        elif p.kind is Kind.TENSOR_LIST:
            key.append(f"tuple((t._shape, t._dtype) for t in {n})")
            grads.append(f"all(t._autograd is None for t in {n})")
            same.append(f"all(t._device is dev for t in {n})")
        else:
            key.append(f"tuple({n})" if p.kind is Kind.VALUE_LIST else n)
    first_keyword = next((i for i, p in enumerate(params) if p.keyword_only), None)
    if first_keyword is not None:
        signature.insert(first_keyword, "*")
    args = f"({', '.join(p.name for p in params)},)"
    dev = f"{first.name}._device" if first is not None else f"definition._device_of({args})"
    fake = op._fake is not None
    checks = [*same, "key in checked"] if fake else same
    lines = [
        f"def {op.name.rpartition('::')[2]}({', '.join(signature)}):",
        "    key = None",
        "    try:",
        f"        dev = {dev}",
        f"        key = ({', '.join(key)},)" if fake else "        pass",
        f"        ok = {' and '.join(checks) or 'True'}",
        "    except (AttributeError, TypeError):  # not a tensor, or an unhashable argument",
        "        ok = False",
        "    if not ok:",
        f"        dev = definition._first(key, {args})",
        "    fn = op.kernels.get(dev.type) or default or definition._kernel(dev)",
        # Tensors outside autograd (the common case) answer before the thread's grad mode.
        f"    if not ({' and '.join(grads)}) and STATE.enabled:",
        f"        return definition._function.apply(*{args})",
    ]
    if op.mutates_args:
        lines += [f"    result = fn({', '.join(call)})", f"    definition._bump({args})"]
        lines.append("    return None" if op.schema.returns is None else "    return result")
    elif op.schema.returns is None:
        lines += [f"    fn({', '.join(call)})", "    return None"]
    else:
        lines.append(f"    return fn({', '.join(call)})")
    scope: dict[str, Any] = {
        "checked": op._checked,
        "op": op._op,
        "default": op._default,
        "definition": op,
        "STATE": STATE,
        "_defaults": {p.name: p.default for p in params if p.default is not _EMPTY},
    }
    return "\n".join(lines) + "\n", scope
