"""ExponentialFamily: distributions whose density is exp(<θ, t(x)> - F(θ) + k(x)); the
entropy follows from the log-normaliser F by autograd (Bregman divergence)."""

from __future__ import annotations

from ember._tensor import Tensor
from ember.autograd import grad
from ember.distributions.distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base of the exponential-family distributions (Normal, Gamma, Bernoulli, ...)."""

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float | Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """-E[k(x)] + F(θ) - <θ, ∇F(θ)>, with ∇F by autograd."""
        result: Tensor | float = -self._mean_carrier_measure
        natural = [p.detach().requires_grad_() for p in self._natural_params]
        log_normalizer = self._log_normalizer(*natural)
        gradients = grad(log_normalizer.sum(), natural, create_graph=True)
        result = log_normalizer + result
        for parameter, gradient in zip(natural, gradients, strict=True):
            result = result - (parameter * gradient).reshape(*self._batch_shape, -1).sum(-1)
        return result
