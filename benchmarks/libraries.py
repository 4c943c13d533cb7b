"""The three libraries side by side: import, wrap NumPy inputs, read results, set threads."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Final

import numpy as np
from threadpoolctl import (  # type: ignore[import-untyped]  # ships no type information
    threadpool_info,
    threadpool_limits,
)

from benchmarks.harness import describe_error

__all__ = ["LIBRARY_NAMES", "Library", "load_libraries", "set_threads"]

LIBRARY_NAMES: Final = ("ember", "torch", "numpy")

# The name each library's statements use for its module.
_ALIASES: Final = {"ember": "ember", "torch": "torch", "numpy": "np"}


@dataclass
class Library:
    """One library under test; `module` is None when it failed to import (see `error`)."""

    name: str
    module: ModuleType | None
    version: str | None
    error: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def alias(self) -> str:
        """The module's name inside benchmark statements (`np` for NumPy)."""
        return _ALIASES[self.name]

    def wrap(self, array: np.ndarray) -> Any:
        """The library's array for a NumPy input (a private copy; Ember/torch share it)."""
        copy = np.array(array, copy=True)
        if self.name == "numpy":
            return copy
        assert self.module is not None
        return self.module.from_numpy(copy)

    def to_numpy(self, value: Any) -> np.ndarray:
        """A result as a NumPy array, for checking it against the NumPy reference."""
        if self.name == "numpy":
            return np.asarray(value)
        return np.asarray(value.numpy())

    def thread_count(self) -> int | None:
        """The intra-op thread count the library reports (None for NumPy: see threadpoolctl)."""
        if self.module is None or self.name == "numpy":
            return None
        return int(self.module.get_num_threads())


def load_libraries(names: tuple[str, ...] = LIBRARY_NAMES) -> dict[str, Library]:
    """Import each library; a failure is recorded, never raised."""
    libraries: dict[str, Library] = {}
    for name in names:
        try:
            module = importlib.import_module(name)
        except Exception as error:  # any import failure is recorded
            libraries[name] = Library(name, None, None, error=describe_error(error))
            continue
        libraries[name] = Library(name, module, str(getattr(module, "__version__", "?")))
    ember = libraries.get("ember")
    if ember is not None and ember.module is not None:
        ember.notes.extend(_ember_plugin_notes(ember.module))
    return libraries


def set_threads(count: int, libraries: dict[str, Library]) -> dict[str, Any]:
    """Give every library (and every BLAS/OpenMP pool loaded) `count` threads; report them.

    threadpoolctl first, so that the libraries' own setters have the last word on the pools
    they own; NumPy has no setter of its own, its elementwise loops are single-threaded and
    its BLAS (OpenBLAS) obeys threadpoolctl.
    """
    report: dict[str, Any] = {"requested": count}
    threadpool_limits(limits=count)
    for library in libraries.values():
        if library.module is None or library.name == "numpy":
            continue
        try:
            library.module.set_num_threads(count)
            report[library.name] = library.thread_count()
        except Exception as error:  # reported, not fatal
            report[library.name] = f"error: {describe_error(error)}"
    report["pools"] = [
        {key: pool.get(key) for key in ("internal_api", "prefix", "num_threads", "filepath")}
        for pool in threadpool_info()
    ]
    return report


def _ember_plugin_notes(ember: ModuleType) -> list[str]:
    """One line per Ember plugin that did not load, so an all-error column explains itself."""
    try:
        statuses = ember.plugins.status()
    except Exception as error:  # discovery may be broken
        return [f"ember.plugins.status() failed: {describe_error(error)}"]
    return [
        f"plugin {status.name}: {status.status} ({status.error})"
        for status in statuses
        if status.status != "loaded"
    ]
