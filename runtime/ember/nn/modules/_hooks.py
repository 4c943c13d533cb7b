"""Module hooks shared by every module: the global registries.

Every hook kind (global or per module) is a `HookRegistry`, run by the one loop of
`ember.utils.hooks.run_hooks`; each call site only says how to call one hook and what its
return may replace.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ember.utils.hooks import HookRegistry, RemovableHandle

__all__ = [
    "GLOBAL",
    "register_module_buffer_registration_hook",
    "register_module_forward_hook",
    "register_module_forward_pre_hook",
    "register_module_full_backward_hook",
    "register_module_full_backward_pre_hook",
    "register_module_module_registration_hook",
    "register_module_parameter_registration_hook",
]


class _GlobalHooks:
    """The hooks common to all modules (PyTorch's `_global_*_hooks` dictionaries)."""

    __slots__ = (
        "backward", "backward_pre", "buffer_registration", "forward", "forward_pre",
        "maybe_call_hooks", "module_registration", "parameter_registration",
    )  # fmt: skip

    def __init__(self) -> None:
        self.forward_pre = HookRegistry()
        self.forward = HookRegistry()
        self.backward_pre = HookRegistry()
        self.backward = HookRegistry()
        self.buffer_registration = HookRegistry()
        self.module_registration = HookRegistry()
        self.parameter_registration = HookRegistry()
        # True once a call-time hook was registered; cleared (under LOCK) by the first
        # module call that finds every call-time registry empty again.
        self.maybe_call_hooks = False

    def any_call_hooks(self) -> bool:
        return bool(self.forward_pre or self.forward or self.backward_pre or self.backward)


GLOBAL = _GlobalHooks()
# Registration sets the "maybe hooks" flags and a call clears them; the lock keeps a clear
# from racing with a registration in another thread (which would lose the new hook).
LOCK = threading.Lock()


def _add_global_call_hook(
    registry: HookRegistry, hook: Callable[..., Any], **flags: bool
) -> RemovableHandle:
    with LOCK:
        handle = registry.add(hook, **flags)
        GLOBAL.maybe_call_hooks = True
    return handle


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register `hook(module, args)` to run before every module's forward (before its own)."""
    return _add_global_call_hook(GLOBAL.forward_pre, hook)


def register_module_forward_hook(
    hook: Callable[..., Any], *, with_kwargs: bool = False, always_call: bool = False
) -> RemovableHandle:
    """Register `hook(module, args, output)` to run after every module's forward."""
    flags = {}
    if with_kwargs:
        flags["with_kwargs"] = True
    if always_call:
        flags["always_call"] = True
    return _add_global_call_hook(GLOBAL.forward, hook, **flags)


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register `hook(module, grad_output)` to run before every module's backward."""
    return _add_global_call_hook(GLOBAL.backward_pre, hook)


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register `hook(module, grad_input, grad_output)` to run after every module's backward."""
    return _add_global_call_hook(GLOBAL.backward, hook)


def register_module_buffer_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register `hook(module, name, buffer)`, run by every `register_buffer`; may replace it."""
    return GLOBAL.buffer_registration.add(hook)


def register_module_module_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register `hook(module, name, submodule)`, run whenever a submodule is registered."""
    return GLOBAL.module_registration.add(hook)


def register_module_parameter_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register `hook(module, name, param)`, run by every `register_parameter`."""
    return GLOBAL.parameter_registration.add(hook)
