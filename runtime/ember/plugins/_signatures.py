"""The kernel signatures of each op family: what a device's kernel is called with.

Kernels of the *planned* families (memory, elementwise, reductions, scans and matrix
products) receive their outputs first, then their inputs, then the op's plan
(`ember.plugins.sdk.ElementwisePlan`, `ReductionPlan` or `MatmulPlan`). Every operand is
a `Storage` (its `handle` and, on host-addressable devices, `ptr`), or for a scalar operand
a Python value already converted to the computation dtype; offsets, strides, shapes and
dtypes are in the plan. The runtime has done every check, never calls a kernel on zero
elements, and raises every semantic error itself, so a kernel only computes.

Kernels of the other families (convolution, pooling, indexing, random, softmax) receive
`ember.Tensor`s, read through the public tensor API (`shape`, `stride()`,
`storage_offset()`, `untyped_storage()`, `dtype`); `runtime/ember/_ops/names.py`
documents each one. A kernel enqueues its work on `current_native_stream(device)`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ember._plan import ElementwisePlan, MatmulPlan, ReductionPlan
    from ember._storage import Storage

__all__ = [
    "BinaryKernel",
    "CopyKernel",
    "FillKernel",
    "IndexKernel",
    "MatmulKernel",
    "RandomKernel",
    "ReductionKernel",
    "Scalar",
    "UnaryKernel",
    "WhereKernel",
]

Scalar = bool | int | float


class CopyKernel(Protocol):
    """copy_: dst = src converted from plan.dtypes[1] to plan.dtypes[0]."""

    def __call__(self, dst: Storage, src: Storage, plan: ElementwisePlan, /) -> None: ...


class FillKernel(Protocol):
    """fill_: every element of dst becomes `value` (already of dst's dtype's Python type)."""

    def __call__(self, dst: Storage, value: Scalar, plan: ElementwisePlan, /) -> None: ...


class UnaryKernel(Protocol):
    """out = f(a), both of plan.dtypes[0] (the computation dtype)."""

    def __call__(self, out: Storage, a: Storage, plan: ElementwisePlan, /) -> None: ...


class BinaryKernel(Protocol):
    """out = f(a, b); a and b share the computation dtype plan.dtypes[1]; out is of it, or
    bool for comparisons and logical ops. At most one of a and b is a scalar."""

    def __call__(
        self, out: Storage, a: Storage | Scalar, b: Storage | Scalar, plan: ElementwisePlan, /
    ) -> None: ...


class WhereKernel(Protocol):
    """out = condition ? a : b; condition bool, a and b tensors of out's dtype."""

    def __call__(
        self, out: Storage, condition: Storage, a: Storage, b: Storage, plan: ElementwisePlan, /
    ) -> None: ...


class ReductionKernel(Protocol):
    """One output per kept position, from the input's reduced positions (see ReductionPlan).

    sum/prod: out of the accumulation dtype (int64 for integer and bool inputs), the input
    read in its own dtype; amax/amin: out of the input's dtype, NaN propagates; any/all:
    bool out; argmax/argmin: int64 out, the first index of the extreme, NaN wins; cumsum:
    one reduced dim, out of the accumulation dtype at every position.
    """

    def __call__(self, out: Storage, a: Storage, plan: ReductionPlan, /) -> None: ...


class MatmulKernel(Protocol):
    """mm / bmm: out[z] = a[z] @ b[z] for z < plan.batch (mm: a batch of one), all three of
    one dtype; out is contiguous in the runtime's calls, a and b of any strides (batch
    strides 0 included). float16 accumulates in float32, integers wrap like an int64
    accumulation, bool is "any product term is true"."""

    def __call__(self, out: Storage, a: Storage, b: Storage, plan: MatmulPlan, /) -> None: ...


class IndexKernel(Protocol):
    """index_select, gather, scatter_, take, index_put_ ...: see names.py for each."""

    def __call__(self, *args: Any) -> Any: ...


class RandomKernel(Protocol):
    """uniform_/normal_/random_(t, low, high, seed, offset), randperm_(out, seed, offset)."""

    def __call__(self, *args: Any) -> None: ...
