"""A plugin whose device hook raises."""

from __future__ import annotations

import ember
from ember.plugins import hookimpl


@hookimpl
def ember_devices() -> list[ember.DeviceBackend]:
    raise RuntimeError("toy firmware did not answer")
