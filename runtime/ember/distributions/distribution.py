"""The Distribution base class: batch and event shapes, sampling, log densities and
moments, and argument validation (as torch.distributions.Distribution)."""

from __future__ import annotations

import warnings
from typing import Any

from ember._tensor import Tensor
from ember._tensor_core import Size
from ember.autograd import no_grad
from ember.distributions import constraints
from ember.distributions.utils import lazy_property

__all__ = ["Distribution"]


def _size(shape: Any) -> Size:
    return shape if isinstance(shape, Size) else Size(tuple(shape))


class Distribution:
    """A family of probability distributions over tensors of `event_shape`, batched over
    `batch_shape`."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for distributions created later."""
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(
        self,
        batch_shape: Any = (),
        event_shape: Any = (),
        validate_args: bool | None = None,
    ) -> None:
        self._batch_shape = _size(batch_shape)
        self._event_shape = _size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()

    def _check_parameters(self) -> None:
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(
                f"{self.__class__} does not define `arg_constraints`. Please set "
                "`arg_constraints = {}` or initialize the distribution with "
                "`validate_args=False` to turn off validation.",
                stacklevel=3,
            )
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            if param not in self.__dict__ and isinstance(
                getattr(type(self), param, None), lazy_property
            ):
                continue  # not computed yet: the parameter it derives from is checked
            value = getattr(self, param)
            if not bool(constraint.check(value).all()):
                raise ValueError(
                    f"Expected parameter {param} ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                    f"constraint {constraint!r}, but found invalid values:\n{value}"
                )

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        """A view of this distribution with a larger batch shape (parameters expanded)."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        """Each parameter's name and the constraint its values satisfy."""
        raise NotImplementedError

    @property
    def support(self) -> Any:
        """The constraint that samples satisfy."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """Samples of shape sample_shape + batch_shape + event_shape (no gradient)."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """Reparameterised samples: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        """The log of the density (or mass) at `value`."""
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    def _extended_shape(self, sample_shape: Any = ()) -> Size:
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(
                "The right-most size of value must match event_shape: "
                f"{value.size()} vs {self._event_shape}."
            )
        actual_shape = value.size()
        expected_shape = tuple(self._batch_shape) + tuple(self._event_shape)
        for i, j in zip(reversed(actual_shape), reversed(expected_shape), strict=False):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    "Value is not broadcastable with batch_shape+event_shape: "
                    f"{actual_shape} vs {Size(expected_shape)}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable sample validation. "
                "Please initialize the distribution with `validate_args=False` to turn off "
                "validation.",
                stacklevel=3,
            )
            return
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{value}"
            )

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Any:
        # The class whose __init__ this instance runs: a subclass with its own must expand.
        initialiser = next(c for c in type(self).__mro__ if "__init__" in vars(c))
        if _instance is None and initialiser is not cls:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        param_names = [k for k in self.arg_constraints if k in self.__dict__]
        args_string = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in param_names
        )
        return f"{self.__class__.__name__}({args_string})"
