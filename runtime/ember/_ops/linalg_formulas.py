"""Derivative formulas of the matrix products, written in ember ops.

For C = A @ B: dA = dC @ Bᵀ and dB = Aᵀ @ dC (batched alike for bmm). Each operand is
saved only when the other one needs its gradient, as PyTorch does, so modifying in place
an operand that backward does not read raises nothing. `node.ctx` says which operands
need grad (saved in order: B for dA, then A for dB).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember import _upper
from ember._tensor import Tensor

__all__ = ["bmm_backward", "mm_backward"]


def mm_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """The gradients of mm(a, b)."""
    return _product_backward(node, g, _upper.ops.linalg.mm, _upper.ops.shape.t)


def bmm_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """The gradients of bmm(a, b)."""

    def transposed(t: Tensor) -> Tensor:
        return _upper.ops.shape.transpose(t, 1, 2)

    return _product_backward(node, g, _upper.ops.linalg.bmm, transposed)


def _product_backward(node: Any, g: Tensor, product: Any, transposed: Any) -> Sequence[Any]:
    needs_a, needs_b = node.ctx
    saved = iter(node.saved)
    grad_a = product(g, transposed(next(saved))) if needs_a else None
    grad_b = product(transposed(next(saved)), g) if needs_b else None
    return grad_a, grad_b
