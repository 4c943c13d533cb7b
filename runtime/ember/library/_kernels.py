"""Registering kernels, fakes and backwards, with the checks that make a bad registration
fail when it is made rather than when the op runs."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ember._dispatch import OPS, REGISTRY, Entry, Kernel
from ember.library._call import CUSTOM_OPS, function_class, install_call
from ember.plugins._manager import MANAGER

if TYPE_CHECKING:
    from ember.library._call import CustomOp
    from ember.library._custom_op import CustomOpDef

__all__ = [
    "KernelHandle", "register_autograd", "register_fake", "register_kernel", "registrant",
    "resolve",
]  # fmt: skip


class KernelHandle:
    """A registered kernel: call it as the kernel, `remove()` it to restore the previous
    one (the registration a plugin or an earlier call made)."""

    def __init__(self, entry: Entry) -> None:
        self.entry = entry
        self.__wrapped__ = entry.kernel

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.entry.kernel(*args, **kwargs)

    def remove(self) -> None:
        if REGISTRY.remove(self.entry):
            REGISTRY.freeze()

    def __repr__(self) -> str:
        e = self.entry
        return f"<kernel {e.op} on {e.device_type} from {e.plugin}, priority {e.priority}>"


def resolve(op: str | CustomOp) -> str:
    """The registry name of `op` (a name, or a custom op)."""
    MANAGER.ensure_loaded()  # plugins define their ops when they load
    name = op if isinstance(op, str) else getattr(op, "name", op)
    if not isinstance(name, str):
        raise TypeError(f"expected an op name or a custom op, not {type(op).__name__}")
    if name not in OPS:
        raise ValueError(f"unknown op {name!r}: neither built in nor defined with custom_op")
    return name


def register_kernel(
    op: str | CustomOp,
    device_type: str,
    fn: Kernel | None = None,
    /,
    *,
    priority: int = 0,
) -> Any:
    """Add or override the kernel of `op` (built in or custom) on `device_type`.

    The kernel in use for an (op, device type) is the registration with the highest
    `priority`, then the latest; a tie between two plugins or libraries is reported once
    (a KernelConflictWarning, and `python -m ember info`). Returns a `KernelHandle`
    (`remove()` restores the previous kernel); without `fn`, a decorator that returns one.
    """
    name = resolve(op)
    MANAGER.ensure_loaded()
    _check_device_type(name, device_type)

    def register(kernel: Kernel) -> KernelHandle:
        if not callable(kernel):
            raise TypeError(
                f"register_kernel: the kernel for {name} on {device_type} is not callable"
            )
        _check_signature(name, device_type, kernel)
        entry = REGISTRY.add(name, device_type, kernel, registrant(kernel), priority=priority)
        REGISTRY.freeze()
        return KernelHandle(entry)

    return register if fn is None else register(fn)


def register_fake(op: str | CustomOp, fn: Callable[..., Any] | None = None, /) -> Any:
    """Set a custom op's fake: called with the op's arguments on the first call of each
    distinct combination of shapes, dtypes, devices and other arguments, before any
    kernel, it raises for bad inputs and returns outputs of the right shape and dtype
    (e.g. `ember.empty_like(x)`). It reads only metadata, never data."""
    custom = _custom(op, "register_fake")

    def register(fake: Callable[..., Any]) -> Callable[..., Any]:
        _check_binds(custom, fake, "register_fake: the fake")
        custom._fake = fake
        custom._checked.clear()
        install_call(custom)
        return fake

    return register if fn is None else register(fn)


def register_autograd(
    op: str | CustomOp,
    backward: Callable[..., Any],
    /,
    *,
    setup_context: Callable[..., Any] | None = None,
) -> None:
    """Make a custom op differentiable: `setup_context(ctx, inputs, output)` saves what
    `backward(ctx, *grad_outputs)` needs; backward returns one gradient per input (None
    for non-tensors), as `ember.autograd.Function` does."""
    custom = _custom(op, "register_autograd")
    if custom.mutates_args:
        raise RuntimeError(
            f"register_autograd: {custom.name} mutates {', '.join(custom.mutates_args)}; "
            "autograd of mutating custom ops is not supported"
        )
    for what, fn, count in (("backward", backward, 2), ("setup_context", setup_context, 3)):
        if fn is not None and not _accepts(fn, count):
            raise TypeError(
                f"register_autograd: {custom.name}'s {what} must take {count} arguments"
            )

    def forward(*args: Any) -> Any:
        return custom._run(args)

    custom._function = function_class(custom.name, forward, backward, setup_context)
    custom._has_autograd = True


def _custom(op: str | CustomOp, what: str) -> CustomOpDef:
    MANAGER.ensure_loaded()
    custom = CUSTOM_OPS.get(op if isinstance(op, str) else getattr(op, "name", ""))
    if custom is None:
        raise ValueError(f"{what}: {op!r} is not a custom op (define it with custom_op)")
    return custom


def registrant(kernel: Kernel) -> str:
    """Who supplied a kernel registered through ember.library: its top-level package."""
    module = getattr(kernel, "__module__", None) or "<unknown>"
    return module.partition(".")[0]


def _check_device_type(name: str, device_type: str) -> None:
    known = sorted(MANAGER.device_types)
    if device_type not in known:
        raise ValueError(
            f"register_kernel: unknown device type {device_type!r} for {name} (known: "
            f"{', '.join(known) or 'none'}); a device type is known once its plugin is installed"
        )


def _check_signature(name: str, device_type: str, kernel: Kernel) -> None:
    custom = CUSTOM_OPS.get(name)
    if custom is not None:
        _check_binds(custom, kernel, f"register_kernel: the {device_type} kernel")
        return
    # A built-in op: its kernels' family signature is whatever the existing kernels take.
    for entry in (e for dt in sorted(OPS[name].kernels) for e in REGISTRY.entries(name, dt)):
        count = _positional_count(entry.kernel)
        if count is not None:
            if not _accepts(kernel, count):
                raise TypeError(
                    f"register_kernel: {name}'s kernels take {count} arguments "
                    f"(as {entry.plugin}'s on {entry.device_type} does); "
                    f"{getattr(kernel, '__qualname__', kernel)!r} does not"
                )
            return


def _check_binds(custom: CustomOpDef, fn: Callable[..., Any], what: str) -> None:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # a builtin without a signature: checked when it runs
    positional = [p.name for p in custom.schema.params if not p.keyword_only]
    keywords = {p.name: p.name for p in custom.schema.params if p.keyword_only}
    try:
        signature.bind(*positional, **keywords)
    except TypeError as error:
        raise TypeError(
            f"{what} for {custom.name} does not take the op's parameters ({custom.schema}): {error}"
        ) from None


def _positional_count(fn: Callable[..., Any]) -> int | None:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return sum(
        p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        for p in params
    )


def _accepts(fn: Callable[..., Any], count: int) -> bool:
    try:
        inspect.signature(fn).bind(*range(count))
    except TypeError:
        return False
    except ValueError:
        return True  # no signature to read
    return True
