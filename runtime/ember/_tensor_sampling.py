"""Tensor methods of the sampling ops: t.multinomial(n), t.bernoulli(), t.bernoulli_(p)."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

from ember import _upper
from ember._tensor_core import TensorCore

if TYPE_CHECKING:
    from ember._tensor import Tensor

__all__ = ["SamplingMethods"]

# Any, not the typed `_upper`: these methods pass `self` (typed as this mixin) to ops.
_up: Any = _upper


class SamplingMethods(TensorCore):
    """t.multinomial(...), t.bernoulli(...), t.bernoulli_(...)."""

    __slots__ = ()

    def multinomial(
        self, num_samples: int, replacement: builtins.bool = False, *, generator: Any = None
    ) -> Tensor:
        return _up.ops.multinomial(self, num_samples, replacement, generator=generator)

    def bernoulli(self, p: Any = None, *, generator: Any = None) -> Tensor:
        return _up.ops.bernoulli(self, p, generator=generator)

    def bernoulli_(self, p: Any = 0.5, *, generator: Any = None) -> Tensor:
        """Fill in place with draws of probability `p` (a float or a tensor)."""
        if isinstance(p, TensorCore):
            draws = _up.ops.bernoulli(_up.ops.expand(_up.ops.to(p, self._dtype), self._shape))
        else:
            draws = _up.ops.bernoulli(self, float(p), generator=generator)
        return _up.ops.copy_(self, draws)

    def exponential_(self, lambd: Any = 1.0, *, generator: Any = None) -> Tensor:
        return _up.ops.exponential_(self, lambd, generator=generator)

    def geometric_(self, p: Any, *, generator: Any = None) -> Tensor:
        return _up.ops.geometric_(self, p, generator=generator)

    def log_normal_(self, mean: Any = 1.0, std: Any = 2.0, *, generator: Any = None) -> Tensor:
        return _up.ops.log_normal_(self, mean, std, generator=generator)

    def cauchy_(self, median: Any = 0.0, sigma: Any = 1.0, *, generator: Any = None) -> Tensor:
        return _up.ops.cauchy_(self, median, sigma, generator=generator)
