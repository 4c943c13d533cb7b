"""biject_to and transform_to: from a constraint to a transform whose codomain it is
(bijective for biject_to), as torch.distributions.constraint_registry."""

from __future__ import annotations

from collections.abc import Callable
from numbers import Number
from typing import Any

from ember.distributions import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]

Factory = Callable[[Any], transforms.Transform]


class ConstraintRegistry:
    """Constraint types mapped to factories of transforms."""

    def __init__(self) -> None:
        self._registry: dict[type, Factory] = {}

    def register(self, constraint: Any, factory: Factory | None = None) -> Any:
        """Register `factory(constraint) -> Transform` for a constraint (or its type);
        usable as a decorator when `factory` is omitted."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(
                "Expected constraint to be either a Constraint subclass or instance, but got "
                f"{constraint}"
            )
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint: constraints.Constraint) -> transforms.Transform:
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                f"Cannot transform {type(constraint).__name__} constraints"
            ) from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _both(constraint: Any, factory: Factory) -> None:
    biject_to.register(constraint, factory)
    transform_to.register(constraint, factory)


_both(constraints.real, lambda c: transforms.identity_transform)
_both(constraints.positive, lambda c: transforms.ExpTransform())
_both(constraints.nonnegative, lambda c: transforms.ExpTransform())
# Not bijections (torch registers them for transform_to only).
transform_to.register(constraints.lower_cholesky, lambda c: transforms.LowerCholeskyTransform())
transform_to.register(
    constraints.positive_definite, lambda c: transforms.PositiveDefiniteTransform()
)
transform_to.register(
    constraints.positive_semidefinite, lambda c: transforms.PositiveDefiniteTransform()
)
_both(constraints.corr_cholesky, lambda c: transforms.CorrCholeskyTransform())
biject_to.register(constraints.simplex, lambda c: transforms.StickBreakingTransform())
transform_to.register(constraints.simplex, lambda c: transforms.SoftmaxTransform())


def _independent(registry: ConstraintRegistry) -> Factory:
    def factory(constraint: Any) -> transforms.Transform:
        base = registry(constraint.base_constraint)
        return transforms.IndependentTransform(base, constraint.reinterpreted_batch_ndims)

    return factory


biject_to.register(constraints.independent, _independent(biject_to))
transform_to.register(constraints.independent, _independent(transform_to))


def _greater_than(constraint: Any) -> transforms.Transform:
    return transforms.ComposeTransform(
        [transforms.ExpTransform(), transforms.AffineTransform(constraint.lower_bound, 1)]
    )


def _less_than(constraint: Any) -> transforms.Transform:
    return transforms.ComposeTransform(
        [transforms.ExpTransform(), transforms.AffineTransform(constraint.upper_bound, -1)]
    )


def _interval(constraint: Any) -> transforms.Transform:
    lower, upper = constraint.lower_bound, constraint.upper_bound
    if isinstance(lower, Number) and lower == 0 and isinstance(upper, Number) and upper == 1:
        return transforms.SigmoidTransform()
    return transforms.ComposeTransform(
        [transforms.SigmoidTransform(), transforms.AffineTransform(lower, upper - lower)]
    )


_both(constraints.greater_than, _greater_than)
_both(constraints.greater_than_eq, _greater_than)
_both(constraints.less_than, _less_than)
_both(constraints.interval, _interval)
_both(constraints.half_open_interval, _interval)


def _cat(registry: ConstraintRegistry) -> Factory:
    def factory(constraint: Any) -> transforms.Transform:
        parts = [registry(c) for c in constraint.cseq]
        return transforms.CatTransform(parts, constraint.dim, constraint.lengths)

    return factory


def _stack(registry: ConstraintRegistry) -> Factory:
    def factory(constraint: Any) -> transforms.Transform:
        return transforms.StackTransform([registry(c) for c in constraint.cseq], constraint.dim)

    return factory


biject_to.register(constraints.cat, _cat(biject_to))
transform_to.register(constraints.cat, _cat(transform_to))
biject_to.register(constraints.stack, _stack(biject_to))
transform_to.register(constraints.stack, _stack(transform_to))
