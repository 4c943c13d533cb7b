"""ember.get_rng_state / set_rng_state / default_generator, as torch's: the default CPU
generator's state saved and restored replays the same draws."""

from __future__ import annotations

import pytest

import ember


def test_saved_state_replays_the_same_draws() -> None:
    ember.manual_seed(3)
    state = ember.get_rng_state()
    first = ember.rand(5).tolist()
    ember.set_rng_state(state)
    assert ember.rand(5).tolist() == first
    assert ember.default_generator.initial_seed() == 3
    ember.default_generator.manual_seed(4)
    assert ember.initial_seed() == 4


def test_set_rng_state_wants_a_tensor() -> None:
    with pytest.raises(TypeError, match="must be Tensor"):
        ember.set_rng_state([1, 2])  # type: ignore[arg-type]
