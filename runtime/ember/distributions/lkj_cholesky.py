"""LKJCholesky(dim, concentration): Cholesky factors of random correlation matrices."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from ember import _ops as ops
from ember._dtype_info import finfo
from ember._tensor import Tensor
from ember.autograd import no_grad
from ember.distributions import constraints
from ember.distributions.beta import Beta
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The LKJ distribution over correlation matrices, on their lower Cholesky factors;
    sampled by the onion method (Ghosh and Henderson) as PyTorch does."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "concentration": constraints.positive
    }
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: Any = 1.0, validate_args: bool | None = None):
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}."
            )
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = ops.arange(self.dim - 1, dtype=self.concentration.dtype,
                            device=self.concentration.device)  # fmt: skip
        offset = ops.cat([ops.zeros_like(offset[:1]), offset])
        beta_conc1 = offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(batch_shape, (dim, dim), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LKJCholesky:
        new = self._get_checked_instance(LKJCholesky, _instance)
        shape = tuple(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(shape)
        new._beta = self._beta.expand((*shape, self.dim))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            shape = self._extended_shape(sample_shape)
            u_normal = ops.randn(*shape, dtype=y.dtype, device=y.device).tril(-1)
            norm = u_normal.norm(dim=-1, keepdim=True)
            # The first row is all zeros: it stays zero rather than 0 / 0.
            safe = ops.where(norm > 0, norm, ops.ones_like(norm))
            u_hypersphere = u_normal / safe
            w = y.sqrt() * u_hypersphere
            diag = (1 - (w**2).sum(-1)).clamp(min=finfo(w.dtype).tiny).sqrt()
            return w + ops.diag_embed(diag)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = ops.arange(2, self.dim + 1, dtype=value.dtype, device=value.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = (order * diag_elems.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = ops.lgamma(alpha) * dm1
        numerator = ops.mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized_log_pdf - (pi_constant + numerator - denominator)
