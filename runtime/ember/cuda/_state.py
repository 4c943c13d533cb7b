"""Whether Ember's cuda device can run here, and the reason when it cannot.

Answers come from the installed device plugins (the plugin manager), never from guessing:
the plugin may be missing, or installed without a usable GPU/driver (its probe's reason).
"""

from __future__ import annotations

from typing import NoReturn

import ember._device as _device_state
from ember._device import device
from ember.plugins._manager import MANAGER

__all__ = [
    "count",
    "current_index",
    "require",
    "resolve",
    "set_current_index",
    "unavailable_reason",
]

_TYPE = "cuda"


def unavailable_reason() -> str | None:
    """None when a cuda device is usable, else a sentence saying why not."""
    MANAGER.ensure_loaded()
    info = MANAGER.device_types.get(_TYPE)
    if info is None:
        failed = MANAGER.statuses.get(_TYPE)
        if failed is not None and failed.error:
            return f"the ember cuda device plugin failed to load: {failed.error}"
        return "the ember cuda device plugin (ember-cuda) is not installed"
    if info.reason is not None:
        return f"the ember cuda device plugin is installed but unusable: {info.reason}"
    if info.count == 0:
        return "the ember cuda device plugin is installed but found no GPU"
    return None


def count() -> int:
    """How many cuda devices are usable (0 when none)."""
    MANAGER.ensure_loaded()
    info = MANAGER.device_types.get(_TYPE)
    return 0 if info is None or info.reason is not None else info.count


def _fail(what: str, error: type[BaseException]) -> NoReturn:
    raise error(f"{what}: no CUDA device is available to Ember: {unavailable_reason()}")


def require(what: str, error: type[BaseException] = AssertionError) -> None:
    """Raise `error` (AssertionError, as torch's lazy init does) naming why cuda is missing."""
    if count() == 0:
        _fail(what, error)


def current_index() -> int:
    return _device_state.current_index(_TYPE)


def set_current_index(index: int) -> None:
    _device_state.set_current_index(_TYPE, index)


def resolve(what: str, dev: object = None, error: type[BaseException] = AssertionError) -> device:
    """The cuda `ember.device` meant by `dev` (None: the current one), checked usable."""
    require(what, error)
    if dev is None:
        index = current_index()
    elif isinstance(dev, int):
        index = dev
    else:
        chosen = device(dev) if isinstance(dev, (str, device)) else None
        if chosen is None or chosen.type != _TYPE:
            raise ValueError(f"{what}: expected a cuda device, got {dev!r}")
        index = current_index() if chosen.index is None else chosen.index
    if not 0 <= index < count():
        raise RuntimeError(f"{what}: invalid device ordinal {index}; {count()} cuda device(s)")
    return device(_TYPE, index)
