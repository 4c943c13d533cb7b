"""Random and arange kernels of the CPU device (Philox4x32-10, as em_random.h specifies it).

Element i of a tensor draws from counter offset + i, i its row-major logical index, so a
strided target is drawn into a contiguous buffer and copied in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import ember
from ember.plugins import ops
from ember.plugins.sdk import ElementwisePlan, KernelRegistry, Scalar, Tensor
from ember_cpu._lib import check, lib
from ember_cpu.kernels_elementwise import copy_

__all__ = ["arange_", "normal_", "random_", "randperm_", "register", "uniform_"]

_U64: Final = (1 << 64) - 1


def _draw(t: Tensor, op: str, fill: Callable[[int], Any]) -> None:
    """fill(address) draws t.numel() values row-major at address; t may be strided."""
    contiguous = t.is_contiguous()
    target = t if contiguous else ember.empty(t.shape, dtype=t.dtype, device=t.device)
    status = fill(target.data_ptr())
    if status:
        check(status, op)
    if target is not t:
        plan = ElementwisePlan(
            tuple(t.shape), (t.stride(), target.stride()), (t.storage_offset(), 0),
            (t.dtype, t.dtype), False,
        )  # fmt: skip
        copy_(t.untyped_storage(), target.untyped_storage(), plan)


def uniform_(t: Tensor, low: float, high: float, seed: int, offset: int) -> None:
    """t = uniform samples in [low, high) from counters offset, offset + 1, ..."""
    args = (float(low), float(high), seed & _U64, offset & _U64)
    _draw(t, "uniform_", lambda p: lib.em_uniform(t.dtype.index, t.numel(), p, *args))


def normal_(t: Tensor, mean: float, std: float, seed: int, offset: int) -> None:
    """t = normal samples (Box-Muller) from counters offset, offset + 1, ..."""
    args = (float(mean), float(std), seed & _U64, offset & _U64)
    _draw(t, "normal_", lambda p: lib.em_normal(t.dtype.index, t.numel(), p, *args))


def random_(t: Tensor, low: int, high: int, seed: int, offset: int) -> None:
    """t = integers uniform in [low, high), any dtype."""
    if not (-(1 << 63) <= low < 1 << 63 and low < high and high - low <= 1 << 64):
        raise RuntimeError(f"random_: bounds [{low}, {high}) are outside the int64 range")
    args = (low, (high - low) & _U64, seed & _U64, offset & _U64)
    _draw(t, "random_", lambda p: lib.em_random(t.dtype.index, t.numel(), p, *args))


def randperm_(out: Tensor, seed: int, offset: int) -> None:
    """out (int64, 1-d) = a random permutation of 0..n-1: the argsort of n Philox keys."""
    if out.dim() != 1 or out.dtype != ember.int64:
        raise RuntimeError("randperm_: expected a 1-d int64 output")
    status = lib.em_randperm(
        out.shape[0], out.data_ptr(), out.stride()[0], seed & _U64, offset & _U64
    )
    if status:
        check(status, "randperm_")


def arange_(out: Tensor, start: Scalar, step: Scalar) -> None:
    """out[i] = start + i * step for a 1-d contiguous out."""
    if out.dim() != 1 or not out.is_contiguous():
        raise RuntimeError("arange_: expected a 1-d contiguous output")
    use_int = not isinstance(start, float) and not isinstance(step, float)
    status = lib.em_arange(
        out.dtype.index, out.shape[0], out.data_ptr(), float(start), float(step),
        int(start) if use_int else 0, int(step) if use_int else 0, use_int,
    )  # fmt: skip
    if status:
        check(status, "arange_")


def register(registry: KernelRegistry) -> None:
    """Register this family's kernels for the cpu device."""
    registry.register(ops.ARANGE, "cpu", arange_)
    registry.register(ops.UNIFORM, "cpu", uniform_)
    registry.register(ops.NORMAL, "cpu", normal_)
    registry.register(ops.RANDOM, "cpu", random_)
    registry.register(ops.RANDPERM, "cpu", randperm_)
