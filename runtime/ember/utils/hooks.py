"""Removable hook handles and the one hook-registry type that every hook kind uses."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any

__all__ = ["HookRegistry", "RemovableHandle"]

_ids = itertools.count()


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

    def run(self, value: Any, call: Callable[[Callable[..., Any], Any], Any]) -> Any:
        """Thread `value` through every hook: a hook returning non-None replaces it."""
        for hook, _ in self.items():
            result = call(hook, value)
            if result is not None:
                value = result
        return value
