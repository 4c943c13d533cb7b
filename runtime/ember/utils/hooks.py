"""Removable hook handles, the one hook-registry type that every hook kind uses, and the
one loop that runs hooks (`run_hooks`): modules, tensors, the autograd engine and optimizers
all go through it, each saying only how to call one hook."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any

__all__ = ["HookCall", "HookRegistry", "RemovableHandle", "run_hooks"]

_ids = itertools.count()

#: call(hook, flags, value) calls one hook; a non-None result replaces `value`.
HookCall = Callable[[Callable[..., Any], dict[str, bool], Any], Any]


class RemovableHandle:
    """Returned by every `register_*hook`; `remove()` unregisters the hook."""

    __slots__ = ("_registries", "id")

    def __init__(self, *registries: dict[int, Any]) -> None:
        self.id = next(_ids)
        self._registries = registries

    def remove(self) -> None:
        for registry in self._registries:
            registry.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.remove()


class HookRegistry:
    """Hooks in registration order (or prepended), with per-hook flags.

    A registry is falsy when empty, so a call site with no hooks pays one truth test.
    """

    __slots__ = ("_flags", "_hooks")

    def __init__(self) -> None:
        self._hooks: dict[int, Callable[..., Any]] = {}
        self._flags: dict[int, dict[str, bool]] = {}

    def add(
        self, hook: Callable[..., Any], *, prepend: bool = False, **flags: bool
    ) -> RemovableHandle:
        """Register `hook`; keyword flags (with_kwargs, always_call) are kept beside it."""
        handle = RemovableHandle(self._hooks, self._flags)
        if prepend:
            # Rebuilt in place: earlier handles keep referring to this same dict.
            rest = list(self._hooks.items())
            self._hooks.clear()
            self._hooks[handle.id] = hook
            self._hooks.update(rest)
        else:
            self._hooks[handle.id] = hook
        if flags:
            self._flags[handle.id] = flags
        return handle

    def __bool__(self) -> bool:
        return bool(self._hooks)

    def __len__(self) -> int:
        return len(self._hooks)

    def items(self) -> Iterator[tuple[Callable[..., Any], dict[str, bool]]]:
        """(hook, flags) pairs, in call order; safe against hooks removing themselves."""
        for key, hook in list(self._hooks.items()):
            yield hook, self._flags.get(key, {})

    def run(self, value: Any, call: HookCall) -> Any:
        """Thread `value` through this registry's hooks (see `run_hooks`)."""
        return run_hooks(value, call, self)

    def call_each(self, *args: Any) -> None:
        """Call every hook with `args`, for its side effects (results are ignored)."""
        for hook, _ in self.items():
            hook(*args)

    @classmethod
    def merged(cls, *registries: HookRegistry) -> HookRegistry:
        """A snapshot of the hooks of `registries`, in order (flags kept)."""
        merged = cls()
        for registry in registries:
            merged._hooks.update(registry._hooks)
            merged._flags.update(registry._flags)
        return merged


def run_hooks(value: Any, call: HookCall, *registries: HookRegistry) -> Any:
    """Thread `value` through the hooks of `registries`, in order.

    `call(hook, flags, value)` calls one hook; a non-None result replaces `value` (the call
    may validate or reshape it first, e.g. wrap a pre-hook's single argument in a tuple).
    """
    for registry in registries:
        if not registry:
            continue
        # items() snapshots the registry, so a hook may remove itself while running.
        for hook, flags in registry.items():
            result = call(hook, flags, value)
            if result is not None:
                value = result
    return value
