"""TransformedDistribution: a base distribution pushed through transforms."""

from __future__ import annotations

from typing import Any, ClassVar, Self

from ember._tensor import Tensor
from ember._tensor_core import Size
from ember.autograd import no_grad
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.independent import Independent
from ember.distributions.transforms import ComposeTransform, Transform
from ember.distributions.utils import _sum_rightmost

__all__ = ["TransformedDistribution"]


class TransformedDistribution(Distribution):
    """The law of transforms[-1](... transforms[0](x)) for x ~ base_distribution; log_prob
    by the change of variables."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {}

    def __init__(
        self,
        base_distribution: Distribution,
        transforms: Transform | list[Transform],
        validate_args: bool | None = None,
    ) -> None:
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError(
                "base_distribution needs to have shape with size at least "
                f"{transform.domain.event_dim}, but got {Size(base_shape)}."
            )
        forward_shape = tuple(transform.forward_shape(base_shape))
        expanded_base_shape = tuple(transform.inverse_shape(forward_shape))
        if base_shape != expanded_base_shape:
            base_batch_shape = expanded_base_shape[: len(expanded_base_shape) - base_event_dim]
            base_distribution = base_distribution.expand(base_batch_shape)
        reinterpreted_batch_ndims = transform.domain.event_dim - base_event_dim
        if reinterpreted_batch_ndims > 0:
            base_distribution = Independent(base_distribution, reinterpreted_batch_ndims)
        self.base_dist = base_distribution
        change = transform.codomain.event_dim - transform.domain.event_dim
        event_dim = max(transform.codomain.event_dim, base_event_dim + change)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Self:
        new = self._get_checked_instance(TransformedDistribution, _instance)
        shape: Any = tuple(batch_shape) + tuple(self.event_shape)
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        base_batch_shape = tuple(shape)[: len(shape) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch_shape)
        new.transforms = self.transforms
        super(TransformedDistribution, new).__init__(
            batch_shape, self.event_shape, validate_args=False
        )
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self) -> Any:
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]  # computed here, a plain attribute on the base
        return self.base_dist.has_rsample

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with no_grad():
            x = self.base_dist.sample(sample_shape)
            for transform in self.transforms:
                x = transform(x)
            return x

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        x = self.base_dist.rsample(sample_shape)
        for transform in self.transforms:
            x = transform(x)
        return x

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob: Any = 0.0
        y = value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            event_dim += transform.domain.event_dim - transform.codomain.event_dim
            log_prob = log_prob - _sum_rightmost(
                transform.log_abs_det_jacobian(x, y), event_dim - transform.domain.event_dim
            )
            y = x
        return log_prob + _sum_rightmost(
            self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape)
        )

    def _monotonize_cdf(self, value: Tensor) -> Tensor:
        sign: Any = 1
        for transform in self.transforms:
            sign = sign * transform.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value: Tensor) -> Tensor:
        for transform in self.transforms[::-1]:
            value = transform.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value: Tensor) -> Tensor:
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for transform in self.transforms:
            value = transform(value)
        return value
