"""The examples/ gallery: each PyTorch script runs briefly on real PyTorch and again with
`torch` resolving to Ember (names only), from the same initial weights and data; the
losses agree step by step."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
import torch

import ember

from ._torch_alias import load_script, torch_is_ember

GALLERY = pathlib.Path(__file__).resolve().parents[2] / "examples"
# (script, steps, relative tolerance): float32 runs drift by rounding, L-BFGS runs float64.
CASES = [
    ("cnn_classifier", 4, 1e-4),
    ("rnn_lm", 4, 1e-4),
    ("vae", 6, 1e-4),
    ("gpt_char", 4, 1e-4),
    ("lbfgs_fit", 2, 1e-7),
    ("reinforce_agent", 6, 1e-4),
]


def _run_both(name: str, steps: int) -> tuple[list[float], list[float], object, object]:
    path = GALLERY / f"{name}.py"
    on_torch = load_script(path, "torch")
    theirs = on_torch.build()
    weights = {k: v.detach().numpy().copy() for k, v in theirs.state_dict().items()}
    with torch_is_ember():
        on_ember = load_script(path, "ember")
    ours = on_ember.build()
    ours.load_state_dict({k: ember.from_numpy(v.copy()) for k, v in weights.items()})
    torch_losses = on_torch.train(theirs, steps=steps)
    ember_losses = on_ember.train(ours, steps=steps)
    return torch_losses, ember_losses, on_ember, ours


@pytest.mark.parametrize(("name", "steps", "rtol"), CASES, ids=[c[0] for c in CASES])
def test_the_script_trains_the_same_on_ember(name: str, steps: int, rtol: float) -> None:
    torch.set_num_threads(1)
    torch_losses, ember_losses, _, _ = _run_both(name, steps)
    assert len(ember_losses) == len(torch_losses) > 0
    np.testing.assert_allclose(ember_losses, torch_losses, rtol=rtol)
    assert all(isinstance(v, float) for v in ember_losses)


def test_the_gpt_samples_text_on_ember() -> None:
    _, _, on_ember, model = _run_both("gpt_char", 2)
    text = on_ember.sample(model, length=12)  # type: ignore[attr-defined]
    assert len(text) == 13 and set(text) <= set(on_ember.CHARS)  # type: ignore[attr-defined]


def test_the_alias_leaves_torch_importable() -> None:
    with torch_is_ember():
        import torch as aliased

        assert aliased is ember
    import torch as real

    assert real.__name__ == "torch"


def test_the_agent_samples_actions_from_the_generator_on_ember() -> None:
    with torch_is_ember():
        on_ember = load_script(GALLERY / "reinforce_agent.py", "ember_sampling")
    policy = on_ember.build()
    state = [0.01, -0.02, 0.03, 0.0]
    draws = [on_ember.select_action(policy, state)[0] for _ in range(40)]  # type: ignore[attr-defined]
    assert set(draws) == {0, 1}
    _, log_prob, entropy = on_ember.select_action(policy, state, 0.5)  # type: ignore[attr-defined]
    (-log_prob.sum() - entropy.sum()).backward()
    assert policy.affine1.weight.grad is not None  # type: ignore[attr-defined]
    assert float(policy.affine1.weight.grad.abs().sum()) > 0  # type: ignore[attr-defined]
