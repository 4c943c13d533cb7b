"""Distributions run on every device (their parameters' device): samples land there and
log_prob / entropy / KL agree with the cpu results."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
import ember.distributions as ED

LOC = [0.2, -1.0, 0.7]
SCALE = [0.5, 2.0, 1.3]


def _builders(device: str) -> dict[str, Any]:
    loc = ember.tensor(LOC, device=device)
    scale = ember.tensor(SCALE, device=device)
    return {
        "Normal": lambda: ED.Normal(loc, scale),
        "Gamma": lambda: ED.Gamma(scale, scale + 1),
        "Beta": lambda: ED.Beta(scale, scale * 2),
        "Categorical": lambda: ED.Categorical(logits=loc),
        "Poisson": lambda: ED.Poisson(scale * 3),
        "MultivariateNormal": lambda: ED.MultivariateNormal(
            loc, scale_tril=ember.eye(3, device=device) * scale
        ),
        "LogNormal": lambda: ED.LogNormal(loc, scale),
    }


@pytest.mark.parametrize("name", sorted(_builders("cpu")))
def test_distribution_on_the_device_matches_cpu(device: str, name: str) -> None:
    ours, reference = _builders(device)[name](), _builders("cpu")[name]()
    ember.manual_seed(2)
    draws = ours.sample((5,))
    assert draws.device == ember.device(device)
    assert tuple(draws.shape) == (5, *reference.batch_shape, *reference.event_shape)
    value = reference.sample((4,))
    np.testing.assert_allclose(
        ours.log_prob(value.to(device)).cpu().numpy(), reference.log_prob(value).numpy(),
        rtol=1e-5, atol=1e-6,
    )  # fmt: skip
    try:
        expected = reference.entropy().numpy()
    except NotImplementedError:
        return
    np.testing.assert_allclose(ours.entropy().cpu().numpy(), expected, rtol=1e-5, atol=1e-6)


def test_rsample_gradient_and_kl_on_the_device(device: str) -> None:
    loc = ember.tensor(LOC, device=device, requires_grad=True)
    scale = ember.tensor(SCALE, device=device)
    p = ED.Normal(loc, scale)
    p.rsample((8,)).sum().backward()
    assert loc.grad is not None and loc.grad.cpu().tolist() == [8.0, 8.0, 8.0]
    kl = ED.kl_divergence(p, ED.Gamma(scale, scale)).detach()  # supports do not nest
    assert kl.device == ember.device(device) and np.all(np.isinf(kl.cpu().numpy()))
