"""Derivative formulas of the special-function primitives, in ember ops.

`SPECIAL_FORMULAS` has `unary_formulas.FORMULAS`' form (name -> (formula, what it saves));
`SPECIAL_BINARY_FORMULAS` has (formula, saver) pairs for `binary_formulas.FORMULAS`. As in
PyTorch, the Bessel functions and the orthogonal polynomials have no derivative (their
results are not in the graph), and zeta, igamma and igammac none in their first argument.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ember import _upper
from ember._tensor import Tensor

__all__ = ["SPECIAL_BINARY", "SPECIAL_BINARY_FORMULAS", "SPECIAL_FORMULAS"]

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def _special() -> Any:
    """The ops of the special functions without a torch-level name (erfcx, i1e, ...)."""
    return _upper.ops.special_elementwise


def _lgamma(node: Any, g: Tensor) -> Sequence[Any]:
    (x,) = node.saved
    return (_upper.ops.mul(g, _upper.ops.digamma(x)),)


def _digamma(node: Any, g: Tensor) -> Sequence[Any]:
    (x,) = node.saved
    return (_upper.ops.mul(g, _upper.ops.polygamma(1, x)),)


def _erfinv(node: Any, g: Tensor) -> Sequence[Any]:
    # d/dy erfinv(y) = sqrt(pi) / 2 * exp(erfinv(y)^2)
    (y,) = node.saved
    ops = _upper.ops
    return (ops.mul(g, ops.mul(ops.exp(ops.mul(y, y)), math.sqrt(math.pi) / 2)),)


def _erfc(node: Any, g: Tensor) -> Sequence[Any]:
    (x,) = node.saved
    ops = _upper.ops
    return (ops.mul(g, ops.mul(ops.exp(ops.neg(ops.mul(x, x))), -_TWO_OVER_SQRT_PI)),)


def _erfcx(node: Any, g: Tensor) -> Sequence[Any]:
    # d/dx erfcx(x) = 2 x erfcx(x) - 2 / sqrt(pi)
    (x,) = node.saved
    ops = _upper.ops
    slope = ops.sub(ops.mul(ops.mul(x, 2.0), _special().erfcx(x)), _TWO_OVER_SQRT_PI)
    return (ops.mul(g, slope),)


def _ndtri(node: Any, g: Tensor) -> Sequence[Any]:
    # d/dp ndtri(p) = sqrt(2 pi) exp(ndtri(p)^2 / 2)
    (y,) = node.saved
    ops = _upper.ops
    return (ops.mul(g, ops.mul(ops.exp(ops.mul(ops.mul(y, y), 0.5)), math.sqrt(2 * math.pi))),)


def _i0(node: Any, g: Tensor) -> Sequence[Any]:
    (x,) = node.saved
    return (_upper.ops.mul(g, _special().i1(x)),)


def _i0e(node: Any, g: Tensor) -> Sequence[Any]:
    # d/dx i0e(x) = i1e(x) - sign(x) i0e(x)
    (x,) = node.saved
    ops = _upper.ops
    return (ops.mul(g, ops.sub(_special().i1e(x), ops.mul(ops.sign(x), _special().i0e(x)))),)


def _i1(node: Any, g: Tensor) -> Sequence[Any]:
    # d/dx i1(x) = i0(x) - i1(x) / x, which is 1/2 at 0
    (x,) = node.saved
    ops = _upper.ops
    zero = ops.eq(x, 0.0)
    safe = ops.where(zero, 1.0, x)
    slope = ops.sub(ops.i0(x), ops.div(_special().i1(x), safe))
    return (ops.mul(g, ops.where(zero, 0.5, slope)),)


def _i1e(node: Any, g: Tensor) -> Sequence[Any]:
    # d/dx i1e(x) = i0e(x) - i1e(x) (sign(x) + 1 / x), which is 1/2 at 0
    (x,) = node.saved
    ops = _upper.ops
    zero = ops.eq(x, 0.0)
    safe = ops.where(zero, 1.0, x)
    scale = ops.add(ops.sign(x), ops.div(1.0, safe))
    slope = ops.sub(_special().i0e(x), ops.mul(_special().i1e(x), scale))
    return (ops.mul(g, ops.where(zero, 0.5, slope)),)


SPECIAL_FORMULAS: dict[str, tuple[Callable[[Any, Tensor], Sequence[Any]], str]] = {
    "lgamma": (_lgamma, "input"),
    "digamma": (_digamma, "input"),
    "erfinv": (_erfinv, "output"),
    "erfc": (_erfc, "input"),
    "erfcx": (_erfcx, "input"),
    "ndtri": (_ndtri, "output"),
    "i0": (_i0, "input"),
    "i0e": (_i0e, "input"),
    "i1": (_i1, "input"),
    "i1e": (_i1e, "input"),
}


def _not_implemented(name: str) -> NotImplementedError:
    return NotImplementedError(f"the derivative for '{name}' is not implemented.")


def _operands(node: Any) -> tuple[Any, Any]:
    """The saved tensors, or the Python scalars where an operand was one."""
    saved_a, saved_b = node.saved
    a_scalar, b_scalar = node.ctx
    return (saved_a if a_scalar is None else a_scalar), (saved_b if b_scalar is None else b_scalar)


def _save_both(a: Any, b: Any) -> tuple[Tensor | None, Tensor | None]:
    return (a if isinstance(a, Tensor) else None), (b if isinstance(b, Tensor) else None)


def _zeta(node: Any, g: Tensor) -> Sequence[Any]:
    # d/dq zeta(x, q) = -x zeta(x + 1, q)
    if node.needs_input_grad(0):
        raise _not_implemented("zeta")
    x, q = _operands(node)
    ops = _upper.ops
    shifted = ops.add(x, 1.0) if isinstance(x, Tensor) else x + 1.0
    return None, ops.mul(g, ops.neg(ops.mul(_special().zeta(shifted, q), x)))


def _density(a: Any, x: Any) -> Tensor:
    """d/dx P(a, x) = x^(a - 1) e^-x / gamma(a), in logs."""
    ops = _upper.ops
    return ops.exp(ops.sub(ops.sub(ops.mul(ops.sub(a, 1.0), ops.log(x)), x), ops.lgamma(a)))


def _igamma(node: Any, g: Tensor) -> Sequence[Any]:
    if node.needs_input_grad(0):
        raise _not_implemented("igamma: input")
    a, x = _operands(node)
    return None, _upper.ops.mul(g, _density(_as_tensor(a, x), x))


def _igammac(node: Any, g: Tensor) -> Sequence[Any]:
    if node.needs_input_grad(0):
        raise _not_implemented("igammac: input")
    a, x = _operands(node)
    return None, _upper.ops.mul(_upper.ops.neg(g), _density(_as_tensor(a, x), x))


def _as_tensor(a: Any, like: Tensor) -> Tensor:
    """A Python scalar first operand as a tensor of `like`'s dtype and device (lgamma
    takes tensors)."""
    if isinstance(a, Tensor):
        return a
    return _upper.ops.full((), float(a), dtype=like.dtype, device=like.device)


#: The binary special functions (the polynomials have no formula: not differentiable).
SPECIAL_BINARY: tuple[str, ...] = (
    "zeta", "igamma", "igammac",
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
    "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
)  # fmt: skip
SPECIAL_BINARY_FORMULAS: dict[str, tuple[Callable[[Any, Tensor], Sequence[Any]], Any]] = {
    "zeta": (_zeta, _save_both),
    "igamma": (_igamma, _save_both),
    "igammac": (_igammac, _save_both),
}
