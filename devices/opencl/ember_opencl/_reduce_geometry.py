"""Geometry and launches shared by the reduction family of the OpenCL device
(kernels_reduce.py, kernels_softmax.py and their cl/reduce.cl, scan.cl, softmax.cl).

The runtime's ReductionPlan splits a call's dims into kept and reduced ones; here each
list is reordered by input stride (the kernels walk the innermost in-memory dim last,
which merges a transposed input's dims too) and passed to the kernels as one
`RedGeometry` struct by value. Launch plans (the kernels and sizes of one layout: chunk
splits, the column-tile strategy) are cached per call's key. Every program starts with
the shared em_reduce.h (`ember.plugins.kernels`), which fixes what the kernels compute.
"""

from __future__ import annotations

import math
import struct
from importlib import resources
from typing import Any, Final, NamedTuple

import numpy as np

import ember
from ember.plugins import kernels
from ember.plugins.sdk import ReductionPlan, merge_dims
from ember_opencl._launch import LOCAL_SIZE, ctype, global_size_for, kernel, launch, mem

__all__ = [
    "COLUMN_TILE", "GEOMETRY_C", "MIN_CHUNK", "PER_CHUNK", "PER_OUTPUT", "PLANS", "Dim",
    "Launch", "LineGeometry", "Plan", "coalesce", "dims", "enqueue", "line_geometry",
    "line_plan", "pack", "plan_key", "remember", "run_line_plan", "scratch", "sized", "source",
    "split_count",
    "vector_load",
]  # fmt: skip

MAX_DIMS: Final = 16

#: OpenCL C of the geometry every kernel of this family and of softmax takes: kept dims
#: [0, nk), then reduced dims [nk, nk + nr), the innermost of each last; input strides sa
#: and output strides so in elements. red_unravel(g, first, last, o) is the (input,
#: output) offset of row-major position o of dims [first, last).
GEOMETRY_C: Final = f"""
#define RED_MAX_DIMS {MAX_DIMS}
typedef struct {{
    long nk, nr;
    long size[RED_MAX_DIMS];
    long sa[RED_MAX_DIMS];
    long so[RED_MAX_DIMS];
}} RedGeometry;

inline long2 red_unravel(const RedGeometry* g, int first, int last, long o) {{
    long2 offset = (long2)(0, 0);
    for (int d = last - 1; d >= first; d--) {{
        const long size = g->size[d], i = o % size;
        o /= size;
        offset += (long2)(i * g->sa[d], i * g->so[d]);
    }}
    return offset;
}}
"""

_GEOMETRY: Final = struct.Struct(f"{2 + 3 * MAX_DIMS}q")

#: Enough work items to fill the device: fewer outputs than this split their reductions.
SPLIT_TARGET: Final = 256
#: The fewest elements a chunk of a split reduction reads.
MIN_CHUNK: Final = 8192
#: Outputs per work item of reduce_cols (TILE in reduce.cl).
COLUMN_TILE: Final = 256

Dim = tuple[int, int, int]  # (size, input stride, output stride)


def dims(plan: ReductionPlan) -> tuple[list[Dim], list[Dim]]:
    """The plan's kept and reduced dims as (size, input stride, output stride)."""
    kept = list(zip(plan.kept, plan.kept_strides, plan.kept_out_strides, strict=True))
    reduced = zip(plan.reduced, plan.reduced_strides, plan.reduced_out_strides, strict=True)
    return kept, list(reduced)


def plan_key(op: str, device: Any, plan: ReductionPlan) -> tuple[Any, ...]:
    """The key of a call's launch plan: everything of `plan` but its offsets."""
    return (op, device, plan.dtypes, plan.kept, plan.kept_strides, plan.kept_out_strides,
            plan.reduced, plan.reduced_strides, plan.reduced_out_strides)  # fmt: skip


def coalesce(dims: list[Dim]) -> list[Dim]:
    """Sort by input stride, outermost first, and merge neighbours walked as one."""
    dims.sort(key=lambda d: (abs(d[1]), abs(d[2])), reverse=True)
    return merge_dims(dims)


def pack(kept: list[Dim], reduced: list[Dim]) -> bytes:
    dims = kept + reduced
    if len(dims) > MAX_DIMS:
        raise RuntimeError(
            f"opencl reductions support at most {MAX_DIMS} dims after merging, got {len(dims)}"
        )
    pad = [0] * (MAX_DIMS - len(dims))
    return _GEOMETRY.pack(
        len(kept),
        len(reduced),
        *(d[0] for d in dims),
        *pad,
        *(d[1] for d in dims),
        *pad,
        *(d[2] for d in dims),
        *pad,
    )


class LineGeometry(NamedTuple):
    """The geometry of a walk along one dim: the other dims kept, `dim` the reduced one."""

    packed: bytes
    lines: int  # positions of the other dims
    n: int  # the walked dim's length


def line_geometry(kept: list[Dim], walked: Dim) -> LineGeometry:
    """RedGeometry of a walk along the dim `walked`, the `kept` dims around it."""
    kept = coalesce(kept)
    return LineGeometry(pack(kept, [walked]), math.prod(d[0] for d in kept), walked[0])


def split_count(items: int, length: int, min_chunk: int = MIN_CHUNK) -> int:
    """Chunks per item for `items` independent walks of `length` steps each, no chunk
    shorter than `min_chunk` steps."""
    if items >= SPLIT_TARGET or length < 2 * min_chunk:
        return 1
    return min(-(-SPLIT_TARGET // items), length // min_chunk)


# -- sources ---------------------------------------------------------------------------

_templates: dict[str, str] = {}


def source(template: str, defines: str) -> str:
    """The OpenCL C of cl/`template` after `defines`, em_reduce.h and GEOMETRY_C."""
    text = _templates.get(template)
    if text is None:
        text = (resources.files("ember_opencl") / "cl" / template).read_text()
        _templates[template] = text
    return defines + kernels.source("em_reduce.h") + GEOMETRY_C + text


def vector_load(dt: ember.dtype) -> str:
    """Defines A_C8, 8 lanes of the compute type, and A_LOAD8(p, i), their load from p[i]:
    half widens to float8; 64-bit types load as two halves (PoCL's vload8 returns a wrong
    upper half of a double8 or long8 without AVX-512)."""
    if dt is ember.float16:
        vector, load = "float8", "vload_half8(0, (p) + (i))"
    elif dt is ember.bfloat16:  # the top halves of floats
        vector, load = "float8", "as_float8(convert_uint8(vload8(0, (p) + (i))) << 16)"
    elif dt.itemsize == 8:
        vector = f"{ctype(dt)}8"
        load = f"(({vector})(vload4(0, (p) + (i)), vload4(0, (p) + (i) + 4)))"
    else:
        vector, load = f"{ctype(dt)}8", "vload8(0, (p) + (i))"
    return f"#define A_C8 {vector}\n#define A_LOAD8(p, i) {load}\n"


# -- plans -------------------------------------------------------------------------------


#: Work-group sizes, fixed per kernel because PoCL compiles a kernel again for every new
#: one: kernels with a work item per output or line, and kernels with a work item per
#: chunk of a split walk (few items, each long: small groups spread them over the cores).
PER_OUTPUT: Final = (LOCAL_SIZE,)
PER_CHUNK: Final = (8,)


class Launch(NamedTuple):
    """A kernel and its grid; the kernel's last argument is `items`, its work items."""

    kernel: Any
    global_size: tuple[int]
    local_size: tuple[int]
    items: np.int64


def sized(k: Any, count: int, local: tuple[int]) -> Launch:
    """`k` launched over `count` work items in groups of `local`."""
    return Launch(k, global_size_for(count, 1, local[0]), local, np.int64(count))


def enqueue(dev: Any, step: Launch, args: list[Any]) -> None:
    """Enqueue `step` with `args` (and its count) on dev's current stream."""
    launch(dev, step.kernel, step.global_size, [*args, step.items], step.local_size)


def scratch(dev: Any, count: int) -> ember.Tensor:
    """`count` 8-byte slots from the caching allocator for partial results (of any of
    em_reduce.h's types): once dropped, the in-order queue keeps its block from reuse by
    later kernels until those enqueued before have run."""
    return ember.empty(count, dtype=ember.int64, device=dev)


class Plan(NamedTuple):
    """One planned call; `main` writes the output unless the walk is split, when it
    writes `partials` scratch slots that `finish` combines."""

    main: Launch
    finish: Launch | None
    columns: bool  # main is reduce_cols
    packed: bytes
    partials: int
    length: int  # reduced positions per output (or the walked dim's length)
    nsplit: int


_PLAN_LIMIT: Final = 4096
#: Plans by call key: (op, dtypes, shape, strides, dims, device); cleared when full.
PLANS: dict[tuple[Any, ...], Plan] = {}


def remember(key: tuple[Any, ...], plan: Plan) -> Plan:
    """Store `plan` under `key` in PLANS and return it."""
    if len(PLANS) >= _PLAN_LIMIT:
        PLANS.clear()
    PLANS[key] = plan
    return plan


def line_plan(
    dev: Any,
    text: str,
    names: tuple[str, str, str],
    geo: LineGeometry,
    finish_per_chunk: bool = False,
    slots: int = 1,
) -> Plan:
    """The plan of a walk along one dim: `names` are the kernels of `text` for one work
    item per line, per chunk of a line, and combining the chunks (per line, or per chunk
    with `finish_per_chunk`); split when the lines are too few to fill the device, each
    chunk leaving `slots` partial results."""
    nsplit = split_count(geo.lines, geo.n)
    items = geo.lines * nsplit
    if nsplit == 1:
        main = sized(kernel(dev, text, names[0]), items, PER_OUTPUT)
        return Plan(main, None, False, geo.packed, 0, geo.n, nsplit)
    main = sized(kernel(dev, text, names[1]), items, PER_CHUNK)
    finish = kernel(dev, text, names[2])
    if finish_per_chunk:
        last = sized(finish, items, PER_CHUNK)
    else:
        last = sized(finish, geo.lines, PER_OUTPUT)
    return Plan(main, last, False, geo.packed, items * slots, geo.n, nsplit)


def run_line_plan(dev: Any, plan: Plan, out: Any, out_off: Any, a: Any, a_off: Any) -> None:
    """Enqueue a line_plan on buffers `out` and `a` at element offsets (np.int64) whose
    kernels take (out, out_off, a, a_off, geometry, n), split: (part, a, a_off, geometry,
    n, nsplit) and (out, out_off, part, a, a_off, geometry, n, nsplit)."""
    n, packed = np.int64(plan.length), plan.packed
    if plan.finish is None:
        enqueue(dev, plan.main, [out, out_off, a, a_off, packed, n])
        return
    partials = scratch(dev, plan.partials)  # held until both kernels are enqueued
    part, nsplit = mem(partials), np.int64(plan.nsplit)
    enqueue(dev, plan.main, [part, a, a_off, packed, n, nsplit])
    enqueue(dev, plan.finish, [out, out_off, part, a, a_off, packed, n, nsplit])
