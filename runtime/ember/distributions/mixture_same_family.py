"""MixtureSameFamily: a Categorical mixture over the last batch dim of one distribution."""

from __future__ import annotations

from typing import Any, ClassVar

from ember import _ops as ops
from ember._tensor import Tensor
from ember.autograd import no_grad
from ember.distributions import constraints
from ember.distributions.categorical import Categorical
from ember.distributions.distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """Pick component k ~ `mixture_distribution`, then draw from component k of
    `component_distribution` (whose rightmost batch dim indexes the components)."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {}
    has_rsample = False

    def __init__(
        self,
        mixture_distribution: Categorical,
        component_distribution: Distribution,
        validate_args: bool | None = None,
    ) -> None:
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(
                " The Mixture distribution needs to be an  instance of "
                "torch.distributions.Categorical"
            )
        if not isinstance(component_distribution, Distribution):
            raise ValueError(
                "The Component distribution need to be an instance of "
                "torch.distributions.Distribution"
            )
        mdbs = mixture_distribution.batch_shape
        cdbs = component_distribution.batch_shape[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs), strict=False):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(
                    f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                    f"`component_distribution.batch_shape`({cdbs})"
                )
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(
                f"`mixture_distribution component` ({km}) does not equal "
                f"`component_distribution.batch_shape[-1]` ({kc})"
            )
        self._num_component = km
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(cdbs, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MixtureSameFamily:
        shape = tuple(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(
            (*shape, self._num_component)
        )
        new._mixture_distribution = self._mixture_distribution.expand(shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        super(MixtureSameFamily, new).__init__(
            shape, new._component_distribution.event_shape, validate_args=False
        )
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self) -> Any:
        return self._component_distribution.support

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        return self._component_distribution

    @property
    def mean(self) -> Tensor:
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return (probs * self.component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self) -> Tensor:
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        dim = -1 - self._event_ndims
        mean_cond_var = (probs * self.component_distribution.variance).sum(dim)
        spread = (self.component_distribution.mean - self._pad(self.mean)).pow(2.0)
        return mean_cond_var + (probs * spread).sum(dim)

    def cdf(self, x: Tensor) -> Tensor:
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return (cdf_x * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, x: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))
        logits = self.mixture_distribution.logits
        log_mix_prob = logits - logits.logsumexp(-1, keepdim=True)
        return (log_prob_x + log_mix_prob).logsumexp(-1)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with no_grad():
            sample_shape = tuple(sample_shape)
            gather_dim = len(sample_shape) + len(self.batch_shape)
            es = tuple(self.event_shape)
            mix_sample = self.mixture_distribution.sample(sample_shape)
            mix_shape = tuple(mix_sample.shape)
            comp_samples = self.component_distribution.sample(sample_shape)
            index = mix_sample.reshape(*mix_shape, *([1] * (len(es) + 1)))
            index = index.repeat(*([1] * len(mix_shape)), 1, *es)
            return ops.gather(comp_samples, gather_dim, index).squeeze(gather_dim)

    def _pad(self, x: Tensor) -> Tensor:
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x: Tensor) -> Tensor:
        dist_batch_ndims = len(self.batch_shape)
        cat_batch_ndims = len(self.mixture_distribution.batch_shape)
        pad_ndims = 0 if cat_batch_ndims == 1 else dist_batch_ndims - cat_batch_ndims
        xs = tuple(x.shape)
        return x.reshape(*xs[:-1], *([1] * pad_ndims), *xs[-1:], *([1] * self._event_ndims))

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(\n  {self.mixture_distribution},\n  "
            f"{self.component_distribution})"
        )
