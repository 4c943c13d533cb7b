"""The classes and functions a checkpoint may name: PyTorch's trust model for
`weights_only=True`, as `add_safe_globals` / `safe_globals` / `get_safe_globals` /
`clear_safe_globals`.

Loading a checkpoint never imports or calls anything because the file says so. A file
names a global (a class to rebuild, a function it refers to) by its dotted path, and the
loader resolves the path only against this list: Ember's built-in entries (containers,
tensors, dtypes, devices, Ember's own `nn.Module` classes) and what the user allow-listed.
Anything else is refused with `pickle.UnpicklingError` naming the global and the call that
would allow it.
"""

from __future__ import annotations

import contextlib
import pickle
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = [
    "CheckpointRefused",
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "global_path",
    "refuse",
    "safe_globals",
    "user_global",
]


class CheckpointRefused(pickle.UnpicklingError, RuntimeError):
    """A checkpoint names something Ember will not rebuild: `pickle.UnpicklingError` as
    PyTorch's `weights_only` loader raises, and a `RuntimeError` like every other
    checkpoint that cannot be loaded."""


# path -> object, in the order the user added them.
_USER: dict[str, Any] = {}


def global_path(obj: Any) -> str:
    """`module.qualname` of a class or function, the name checkpoints use for it."""
    return f"{obj.__module__}.{obj.__qualname__}"


def add_safe_globals(safe_globals: Iterable[Any]) -> None:
    """Allow checkpoints to name these classes and functions (each an object, or an
    `(object, "module.name")` pair for an object reachable under another name)."""
    for entry in safe_globals:
        if isinstance(entry, tuple):
            if len(entry) != 2 or not isinstance(entry[1], str):
                raise TypeError(
                    "add_safe_globals: a tuple entry must be (object, 'module.name'), got "
                    f"{entry!r}"
                )
            obj, path = entry
        else:
            obj, path = entry, None
        if not (hasattr(obj, "__module__") and hasattr(obj, "__qualname__")):
            raise TypeError(
                f"add_safe_globals: {obj!r} is not a class or function (it has no "
                "__module__ and __qualname__)"
            )
        _USER[path or global_path(obj)] = obj


def get_safe_globals() -> list[Any]:
    """The user's allow-list, as `add_safe_globals` received it."""
    return [obj if path == global_path(obj) else (obj, path) for path, obj in _USER.items()]


def clear_safe_globals() -> None:
    """Forget every global the user allow-listed."""
    _USER.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: Iterable[Any]) -> Iterator[None]:
    """Allow these globals within the `with` block only."""
    saved = dict(_USER)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _USER.clear()
        _USER.update(saved)


def user_global(path: str) -> Any | None:
    """The allow-listed object under `path`, or None."""
    return _USER.get(path)


def refuse(path: str, file: str, what: str = "global") -> CheckpointRefused:
    """The error for a checkpoint that names a global nobody allowed."""
    return CheckpointRefused(
        f"ember.load: {file} names the {what} {path}, which is not allow-listed, so it was "
        "not loaded (ember.load never imports or runs what a checkpoint names). If you "
        "trust this file and the code it names, allow it with "
        f"ember.serialization.add_safe_globals([{path.rsplit('.', 1)[-1]}]) or within "
        f"`with ember.serialization.safe_globals([{path.rsplit('.', 1)[-1]}]):`"
    )
