"""`custom_op`: a new op from a typed Python function, dispatched like a built-in one.

A custom op is an `Op` in the same table as the built-in ones (`ember._dispatch.OPS`), so
kernels for it come from `register_kernel` and from plugins' `ember_kernels` hook alike,
and `explain` and `python -m ember info --ops` list it.

Calling it runs one generated function, written for the op's own parameters, so that a
call costs what a built-in op's does (see benchmarks/custom_ops.py):

1. the meta step: a key of the tensors' shapes, dtypes and devices (by identity: devices
   are interned, and their Python `__hash__` would cost more than the rest) and the other
   arguments; the first call with a key checks that the tensors share a device and runs
   the fake (`register_fake`), so that bad shapes fail before any kernel; later calls
   with that key only look it up;
2. the kernel of the first tensor's device type, else the default implementation;
3. autograd, when a tensor input requires grad: the backward of `register_autograd`, or
   a node whose backward says that none was registered;
4. the version counters of the arguments the op mutates.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from ember._device import device as Device
from ember._dispatch import OPS, Kernel, Op, define
from ember._tensor import Tensor
from ember.autograd._function import Function
from ember.library._call import CUSTOM_OPS, CustomOp, call_form, function_class, install_call
from ember.library._kernels import register_autograd, register_fake, register_kernel
from ember.library._schema import Kind, Param, Schema, infer_schema

__all__ = ["CUSTOM_OPS", "CustomOpDef", "custom_op"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*::[A-Za-z_][A-Za-z0-9_.]*")
_META_CACHE_LIMIT = 4096  # distinct argument keys kept per op; then the cache starts over


class CustomOpDef:
    """A custom op's definition: its schema, fake, autograd and dispatch state. Users hold
    its call function (`custom_op`'s result, `ember.ops.<namespace>.<name>`)."""

    name: str
    schema: Schema
    mutates_args: tuple[str, ...]

    def __init__(
        self,
        name: str,
        fn: Callable[..., Any],
        schema: Schema,
        mutates_args: tuple[str, ...],
        default: bool,
    ) -> None:
        self.name = name
        self.schema = schema
        self.mutates_args = mutates_args
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        self._default: Callable[..., Any] | None = fn if default else None
        self._fake: Callable[..., Any] | None = None
        self._function: type[Function] = _no_autograd_function(self)
        self._has_autograd = False
        self._checked: dict[Any, bool] = {}
        self._op: Op = OPS[name] if name in OPS else define(name, composite=default)
        self._call: CustomOp | None = None  # set by install_call

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        assert self._call is not None
        return self._call(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<ember custom op {self.schema}>"

    # -- registration (the library-level functions do the work) ---------------------------

    def register_kernel(
        self, device_type: str, fn: Kernel | None = None, *, priority: int = 0
    ) -> Any:
        """Add a kernel for one device type (see `ember.library.register_kernel`): a
        `KernelHandle`, or without `fn` a decorator returning one."""
        return register_kernel(self.name, device_type, fn, priority=priority)

    def register_fake(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Set the op's fake (shape and dtype inference); returns `fn` (a decorator)."""
        return register_fake(self.name, fn)

    def register_autograd(
        self, backward: Callable[..., Any], *, setup_context: Callable[..., Any] | None = None
    ) -> None:
        """Set the op's backward (see `ember.library.register_autograd`)."""
        register_autograd(self.name, backward, setup_context=setup_context)

    # -- the call's slow paths -------------------------------------------------------------

    def _tensors(self, args: tuple[Any, ...]) -> Iterable[Tensor]:
        for param, value in zip(self.schema.params, args, strict=True):
            if param.kind is Kind.TENSOR or (
                param.kind is Kind.OPTIONAL_TENSOR and value is not None
            ):
                yield value
            elif param.kind is Kind.TENSOR_LIST:
                yield from value

    def _device_of(self, args: tuple[Any, ...]) -> Device:
        for tensor in self._tensors(args):
            return tensor._device
        raise ValueError(f"{self.name}: no tensor among the arguments to dispatch on")

    def _first(self, key: Any, args: tuple[Any, ...]) -> Device:
        """The meta step's slow path: argument checks, one device, then the fake; records
        `key` (None: uncacheable) and returns the device to dispatch on."""
        for param, value in zip(self.schema.params, args, strict=True):
            _check_argument(self.name, param, value)
        devices = sorted({str(t._device) for t in self._tensors(args)})
        if len(devices) > 1:
            raise RuntimeError(
                f"{self.name}: expected all tensors to be on the same device, but found at "
                f"least two devices, {devices[0]} and {devices[1]}"
            )
        dev = self._device_of(args)
        self._kernel(dev)  # no kernel for the device: say so before the fake runs
        if self._fake is not None:
            positional, keywords = call_form(self.schema, args)
            _check_fake(self, self._fake(*positional, **keywords))
            if key is not None:
                if len(self._checked) >= _META_CACHE_LIMIT:
                    self._checked.clear()
                self._checked[key] = True
        return dev

    def _kernel(self, dev: Device) -> Kernel:
        fn = self._op.kernels.get(dev.type)
        if fn is not None:
            return fn
        if self._default is not None:
            return self._default
        have = sorted(self._op.kernels) or ["no device"]
        raise NotImplementedError(
            f"{self.name}: no kernel for device {dev}; it has kernels for {', '.join(have)} "
            "(register one with ember.library.register_kernel)"
        )

    def _run(self, args: tuple[Any, ...]) -> Any:
        """Kernel and version counters, from positional `args` (autograd's forward)."""
        fn = self._kernel(self._device_of(args))
        positional, keywords = call_form(self.schema, args)
        result = fn(*positional, **keywords)
        self._bump(args)
        return None if self.schema.returns is None else result

    def _bump(self, args: tuple[Any, ...]) -> None:
        for param, value in zip(self.schema.params, args, strict=True):
            if param.name in self.mutates_args and value is not None:
                for tensor in value if param.kind is Kind.TENSOR_LIST else (value,):
                    tensor._storage.version += 1


def _check_argument(op: str, param: Param, value: Any) -> None:
    ok = {
        Kind.TENSOR: lambda v: isinstance(v, Tensor),
        Kind.OPTIONAL_TENSOR: lambda v: v is None or isinstance(v, Tensor),
        Kind.TENSOR_LIST: lambda v: (
            isinstance(v, (list, tuple)) and all(isinstance(t, Tensor) for t in v)
        ),
    }.get(param.kind)
    if ok is not None and not ok(value):
        raise TypeError(
            f"{op}: argument {param.name!r} must be {param.kind.value}, not {type(value).__name__}"
        )


def _check_fake(op: CustomOpDef, result: Any) -> None:
    """The fake's outputs must be what the schema says the op returns."""
    returns = op.schema.returns
    if returns is None:
        if result is not None:
            raise RuntimeError(f"{op.name}: the fake returned {type(result).__name__}, not None")
        return
    outputs = result if isinstance(result, tuple) else (result,)
    if len(outputs) != len(returns) or not all(isinstance(t, Tensor) for t in outputs):
        raise RuntimeError(
            f"{op.name}: the fake returned {result!r}; the op returns {len(returns)} Tensor(s)"
        )


def _no_autograd_function(op: CustomOpDef) -> type[Function]:
    """The autograd function of an op with no registered backward: it records a node whose
    backward raises, as PyTorch's custom ops do, rather than dropping the gradient."""

    def forward(*args: Any) -> Any:
        return op._run(args)

    def backward(ctx: Any, *grads: Any) -> Any:
        raise RuntimeError(
            f"{op.name}: autograd is not registered for this op; register a backward with "
            "ember.library.register_autograd"
        )

    return function_class(op.name, forward, backward, None)


def custom_op(
    name: str,
    fn: Callable[..., Any] | None = None,
    /,
    *,
    mutates_args: Iterable[str] | str,
    device_types: str | Iterable[str] | None = None,
) -> Any:
    """Define the op `name` ("namespace::op") from a function with annotated parameters.

    `mutates_args` names the tensor parameters the op writes (required, as in PyTorch:
    `()` for a pure op). With `device_types=None`, `fn` is the op's default
    implementation, run on every device without a kernel of its own (written in ember
    ops it is a composite); otherwise `fn` becomes its kernel for those device types.
    Usable as a decorator, or called with `fn`. Returns the op: a function with the
    op's parameters, and `register_kernel`, `register_fake` and `register_autograd`.
    """

    def define_op(fn: Callable[..., Any]) -> CustomOp:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ValueError(f"custom_op: {name!r} is not a qualified name like 'mylib::my_op'")
        if name in CUSTOM_OPS or name in OPS:
            raise RuntimeError(f"custom_op: an op named {name!r} is already defined")
        mutated = (mutates_args,) if isinstance(mutates_args, str) else tuple(mutates_args)
        schema = infer_schema(name, fn)
        _check_mutations(schema, mutated)
        op = CustomOpDef(name, fn, schema, mutated, device_types is None)
        call = install_call(op)
        CUSTOM_OPS[name] = op
        if device_types is not None:
            for device_type in [device_types] if isinstance(device_types, str) else device_types:
                op.register_kernel(device_type, fn)
        return call

    return define_op if fn is None else define_op(fn)


def _check_mutations(schema: Schema, mutated: tuple[str, ...]) -> None:
    for arg in mutated:
        param = schema.param(arg)
        if param is None:
            raise ValueError(
                f"custom_op {schema.name}: mutates_args names {arg!r}, not a parameter"
            )
        if not param.is_tensor:
            raise ValueError(
                f"custom_op {schema.name}: mutates_args names {arg!r}, which is not a Tensor"
            )
    short = schema.name.rpartition("::")[2]
    if short.endswith("_") and not mutated:
        raise ValueError(
            f"custom_op {schema.name}: a name ending in '_' is an in-place op; declare the "
            "tensors it writes with mutates_args=(...)"
        )
    if schema.returns is None and not mutated:
        raise ValueError(
            f"custom_op {schema.name}: it returns nothing and mutates nothing; declare the "
            "tensors it writes with mutates_args=(...), or annotate its Tensor result"
        )
