"""Matrix-product kernels of the OpenCL device: mm and bmm (see cl/gemm.cl).

One tiled GEMM serves both ops, every dtype and every layout: a and b are read in place
through the plan's strides (row-major, transposed or strided views alike) into
local-memory tiles, so no operand is copied first; out is contiguous (the runtime's
contract). What a launch derives from the plan is memoized on it, per device. float16
accumulates in float and is rounded once; integers wrap like the CPU's int64 accumulation.

The tile shape depends on the device: on CPU devices (PoCL) one work item per group walks
a whole tile with a long k loop, on 64x64 tiles when there are enough of them to keep every
compute unit busy, else on 32x32 or 16x32 ones so that small products still spread; on
other devices 16x16 work items share a 64x64 tile.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any, Final

import pyopencl as cl

from ember.plugins.sdk import KernelRegistry, MatmulPlan, Storage, device_index
from ember_opencl._launch import kernel, launch
from ember_opencl.backend import BACKEND

__all__ = ["product", "register"]

_SOURCE: Final = (resources.files("ember_opencl") / "cl" / "gemm.cl").read_text()
_DTYPES: Final = frozenset(
    {"float16", "bfloat16", "float32", "float64", "uint8", "int8", "int32", "int64"}
)
_WIDE: Final = frozenset({"float64", "int64"})  # 8-byte compute types: half-width vectors
_SHAPE: Final = struct.Struct("14q")  # GemmShape in cl/gemm.cl


@dataclass(frozen=True)
class _Tiling:
    """One work shape of gemm.cl: tile, k slice, register block and work-group size."""

    tm: int
    tn: int
    kc: int
    rm: int
    nv: int
    wx: int
    wy: int

    def options(self, vector_width: int) -> str:
        return (
            f"-DTM={self.tm} -DTN={self.tn} -DKC={self.kc} -DRM={self.rm} -DNV={self.nv} "
            f"-DWX={self.wx} -DWY={self.wy} -DVW={vector_width}"
        )


# CPU devices: the largest tile that still gives every compute unit several tiles to take
# (small products run on small tiles rather than on one core), else the smallest.
_CPU_TILINGS: Final = (
    _Tiling(tm=64, tn=64, kc=256, rm=4, nv=2, wx=1, wy=1),
    _Tiling(tm=32, tn=32, kc=256, rm=4, nv=1, wx=1, wy=1),
    _Tiling(tm=16, tn=32, kc=256, rm=4, nv=1, wx=1, wy=1),
)
_TILES_PER_UNIT: Final = 4
_GPU: Final = _Tiling(tm=64, tn=64, kc=16, rm=4, nv=1, wx=16, wy=16)


class _Device:
    """What the launch needs to know about one device, looked up once."""

    __slots__ = ("compute_units", "cpu", "local_bytes")

    def __init__(self, device: Any) -> None:
        info = BACKEND.cl_device(device_index(device))
        self.cpu = bool(info.type & cl.device_type.CPU)
        self.compute_units = int(info.max_compute_units)
        self.local_bytes = int(info.local_mem_size)


_devices: dict[Any, _Device] = {}
_kernels: dict[tuple[Any, ...], tuple[Any, _Tiling]] = {}


def _fitting(tiling: _Tiling, itemsize: int, local_bytes: int) -> _Tiling:
    """tiling with its k slice halved until both staged blocks fit in local memory."""
    kc = tiling.kc
    while kc > 8 and kc * (tiling.tm + tiling.tn) * itemsize > local_bytes:
        kc //= 2
    return tiling if kc == tiling.kc else replace(tiling, kc=kc)


def _choose(info: _Device, m: int, n: int, batch: int) -> int:
    """The index of the CPU tiling for an (m, n) product of `batch` matrices."""
    enough = _TILES_PER_UNIT * info.compute_units
    for choice, tiling in enumerate(_CPU_TILINGS[:-1]):
        if -(-m // tiling.tm) * -(-n // tiling.tn) * batch >= enough:
            return choice
    return len(_CPU_TILINGS) - 1


def _gemm_kernel(device: Any, plan: MatmulPlan) -> tuple[Any, _Tiling]:
    """The kernel and its tiling for `device` and the plan's dtype and size."""
    name = plan.dtypes[0].name
    info = _devices.get(device)
    if info is None:
        info = _devices[device] = _Device(device)
    choice = _choose(info, plan.m, plan.n, plan.batch) if info.cpu else -1
    key = (device, name, choice)
    found = _kernels.get(key)
    if found is not None:
        return found
    if name not in _DTYPES:
        raise RuntimeError(f"mm: the opencl device has no matrix product for {name}")
    wide = name in _WIDE
    tiling = _fitting(_CPU_TILINGS[choice] if info.cpu else _GPU, 8 if wide else 4,
                      info.local_bytes)  # fmt: skip
    options = f"-DEM_{name.upper()} " + tiling.options(4 if wide or not info.cpu else 8)
    found = _kernels[key] = (kernel(device, _SOURCE, "gemm", options), tiling)
    return found


def _launch_arguments(device: Any, plan: MatmulPlan) -> tuple[Any, ...]:
    """The kernel, grid, work-group size and GemmShape of `plan` on `device` (memoized on
    the plan, per device)."""
    memo: dict[Any, tuple[Any, ...]] | None = plan.native.get("opencl")
    if memo is None:
        memo = plan.native["opencl"] = {}
    found = memo.get(device)
    if found is None:
        k_gemm, tiling = _gemm_kernel(device, plan)
        grid = (
            -(-plan.n // tiling.tn) * tiling.wx,
            -(-plan.m // tiling.tm) * tiling.wy,
            plan.batch,
        )
        _, sa, sb = plan.strides
        # Stage along k when it is the operand's unit-stride direction (row-major a,
        # column-major b): contiguous reads on CPUs, coalesced ones on GPUs.
        a_k_fast = sa[2] == 1 and sa[1] != 1
        b_k_fast = sb[1] == 1 and sb[2] != 1
        shape = _SHAPE.pack(plan.m, plan.n, plan.k, *plan.offsets, *sa, *sb, a_k_fast, b_k_fast)
        found = memo[device] = (k_gemm, grid, (tiling.wx, tiling.wy, 1), shape)
    return found


def product(out: Storage, a: Storage, b: Storage, plan: MatmulPlan) -> None:
    """out[z] = a[z] @ b[z]: out contiguous, a and b of any strides (batch strides 0
    included); mm is a batch of one."""
    device = out.device
    k_gemm, grid, local, shape = _launch_arguments(device, plan)
    launch(device, k_gemm, grid, [out.handle, a.handle, b.handle, shape], local)


def register(registry: KernelRegistry) -> None:
    """Register this family's kernels for the opencl device."""
    registry.register("mm", "opencl", product)
    registry.register("bmm", "opencl", product)
