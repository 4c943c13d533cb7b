"""Op plans: everything a kernel needs besides data, computed once per call by the runtime.

PyTorch's TensorIterator is the model. The meta step of an op checks its arguments,
allocates its outputs and builds a plan: the iteration geometry of every operand after
broadcasting and after merging dimensions that are walked as one, per-operand element
offsets and dtypes, and whether a flat loop over `numel` elements suffices. A kernel
receives `(outputs..., inputs..., plan)`, where every operand is a `Storage` (or, for a
scalar operand, a Python value already converted to the computation dtype), and only
computes: it never broadcasts, coalesces or raises a semantic error.

The runtime never launches a kernel on zero elements, so kernels need no size-0 case.
Plans are immutable; the contiguous ones, which most calls use, are cached.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from ember._dtype import dtype

__all__ = [
    "ElementwisePlan",
    "FlatPlans",
    "MatmulPlan",
    "ReductionPlan",
    "coalesce",
    "contiguous_plan",
    "elementwise_plan",
    "flat_plans",
    "merge_dims",
    "reduction_plan",
]

Shape = tuple[int, ...]


class ElementwisePlan:
    """The geometry of an elementwise kernel over `numel` elements.

    Operands are ordered outputs first, then inputs. Every operand, scalars included, has
    an entry in `strides`, `offsets` and `dtypes` (a scalar's strides are all zero and its
    offset is 0).

    * `shape`: the iteration shape after broadcasting and coalescing (`()` for one element);
    * `strides[i]`: operand i's strides in elements over `shape` (0 where it broadcasts);
    * `offsets[i]`: operand i's first element, in elements from the start of its storage;
    * `dtypes[i]`: operand i's dtype (for a scalar, the dtype it was converted to);
    * `contiguous`: every tensor operand is dense and row-major over `shape`, so a flat
      loop `for k in range(numel)` at `offsets[i] + k` is the whole kernel;
    * `flat`: contiguous with every offset 0 (the hot path: each operand starts at its
      storage's first element);
    * `native`: a dict in which a device may memoize what it derives from the plan (packed
      geometry, launch sizes), under its own type name: plans are immutable and the
      runtime reuses them for every call of the same layout.
    """

    __slots__ = (
        "contiguous", "dtypes", "flat", "native", "ndim", "numel", "offsets", "shape",
        "strides",
    )  # fmt: skip

    def __init__(
        self,
        shape: Shape,
        strides: tuple[Shape, ...],
        offsets: tuple[int, ...],
        dtypes: tuple[dtype, ...],
        contiguous: bool,
    ) -> None:
        self.shape: Final = shape
        self.strides: Final = strides
        self.offsets: Final = offsets
        self.dtypes: Final = dtypes
        self.contiguous: Final = contiguous
        self.flat: Final = contiguous and not any(offsets)
        self.native: Final[dict[str, Any]] = {}
        self.ndim: Final = len(shape)
        numel = 1
        for size in shape:
            numel *= size
        self.numel: Final = numel

    def __repr__(self) -> str:
        return (
            f"ElementwisePlan(shape={self.shape}, strides={self.strides}, "
            f"offsets={self.offsets}, dtypes={tuple(d.name for d in self.dtypes)}, "
            f"contiguous={self.contiguous})"
        )


class ReductionPlan:
    """The geometry of a reduction, argmax/argmin or scan: kept dims and reduced dims.

    The output has one element per position of the kept dims; each is computed from the
    input elements at the positions of the reduced dims. Both lists are coalesced
    separately and keep row-major order (the innermost dim last).

    * `kept`, `kept_strides`, `kept_out_strides`: sizes of the kept dims and the input's and
      output's strides over them;
    * `reduced`, `reduced_strides`: sizes of the reduced dims and the input's strides;
    * `reduced_out_strides`: the output's strides over the reduced dims (scans write one
      output per input element; reductions have zeros here);
    * `offsets`, `dtypes`: (output, input);
    * `numel_out` (product of `kept`), `numel_reduced` (product of `reduced`; 0 means the
      identity of the reduction).

    An argmax/argmin or scan plan has exactly one reduced dim, never merged with another,
    so positions along it are the op's indices. `native` is as on ElementwisePlan.
    """

    __slots__ = (
        "dtypes",
        "kept",
        "kept_out_strides",
        "kept_strides",
        "native",
        "numel_out",
        "numel_reduced",
        "offsets",
        "reduced",
        "reduced_out_strides",
        "reduced_strides",
    )

    def __init__(
        self,
        kept: list[tuple[int, int, int]],
        reduced: list[tuple[int, int, int]],
        offsets: tuple[int, int],
        dtypes: tuple[dtype, dtype],
    ) -> None:
        self.kept: Final = tuple(d[0] for d in kept)
        self.kept_strides: Final = tuple(d[1] for d in kept)
        self.kept_out_strides: Final = tuple(d[2] for d in kept)
        self.reduced: Final = tuple(d[0] for d in reduced)
        self.reduced_strides: Final = tuple(d[1] for d in reduced)
        self.reduced_out_strides: Final = tuple(d[2] for d in reduced)
        self.offsets: Final = offsets
        self.dtypes: Final = dtypes
        self.native: Final[dict[str, Any]] = {}
        n = 1
        for size in self.kept:
            n *= size
        self.numel_out: Final = n
        n = 1
        for size in self.reduced:
            n *= size
        self.numel_reduced: Final = n

    def __repr__(self) -> str:
        return (
            f"ReductionPlan(kept={self.kept}, kept_strides={self.kept_strides}, "
            f"kept_out_strides={self.kept_out_strides}, reduced={self.reduced}, "
            f"reduced_strides={self.reduced_strides}, "
            f"reduced_out_strides={self.reduced_out_strides}, offsets={self.offsets}, "
            f"dtypes={tuple(d.name for d in self.dtypes)})"
        )


class MatmulPlan:
    """The geometry of a matrix product: out[z] = a[z] @ b[z] for each z < `batch`.

    out is (batch, m, n), a (batch, m, k), b (batch, k, n); an mm is a batch of one.
    Operands are ordered (out, a, b). Every size is at least 1: the runtime computes empty
    products and k = 0 itself.

    * `shapes[i]`: operand i's (batch, rows, columns);
    * `strides[i]`: operand i's (batch, row, column) strides in elements (a batch stride
      of 0 shares one matrix across the batch);
    * `offsets[i]`, `dtypes[i]`: as on ElementwisePlan (the three dtypes are equal);
    * `contiguous`: every operand is dense and row-major over its shape;
    * `flat`: contiguous with every offset 0 (the hot path);
    * `native`: as on ElementwisePlan.
    """

    __slots__ = (
        "batch", "contiguous", "dtypes", "flat", "k", "m", "n", "native", "offsets", "shapes",
        "strides",
    )  # fmt: skip

    def __init__(
        self,
        batch: int,
        m: int,
        n: int,
        k: int,
        strides: tuple[Shape, Shape, Shape],
        offsets: tuple[int, int, int],
        dtypes: tuple[dtype, dtype, dtype],
    ) -> None:
        self.batch: Final = batch
        self.m: Final = m
        self.n: Final = n
        self.k: Final = k
        self.shapes: Final = ((batch, m, n), (batch, m, k), (batch, k, n))
        self.strides: Final = strides
        self.offsets: Final = offsets
        self.dtypes: Final = dtypes
        self.contiguous: Final = all(map(_dense, self.shapes, strides))
        self.flat: Final = self.contiguous and not any(offsets)
        self.native: Final[dict[str, Any]] = {}

    def __repr__(self) -> str:
        return (
            f"MatmulPlan(batch={self.batch}, m={self.m}, n={self.n}, k={self.k}, "
            f"strides={self.strides}, offsets={self.offsets}, "
            f"dtypes={tuple(d.name for d in self.dtypes)}, contiguous={self.contiguous})"
        )


def _dense(shape: Shape, strides: Shape) -> bool:
    """Whether strides are row-major over shape (dims of size 1 may have any stride)."""
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides), strict=True):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def coalesce(shape: Shape, strides: tuple[Shape, ...]) -> tuple[Shape, tuple[Shape, ...]]:
    """Drop size-1 dims and merge neighbours that every operand walks as one.

    Dim d merges into the dim after it when, for every operand, stride[d] equals
    stride[d + 1] * size[d + 1]: the pair is then one dim of their product.
    """
    count = len(strides)
    sizes: list[int] = []
    merged: list[list[int]] = [[] for _ in range(count)]
    for d, size in enumerate(shape):
        if size == 1:
            continue
        if sizes and all(merged[i][-1] == strides[i][d] * size for i in range(count)):
            sizes[-1] *= size
            for i in range(count):
                merged[i][-1] = strides[i][d]
            continue
        sizes.append(size)
        for i in range(count):
            merged[i].append(strides[i][d])
    return tuple(sizes), tuple(tuple(m) for m in merged)


class FlatPlans(dict[tuple[int, ...], ElementwisePlan]):
    """The contiguous plans of one dtype signature, by shape.

    `plans[shape]` is the hot path's whole plan lookup: one dict subscript (no element
    count to compute), which builds and keeps the plan on a miss.
    """

    __slots__ = ("dtypes", "strides")

    def __init__(self, dtypes: tuple[dtype, ...], scalar_at: int) -> None:
        super().__init__()
        self.dtypes: Final = dtypes
        self.strides: Final = tuple((0,) if i == scalar_at else (1,) for i in range(len(dtypes)))

    def __missing__(self, shape: tuple[int, ...]) -> ElementwisePlan:
        numel = 1
        for size in shape:
            numel *= size
        count = len(self.dtypes)
        plan = ElementwisePlan((numel,), self.strides, (0,) * count, self.dtypes, True)
        if len(self) < 1024:
            self[shape] = plan
        return plan


_FLAT: dict[tuple[object, ...], FlatPlans] = {}


def flat_plans(dtypes: tuple[dtype, ...], scalar_at: int = -1) -> FlatPlans:
    """The shared `FlatPlans` of operands of `dtypes` (operand `scalar_at` a scalar)."""
    key = (scalar_at, *dtypes)
    plans = _FLAT.get(key)
    if plans is None:
        plans = _FLAT[key] = FlatPlans(dtypes, scalar_at)
    return plans


def contiguous_plan(
    shape: tuple[int, ...], dtypes: tuple[dtype, ...], scalar_at: int = -1
) -> ElementwisePlan:
    """The plan of dense, row-major operands of `shape` at offset 0 (cached); operand
    `scalar_at`, if any, is a Python scalar."""
    return flat_plans(dtypes, scalar_at)[shape]


def elementwise_plan(
    shape: Shape,
    strides: tuple[Shape | None, ...],
    offsets: tuple[int, ...],
    dtypes: tuple[dtype, ...],
) -> ElementwisePlan:
    """The plan of operands viewed at `shape` with `strides` (zero where they broadcast).

    A scalar operand passes None for its strides. Callers have broadcast and checked.
    """
    ndim = len(shape)
    full = tuple((0,) * ndim if s is None else s for s in strides)
    sizes, merged = coalesce(shape, full)
    if not sizes:
        return ElementwisePlan((), tuple(() for _ in full), offsets, dtypes, True)
    contiguous = len(sizes) == 1 and all(
        s is None or m[0] == 1 for s, m in zip(strides, merged, strict=True)
    )
    return ElementwisePlan(sizes, merged, offsets, dtypes, contiguous)


def reduction_plan(
    shape: Shape,
    in_strides: Shape,
    out_strides: Shape,
    reduced: tuple[int, ...],
    offsets: tuple[int, int],
    dtypes: tuple[dtype, dtype],
    *,
    merge_reduced: bool = True,
) -> ReductionPlan:
    """The plan of reducing `reduced` dims of an input of `shape` into an output whose
    strides over `shape` are `out_strides` (0 on reduced dims for a reduction)."""
    kept_dims: list[tuple[int, int, int]] = []
    reduced_dims: list[tuple[int, int, int]] = []
    for d, size in enumerate(shape):
        entry = (size, in_strides[d], out_strides[d])
        if d in reduced:
            if size != 1 or not merge_reduced:
                reduced_dims.append(entry)
        elif size != 1:
            kept_dims.append(entry)
    if merge_reduced:
        reduced_dims = merge_dims(reduced_dims)
    elif not reduced_dims:
        reduced_dims = [(1, 0, 0)]
    return ReductionPlan(merge_dims(kept_dims), reduced_dims, offsets, dtypes)


def merge_dims(dims: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Merge neighbouring (size, input stride, output stride) dims, outermost first, that
    both strides walk as one (a device that reorders a plan's dims merges them again)."""
    merged: list[tuple[int, int, int]] = []
    for size, sa, so in dims:
        if merged:
            outer = merged[-1]
            if outer[1] == size * sa and outer[2] == size * so:
                merged[-1] = (outer[0] * size, sa, so)
                continue
        merged.append((size, sa, so))
    return merged
