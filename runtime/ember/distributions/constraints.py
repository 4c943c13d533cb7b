"""Constraints: what values a parameter or a sample may take (`constraint.check(value)` is
a bool tensor), as torch.distributions.constraints names them."""

from __future__ import annotations

from typing import Any

from ember import _dtype
from ember import _ops as ops
from ember._tensor import Tensor
from ember.distributions._cholesky import cholesky_ok

__all__ = [
    "Constraint",
    "boolean",
    "cat",
    "corr_cholesky",
    "dependent",
    "dependent_property",
    "greater_than",
    "greater_than_eq",
    "half_open_interval",
    "independent",
    "integer_interval",
    "interval",
    "is_dependent",
    "less_than",
    "lower_cholesky",
    "lower_triangular",
    "multinomial",
    "nonnegative",
    "nonnegative_integer",
    "one_hot",
    "positive",
    "positive_definite",
    "positive_integer",
    "positive_semidefinite",
    "real",
    "real_vector",
    "simplex",
    "square",
    "stack",
    "symmetric",
    "unit_interval",
]


class Constraint:
    """A region of values; `check(value)` says, per event, whether a value lies in it."""

    is_discrete = False
    event_dim = 0

    def check(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder whose support depends on other parameters (not checkable)."""

    def __init__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]  # computed here, a plain attribute on the base
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return bool(self._is_discrete)

    @property
    def event_dim(self) -> int:  # type: ignore[override]  # computed here, a plain attribute on the base
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return int(self._event_dim)

    def __call__(
        self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented
    ) -> _Dependent:
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, value: Tensor) -> Tensor:
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint: Any) -> bool:
    """True for `dependent` and its copies (whose values cannot be checked)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property whose value is a constraint that depends on the distribution's
    parameters (`support` of Uniform, Binomial, ...)."""

    def __init__(
        self, fn: Any = None, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented
    ) -> None:
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn: Any) -> _DependentProperty:  # type: ignore[override]  # computed here, a plain attribute on the base
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """`base` over the rightmost `reinterpreted_batch_ndims` dims taken as one event."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]  # computed here, a plain attribute on the base
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]  # computed here, a plain attribute on the base
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value: Tensor) -> Tensor:
        result = self.base_constraint.check(value)
        if result.dim() < self.reinterpreted_batch_ndims:
            expected = self.base_constraint.event_dim + self.reinterpreted_batch_ndims
            raise ValueError(f"Expected value.dim() >= {expected} but got {value.dim()}")
        for _ in range(self.reinterpreted_batch_ndims):
            result = result.all(-1)
        return result

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__[1:]}({self.base_constraint!r}, "
            f"{self.reinterpreted_batch_ndims})"
        )


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        is_boolean = ((value == 0) | (value == 1)).all(-1)
        return is_boolean & (value.sum(-1) == 1)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value >= self.lower_bound) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self) -> str:
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _Real(Constraint):
    def check(self, value: Tensor) -> Tensor:
        return value == value  # False only for NaN


class _GreaterThan(Constraint):
    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Tensor) -> Tensor:
        return self.lower_bound < value

    def __repr__(self) -> str:
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(Constraint):
    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Tensor) -> Tensor:
        return self.lower_bound <= value

    def __repr__(self) -> str:
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, value: Tensor) -> Tensor:
        return value < self.upper_bound

    def __repr__(self) -> str:
        return f"LessThan(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value: Tensor) -> Tensor:
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(_Interval):
    def check(self, value: Tensor) -> Tensor:
        return (self.lower_bound <= value) & (value < self.upper_bound)

    def __repr__(self) -> str:
        return f"HalfOpenInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound: int) -> None:
        self.upper_bound = upper_bound

    def check(self, x: Tensor) -> Tensor:
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        return (value.tril() == value).flatten(-2).min(-1).values


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        lower = (value.tril() == value).flatten(-2).min(-1).values
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).min(-1).values
        return lower & positive_diagonal


class _CorrCholesky(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        tolerance = 1e-6 * value.shape[-1]
        row_norm = value.pow(2).sum(-1).sqrt()
        unit_rows = ((row_norm - 1.0).abs() <= tolerance).all(-1)
        return _LowerCholesky().check(value) & unit_rows


class _Square(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        return ops.full(value.shape[:-2], value.shape[-2] == value.shape[-1], dtype=_dtype.bool,
                        device=value.device)  # fmt: skip


class _Symmetric(_Square):
    def check(self, value: Tensor) -> Tensor:
        square_check = super().check(value)
        if not bool(square_check.all()):
            return square_check
        close = (value - value.mT).abs() <= 1e-6 * (1.0 + value.abs())
        return close.flatten(-2).all(-1)


class _PositiveDefinite(_Symmetric):
    def check(self, value: Tensor) -> Tensor:
        symmetric = super().check(value)
        return symmetric & cholesky_ok(value)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value: Tensor) -> Tensor:
        symmetric = super().check(value)
        n = value.shape[-1]
        jitter = ops.eye(n, dtype=value.dtype, device=value.device) * 1e-8
        return symmetric & cholesky_ok(value + jitter)


class _Cat(Constraint):
    """Constraints applied to consecutive slices of `dim` (lengths `lengths`)."""

    def __init__(self, cseq: list[Constraint], dim: int = 0, lengths: list[int] | None = None):
        self.cseq = list(cseq)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        self.dim = dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]  # computed here, a plain attribute on the base
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]  # computed here, a plain attribute on the base
        return max(c.event_dim for c in self.cseq)

    def check(self, value: Tensor) -> Tensor:
        checks, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths, strict=True):
            checks.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        return ops.cat(checks, self.dim)


class _Stack(Constraint):
    """Constraints applied to the slices of `dim`, one each."""

    def __init__(self, cseq: list[Constraint], dim: int = 0) -> None:
        self.cseq = list(cseq)
        self.dim = dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]  # computed here, a plain attribute on the base
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]  # computed here, a plain attribute on the base
        return max(c.event_dim for c in self.cseq)

    def check(self, value: Tensor) -> Tensor:
        parts = [value.select(self.dim, i) for i in range(value.size(self.dim))]
        return ops.stack([c.check(v) for v, c in zip(parts, self.cseq, strict=True)], self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
