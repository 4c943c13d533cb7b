"""The default CPU generator's state as torch exposes it: `ember.get_rng_state()`,
`ember.set_rng_state(state)` (an int64 (seed, offset) tensor, Ember's Generator state)."""

from __future__ import annotations

from ember._device import device
from ember._ops.random import default_generator
from ember._tensor import Tensor

__all__ = ["get_rng_state", "set_rng_state"]


def get_rng_state() -> Tensor:
    """The state of the default CPU generator."""
    return default_generator(device("cpu")).get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default CPU generator to a state from `get_rng_state`."""
    if not isinstance(new_state, Tensor):
        raise TypeError(
            f"set_rng_state(): argument 'new_state' must be Tensor, not {type(new_state).__name__}"
        )
    default_generator(device("cpu")).set_state(new_state)
