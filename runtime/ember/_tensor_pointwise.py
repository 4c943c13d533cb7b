"""Tensor methods of the elementwise math of `ember._ops.pointwise_math` and the predicates
of `ember._ops.predicates`: t.acos(), t.exp2_(), t.sinc(), t.isnan(), t.isclose(u), ..."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

from ember import _upper
from ember._tensor_core import TensorCore

if TYPE_CHECKING:
    from ember._tensor import Tensor

__all__ = ["PointwiseMethods"]

# Any, not the typed `_upper`: these methods pass `self` (typed as this mixin, not as
# Tensor) to ops; each is a one-line forward whose public signature is typed here.
_up: Any = _upper


class PointwiseMethods(TensorCore):
    """t.acos(), t.exp2_(), t.sinc(), t.logit(eps), t.isnan(), t.isclose(u), ..."""

    __slots__ = ()

    def absolute(self) -> Tensor:
        return _up.ops.absolute(self)

    def absolute_(self) -> Tensor:
        return _up.ops.absolute_(self)

    def acos(self) -> Tensor:
        return _up.ops.acos(self)

    def acos_(self) -> Tensor:
        return _up.ops.acos_(self)

    def acosh(self) -> Tensor:
        return _up.ops.acosh(self)

    def acosh_(self) -> Tensor:
        return _up.ops.acosh_(self)

    def arccos(self) -> Tensor:
        return _up.ops.arccos(self)

    def arccos_(self) -> Tensor:
        return _up.ops.arccos_(self)

    def arccosh(self) -> Tensor:
        return _up.ops.arccosh(self)

    def arccosh_(self) -> Tensor:
        return _up.ops.arccosh_(self)

    def arcsin(self) -> Tensor:
        return _up.ops.arcsin(self)

    def arcsin_(self) -> Tensor:
        return _up.ops.arcsin_(self)

    def arcsinh(self) -> Tensor:
        return _up.ops.arcsinh(self)

    def arcsinh_(self) -> Tensor:
        return _up.ops.arcsinh_(self)

    def arctan(self) -> Tensor:
        return _up.ops.arctan(self)

    def arctan_(self) -> Tensor:
        return _up.ops.arctan_(self)

    def arctanh(self) -> Tensor:
        return _up.ops.arctanh(self)

    def arctanh_(self) -> Tensor:
        return _up.ops.arctanh_(self)

    def asin(self) -> Tensor:
        return _up.ops.asin(self)

    def asin_(self) -> Tensor:
        return _up.ops.asin_(self)

    def asinh(self) -> Tensor:
        return _up.ops.asinh(self)

    def asinh_(self) -> Tensor:
        return _up.ops.asinh_(self)

    def atan(self) -> Tensor:
        return _up.ops.atan(self)

    def atan_(self) -> Tensor:
        return _up.ops.atan_(self)

    def atanh(self) -> Tensor:
        return _up.ops.atanh(self)

    def atanh_(self) -> Tensor:
        return _up.ops.atanh_(self)

    def cos_(self) -> Tensor:
        return _up.ops.cos_(self)

    def cosh(self) -> Tensor:
        return _up.ops.cosh(self)

    def cosh_(self) -> Tensor:
        return _up.ops.cosh_(self)

    def deg2rad(self) -> Tensor:
        return _up.ops.deg2rad(self)

    def deg2rad_(self) -> Tensor:
        return _up.ops.deg2rad_(self)

    def erf_(self) -> Tensor:
        return _up.ops.erf_(self)

    def exp2(self) -> Tensor:
        return _up.ops.exp2(self)

    def exp2_(self) -> Tensor:
        return _up.ops.exp2_(self)

    def expm1_(self) -> Tensor:
        return _up.ops.expm1_(self)

    def fix(self) -> Tensor:
        return _up.ops.fix(self)

    def fix_(self) -> Tensor:
        return _up.ops.fix_(self)

    def frac(self) -> Tensor:
        return _up.ops.frac(self)

    def frac_(self) -> Tensor:
        return _up.ops.frac_(self)

    def frexp(self) -> Any:
        return _up.ops.frexp(self)

    def log10(self) -> Tensor:
        return _up.ops.log10(self)

    def log10_(self) -> Tensor:
        return _up.ops.log10_(self)

    def log1p_(self) -> Tensor:
        return _up.ops.log1p_(self)

    def log2(self) -> Tensor:
        return _up.ops.log2(self)

    def log2_(self) -> Tensor:
        return _up.ops.log2_(self)

    def negative_(self) -> Tensor:
        return _up.ops.negative_(self)

    def positive(self) -> Tensor:
        return _up.ops.positive(self)

    def rad2deg(self) -> Tensor:
        return _up.ops.rad2deg(self)

    def rad2deg_(self) -> Tensor:
        return _up.ops.rad2deg_(self)

    def reciprocal_(self) -> Tensor:
        return _up.ops.reciprocal_(self)

    def rsqrt_(self) -> Tensor:
        return _up.ops.rsqrt_(self)

    def sgn(self) -> Tensor:
        return _up.ops.sgn(self)

    def sgn_(self) -> Tensor:
        return _up.ops.sgn_(self)

    def sign_(self) -> Tensor:
        return _up.ops.sign_(self)

    def sin_(self) -> Tensor:
        return _up.ops.sin_(self)

    def sinc(self) -> Tensor:
        return _up.ops.sinc(self)

    def sinc_(self) -> Tensor:
        return _up.ops.sinc_(self)

    def sinh(self) -> Tensor:
        return _up.ops.sinh(self)

    def sinh_(self) -> Tensor:
        return _up.ops.sinh_(self)

    def square_(self) -> Tensor:
        return _up.ops.square_(self)

    def tan(self) -> Tensor:
        return _up.ops.tan(self)

    def tan_(self) -> Tensor:
        return _up.ops.tan_(self)

    def isfinite(self) -> Tensor:
        return _up.ops.isfinite(self)

    def isinf(self) -> Tensor:
        return _up.ops.isinf(self)

    def isnan(self) -> Tensor:
        return _up.ops.isnan(self)

    def isneginf(self) -> Tensor:
        return _up.ops.isneginf(self)

    def isposinf(self) -> Tensor:
        return _up.ops.isposinf(self)

    def isreal(self) -> Tensor:
        return _up.ops.isreal(self)

    def signbit(self) -> Tensor:
        return _up.ops.signbit(self)

    def bitwise_not(self) -> Tensor:
        return _up.ops.bitwise_not(self)

    def bitwise_not_(self) -> Tensor:
        return _up.ops.bitwise_not_(self)

    def logical_not_(self) -> Tensor:
        return _up.ops.logical_not_(self)

    def angle(self) -> Tensor:
        return _up.ops.angle(self)

    def logit(self, eps: float | None = None) -> Tensor:
        return _up.ops.logit(self, eps)

    def logit_(self, eps: float | None = None) -> Tensor:
        return _up.ops.logit_(self, eps)

    def nan_to_num(
        self, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None
    ) -> Tensor:
        return _up.ops.nan_to_num(self, nan, posinf, neginf)

    def nan_to_num_(
        self, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None
    ) -> Tensor:
        return _up.ops.nan_to_num_(self, nan, posinf, neginf)

    def negative(self) -> Tensor:
        return _up.ops.neg(self)

    def isclose(
        self,
        other: Tensor,
        rtol: float = 1e-05,
        atol: float = 1e-08,
        equal_nan: builtins.bool = False,
    ) -> Tensor:
        return _up.ops.isclose(self, other, rtol, atol, equal_nan)

    def allclose(
        self,
        other: Tensor,
        rtol: float = 1e-05,
        atol: float = 1e-08,
        equal_nan: builtins.bool = False,
    ) -> builtins.bool:
        return _up.ops.allclose(self, other, rtol, atol, equal_nan)

    def equal(self, other: Tensor) -> builtins.bool:
        return _up.ops.equal(self, other)
