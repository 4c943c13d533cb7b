"""The Transform base class, inverses, composition, and the shape-only transforms
(Independent, Reshape), as in torch.distributions.transforms."""

from __future__ import annotations

import weakref
from typing import Any

from ember import _ops as ops
from ember._tensor import Tensor
from ember._tensor_core import Size
from ember.distributions import constraints
from ember.distributions.utils import _sum_rightmost

__all__ = [
    "ComposeTransform",
    "IndependentTransform",
    "ReshapeTransform",
    "Transform",
    "_InverseTransform",
    "identity_transform",
]


class Transform:
    """An invertible (or at least injective) map y = f(x) with log|det J| for changes of
    variables; `cache_size=1` remembers the last (x, y) pair."""

    bijective = False
    domain: constraints.Constraint = constraints.real
    codomain: constraints.Constraint = constraints.real
    sign: Any = 1

    def __init__(self, cache_size: int = 0) -> None:
        self._cache_size = cache_size
        self._inv: Any = None
        if cache_size == 0:
            pass
        elif cache_size == 1:
            self._cached_x_y: tuple[Any, Any] = (None, None)
        else:
            raise ValueError("cache_size must be 0 or 1")

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_inv"] = None
        return state

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> Transform:
        """The inverse transform (x = inv(y))."""
        inv = None
        if self._inv is not None:
            inv = self._inv()
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = weakref.ref(inv)
        return inv

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return id(self)

    def __call__(self, x: Tensor) -> Tensor:
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y: Tensor) -> Tensor:
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x: Tensor) -> Tensor:
        raise NotImplementedError

    def _inverse(self, y: Tensor) -> Tensor:
        raise NotImplementedError

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """log |dy/dx| at (x, y), summed over the transform's event dims."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.__class__.__name__ + "()"

    def forward_shape(self, shape: Any) -> Any:
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        return shape


class _InverseTransform(Transform):
    """The inverse of another transform, sharing its cache."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv: Transform = transform

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]  # computed here, a plain attribute on the base
        return self._inv.codomain

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]  # computed here, a plain attribute on the base
        return self._inv.domain

    @property
    def bijective(self) -> bool:  # type: ignore[override]  # computed here, a plain attribute on the base
        return self._inv.bijective

    @property
    def sign(self) -> Any:
        return self._inv.sign

    @property
    def inv(self) -> Transform:
        return self._inv

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _InverseTransform):
            return False
        return self._inv == other._inv

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._inv!r})"

    def __call__(self, x: Tensor) -> Tensor:
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape: Any) -> Any:
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """parts[-1](... parts[0](x)): transforms applied in order."""

    def __init__(self, parts: list[Transform], cache_size: int = 0) -> None:
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = parts

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ComposeTransform):
            return False
        return self.parts == other.parts

    def __hash__(self) -> int:
        return id(self)

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> constraints.Constraint:
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> constraints.Constraint:
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self) -> bool:  # type: ignore[override]  # computed here, a plain attribute on the base
        return all(p.bijective for p in self.parts)

    @property
    def sign(self) -> Any:
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self) -> Transform:
        inv = None
        if self._inv is not None:
            inv = self._inv()
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = weakref.ref(inv)
            inv._inv = weakref.ref(self)
        return inv

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x: Tensor) -> Tensor:
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        if not self.parts:
            return ops.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms: list[Any] = []
        event_dim = self.domain.event_dim
        for part, x_, y_ in zip(self.parts, xs[:-1], xs[1:], strict=True):
            terms.append(
                _sum_rightmost(part.log_abs_det_jacobian(x_, y_), event_dim - part.domain.event_dim)
            )
            event_dim += part.codomain.event_dim - part.domain.event_dim
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total

    def forward_shape(self, shape: Any) -> Any:
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self) -> str:
        inner = ",\n    ".join(repr(p) for p in self.parts)
        return f"{self.__class__.__name__}(\n    {inner}\n)"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """`base_transform` with its last `reinterpreted_batch_ndims` dims treated as the event
    (log|det J| summed over them)."""

    def __init__(
        self, base_transform: Transform, reinterpreted_batch_ndims: int, cache_size: int = 0
    ) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(
            self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size
        )

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> constraints.Constraint:
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> constraints.Constraint:
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:  # type: ignore[override]  # computed here, a plain attribute on the base
        return self.base_transform.bijective

    @property
    def sign(self) -> Any:
        return self.base_transform.sign

    def _call(self, x: Tensor) -> Tensor:
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y: Tensor) -> Tensor:
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        result = self.base_transform.log_abs_det_jacobian(x, y)
        return _sum_rightmost(result, self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"
        )

    def forward_shape(self, shape: Any) -> Any:
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshape the rightmost `in_shape` dims to `out_shape` (same number of elements)."""

    bijective = True

    def __init__(self, in_shape: Any, out_shape: Any, cache_size: int = 0) -> None:
        self.in_shape = Size(tuple(in_shape))
        self.out_shape = Size(tuple(out_shape))
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x: Tensor) -> Tensor:
        batch_shape = x.shape[: x.dim() - len(self.in_shape)]
        return x.reshape(*batch_shape, *self.out_shape)

    def _inverse(self, y: Tensor) -> Tensor:
        batch_shape = y.shape[: y.dim() - len(self.out_shape)]
        return y.reshape(*batch_shape, *self.in_shape)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        batch_shape = x.shape[: x.dim() - len(self.in_shape)]
        return ops.zeros(*batch_shape, dtype=x.dtype, device=x.device)

    def forward_shape(self, shape: Any) -> Any:
        if len(shape) < len(self.in_shape):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(self.in_shape)
        if tuple(shape[cut:]) != tuple(self.in_shape):
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {self.in_shape}")
        return tuple(shape[:cut]) + tuple(self.out_shape)

    def inverse_shape(self, shape: Any) -> Any:
        if len(shape) < len(self.out_shape):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(self.out_shape)
        if tuple(shape[cut:]) != tuple(self.out_shape):
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {self.out_shape}")
        return tuple(shape[:cut]) + tuple(self.in_shape)
