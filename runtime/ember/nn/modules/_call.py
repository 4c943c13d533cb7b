"""A module call with hooks, in PyTorch's order.

global forward pre-hooks, module forward pre-hooks, (backward hooks wired onto the
inputs), forward, global forward hooks, module forward hooks, (backward hooks wired onto
the output). If anything raises, the `always_call` forward hooks that have not run yet run
(global first), their own errors turned into warnings, and the error propagates.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from ember._tensor import Tensor
from ember.nn.modules._backward_hook import BackwardHook
from ember.nn.modules._hooks import GLOBAL, LOCK
from ember.utils.hooks import HookRegistry, run_hooks

if TYPE_CHECKING:
    from ember.nn.modules.module import Module

__all__ = ["call_with_hooks"]


class _Call:
    """The state of one call, shared by the hook callbacks and the error path."""

    __slots__ = ("args", "called", "kwargs", "module", "result")

    def __init__(self, module: Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.module = module
        self.args = args
        self.kwargs = kwargs
        self.result: Any = None
        # The flags dicts (one per registered hook) of the always_call hooks that already ran.
        self.called: list[dict[str, bool]] = []

    def pre_hook(self, hook: Any, flags: dict[str, bool], value: Any) -> Any:
        if flags.get("with_kwargs"):
            result = hook(self.module, self.args, self.kwargs)
            if result is None:
                return None
            if not (isinstance(result, tuple) and len(result) == 2):
                raise RuntimeError(
                    "forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                    f"but got {result}."
                )
            self.args, self.kwargs = result
            return result
        result = hook(self.module, self.args)
        if result is None:
            return None
        self.args = result if isinstance(result, tuple) else (result,)
        return self.args

    def forward_hook(self, hook: Any, flags: dict[str, bool], value: Any) -> Any:
        if flags.get("always_call"):
            self.called.append(flags)
        if flags.get("with_kwargs"):
            result = hook(self.module, self.args, self.kwargs, self.result)
        else:
            result = hook(self.module, self.args, self.result)
        if result is not None:
            self.result = result
        return result

    def run(self) -> Any:
        module = self.module
        # Snapshots: the hooks registered when the module was called run in its backward.
        backward_pre = HookRegistry.merged(GLOBAL.backward_pre, module._backward_pre_hooks)
        backward = HookRegistry.merged(GLOBAL.backward, module._backward_hooks)
        run_hooks(None, self.pre_hook, GLOBAL.forward_pre, module._forward_pre_hooks)
        bw_hook = None
        if backward or backward_pre:
            bw_hook = BackwardHook(module, backward, backward_pre)
            self.args = bw_hook.setup_input_hook(self.args)
        self.result = module.forward(*self.args, **self.kwargs)
        run_hooks(None, self.forward_hook, GLOBAL.forward, module._forward_hooks)
        if bw_hook is not None:
            if not isinstance(self.result, (Tensor, tuple)):
                warnings.warn(
                    "For backward hooks to be called, module output should be a Tensor or a "
                    f"tuple of Tensors but received {type(self.result)}",
                    stacklevel=4,
                )
            self.result = bw_hook.setup_output_hook(self.result)
        return self.result

    def run_always_called(self) -> None:
        for registry, kind in (
            (GLOBAL.forward, "global module forward hook"),
            (self.module._forward_hooks, "module forward hook"),
        ):
            for hook, flags in registry.items():
                if not flags.get("always_call") or any(f is flags for f in self.called):
                    continue
                try:
                    self.forward_hook(hook, flags, self.result)
                except Exception as e:
                    warnings.warn(
                        f"{kind} with ``always_call=True`` raised an exception that was "
                        f"silenced as another error was raised in forward: {e}",
                        stacklevel=4,
                    )


def _has_call_hooks(module: Module) -> bool:
    return bool(
        module._forward_pre_hooks
        or module._forward_hooks
        or module._backward_pre_hooks
        or module._backward_hooks
    )


def _clear_stale_flags(module: Module) -> None:
    """Clear the "maybe hooks" flags: no call-time hook is registered any more."""
    with LOCK:
        # Re-checked under the lock: a registration in another thread may have just landed.
        if not GLOBAL.any_call_hooks():
            GLOBAL.maybe_call_hooks = False
        if not _has_call_hooks(module):
            module.__dict__["_maybe_call_hooks"] = False


def call_with_hooks(module: Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """`module(*args, **kwargs)` when some call-time hook may be registered."""
    if not (_has_call_hooks(module) or GLOBAL.any_call_hooks()):
        _clear_stale_flags(module)
        return module.forward(*args, **kwargs)
    call = _Call(module, args, kwargs)
    try:
        return call.run()
    except Exception:
        call.run_always_called()
        raise
