"""What every OpenCL kernel module uses: queues, buffers, cached kernels, launches, types,
and the strided-geometry struct.

A kernel module builds its OpenCL C from a template (`cl/*.cl`), specialised by `prelude`
blocks per dtype, gets the cl.Kernel once through `kernel(...)` and enqueues it with
`launch(...)` on the current stream of the device. Element offsets (a plan's `offsets`,
`t.storage_offset()`) travel as `long` arguments (plain Python ints are packed as C
`long`); other scalars as NumPy scalars of the kernel parameter's width; strided operands
as one `EmGeometry` struct passed by value (`geometry(...)`, `GEOMETRY_C`).

The hot path avoids pyopencl's `Kernel.set_arg` for by-value arguments: it costs ~7 µs
per scalar here (pyopencl tries the memory-object conversion first), while its multi-arg
setters take ~0.1 µs per call. `setter(kinds)` writes the calls for one kernel signature
once. Those setters are private, so it falls back to the public `set_arg` when a pyopencl
release drops them.
"""

from __future__ import annotations

import struct
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np
import pyopencl as cl

from ember.plugins.sdk import ElementwisePlan, current_native_stream, device_index
from ember_opencl import _programs, profiling
from ember_opencl.backend import BACKEND

__all__ = [
    "GEOMETRY_C",
    "LOCAL_SIZE",
    "MAX_DIMS",
    "MAX_OPERANDS",
    "Setter",
    "at",
    "ctype",
    "geometry",
    "global_size_for",
    "kernel",
    "launch",
    "launcher",
    "mem",
    "plan_geometry",
    "prelude",
    "queue_for",
    "setter",
]

MAX_DIMS: Final = 16
MAX_OPERANDS: Final = 4
#: A work-group size that suits PoCL and GPUs alike; kernels bound-check the tail.
LOCAL_SIZE: Final = 64

# -- queues and buffers ----------------------------------------------------------------


def queue_for(tensor_or_device: Any) -> Any:
    """The cl.CommandQueue of the current stream of a tensor's device (or of a device).

    Call it right before enqueueing on the queue (it marks the stream busy for
    `Stream.query`), rather than keeping the queue around.
    """
    dev = getattr(tensor_or_device, "device", tensor_or_device)
    stream = current_native_stream(dev)
    stream.dirty = True
    return stream.queue


def at(t: Any) -> tuple[Any, int]:
    """Tensor `t`'s cl.Buffer and element offset: a kernel's `(buffer, long offset)` pair."""
    return t.untyped_storage().handle, t.storage_offset()


def mem(t: Any) -> Any:
    """The cl.Buffer behind tensor `t`'s storage (a sub-buffer of an allocator block).

    Index it from the tensor's element offset, `t.storage_offset()`, passed as a `long`.
    """
    return t.untyped_storage().handle


# -- kernels ---------------------------------------------------------------------------

_kernels: dict[tuple[Any, str, str, str], Any] = {}


def kernel(device: Any, source: str, name: str, options: str = "") -> Any:
    """The cl.Kernel `name` of `source` built for `device` (cached per process)."""
    key = (device, source, name, options)
    k = _kernels.get(key)
    if k is None:
        program = _programs.build(BACKEND.context(device_index(device)), source, options)
        k = _kernels[key] = cl.Kernel(program, name)
    return k


# Setting arguments and enqueueing must not interleave between threads sharing a kernel.
_launch_lock = threading.Lock()
_MemoryObject: Final = cl.MemoryObjectHolder
_FAST_SETTERS: Final = all(
    hasattr(cl.Kernel, name)
    for name in ("_set_arg_multi", "_set_arg_buf_multi", "_set_arg_buf_pack_multi")
)
# pyopencl packs Python ints itself with a struct type char; 'l' is 8 bytes on LP64.
_LONG: Final = b"l" if struct.calcsize("l") == 8 else b""
_enqueue: Final = cl.enqueue_nd_range_kernel

#: Sets a kernel's arguments: `set_args(k, args)`.
Setter = Callable[[Any, Sequence[Any]], None]
#: Launches a kernel of one signature: `launch(device, k, global_size, *args)`.
Launcher = Callable[..., Any]
_by_kinds: dict[str, Setter] = {}
_by_types: dict[tuple[type, ...], Setter] = {}
# pyopencl's multi-argument setters (private, so not in its type stubs) for generated code
_SETTERS: Final[dict[str, Any]] = (
    {
        "multi": getattr(cl.Kernel, "_set_arg_multi"),  # noqa: B009
        "pack": getattr(cl.Kernel, "_set_arg_buf_pack_multi"),  # noqa: B009
        "buf": getattr(cl.Kernel, "_set_arg_buf_multi"),  # noqa: B009
        "L": _LONG,
    }
    if _FAST_SETTERS
    else {}
)


def _set_each(k: Any, args: Sequence[Any]) -> None:
    """The public, slow path, for a pyopencl without the multi-argument setters."""
    for i, value in enumerate(args):
        k.set_arg(i, np.int64(value) if type(value) is int else value)


def _setter_calls(kinds: str, indent: str) -> str:
    """Source lines setting arguments a0, a1, ... of a kernel `k`: one call per pyopencl
    multi-setter (buffers, ints packed as C long, by-value bytes)."""
    groups: dict[str, list[str]] = {"m": [], "l": [], "v": []}
    for i, kind in enumerate(kinds):
        groups[kind].append(f"{i}, L, a{i}" if kind == "l" else f"{i}, a{i}")
    return "".join(
        f"{indent}{method}(k, ({', '.join(groups[kind])},))\n"
        for kind, method in (("m", "multi"), ("l", "pack"), ("v", "buf"))
        if groups[kind]
    )


def setter(kinds: str) -> Setter:
    """The argument setter of a kernel signature: one letter per argument, `m` for a
    cl.Buffer (or None), `l` for a Python int passed as C `long`, `v` for a by-value
    NumPy scalar or `bytes` struct.

    It makes at most one call per pyopencl multi-setter, with the argument tuples written
    out in its code (generated once per signature, as pyopencl's own invoker does): ~0.3
    µs for 7 arguments, against ~1 µs when each argument is sorted at every call.
    """
    found = _by_kinds.get(kinds)
    if found is not None:
        return found
    if not _FAST_SETTERS or not _LONG:
        found = _by_kinds[kinds] = _set_each
        return found
    names = ", ".join(f"a{i}" for i in range(len(kinds)))
    lines = [
        f"def set_args(k, args):\n    {names}, = args\n" if kinds else "def set_args(k, args):\n",
        _setter_calls(kinds, "    "),
    ]
    namespace = dict(_SETTERS)
    exec("".join(lines) + "    return None\n", namespace)  # our own text, from `kinds`
    found = _by_kinds[kinds] = namespace["set_args"]
    return found


def _kind(t: type) -> str:
    if t is int:
        return "l"
    if t is type(None) or issubclass(t, _MemoryObject):
        return "m"
    return "v"


def _set_args(k: Any, args: Sequence[Any]) -> None:
    """Set `args` on `k`, through the setter of their types' signature."""
    types = tuple(map(type, args))
    found = _by_types.get(types)
    if found is None:
        found = _by_types[types] = setter("".join(map(_kind, types)))
    found(k, args)


def launch(
    device: Any,
    k: Any,
    global_size: tuple[int, ...],
    args: Sequence[Any],
    local_size: tuple[int, ...] | None = None,
    set_args: Setter | None = None,
) -> Any:
    """Set `args` on `k` and enqueue it on `device`'s current stream; return the cl.Event.

    `args` holds cl.Buffers (or None for NULL), NumPy scalars, `bytes` (structs by value)
    and Python ints, which pass as C `long` (cheaper than np.int64: no object per call).
    A caller that knows its kernel's signature passes `set_args=setter(kinds)`, which
    skips sorting the arguments by type. An empty range enqueues nothing and returns a
    marker, so callers need no size check.

    On PoCL every new local size compiles the kernel again (~30 ms): give a fixed
    `local_size` (see `LOCAL_SIZE`, `global_size_for`) and bound-check in the kernel.
    """
    stream = current_native_stream(device)
    # The event isn't kept: holding it until the next launch makes its release (in the
    # host thread, once complete) cost ~2 us per launch on PoCL. `dirty` tells
    # Stream.query to ask the queue with a marker instead.
    stream.dirty = True
    if 0 in global_size:
        return cl.enqueue_marker(stream.queue)
    recorder = profiling.ACTIVE
    if recorder is None:
        with _launch_lock:
            if set_args is None:
                _set_args(k, args)
            else:
                set_args(k, args)
            return _enqueue(stream.queue, k, global_size, local_size)
    start = time.perf_counter_ns()
    with _launch_lock:
        if set_args is None:
            _set_args(k, args)
        else:
            set_args(k, args)
        event = _enqueue(stream.queue, k, global_size, local_size)
    recorder.add(k.function_name, start, time.perf_counter_ns(), event)
    return event


_launchers: dict[tuple[str, tuple[int, ...] | None], Launcher] = {}


def launcher(kinds: str, local_size: tuple[int, ...] | None = None) -> Launcher:
    """`launch` for one kernel signature (`kinds`, as for `setter`) and local size:
    `launcher(kinds, local)(device, k, global_size, *args)` does what `launch(device, k,
    global_size, args, local, setter(kinds))` does.

    The hot path of small ops: the current-stream lookup and the setter's calls are written
    into one generated function taking the kernel's arguments as its own, which saves two
    Python calls and the argument tuple (~0.2 µs) per launch. An empty range or an active
    timeline profiler goes through `launch`.
    """
    found = _launchers.get((kinds, local_size))
    if found is not None:
        return found
    set_args = setter(kinds)
    namespace: dict[str, Any] = {
        "current_native_stream": current_native_stream,
        "profiling": profiling,
        "launch": launch,
        "set_args": set_args,
        "local_size": local_size,
        "lock": _launch_lock,
        "enqueue": _enqueue,
    }
    params = "".join(f", a{i}" for i in range(len(kinds)))
    args = f"({params[2:]},)" if kinds else "()"
    if set_args is _set_each:  # no fast setters: call the setter, don't inline it
        body = f"        set_args(k, {args})\n"
    else:
        namespace.update(_SETTERS)
        body = _setter_calls(kinds, "        ")
    source = (
        f"def launch_fast(device, k, global_size{params}):\n"
        "    if profiling.ACTIVE is not None or 0 in global_size:\n"
        f"        return launch(device, k, global_size, {args}, local_size, set_args)\n"
        "    stream = current_native_stream(device)\n"
        "    stream.dirty = True\n"
        "    with lock:\n"
        f"{body}"
        "        return enqueue(stream.queue, k, global_size, local_size)\n"
    )
    exec(source, namespace)  # our own text, from `kinds`
    found = _launchers[(kinds, local_size)] = namespace["launch_fast"]
    return found


def global_size_for(n: int, per_item: int = 1, local: int = LOCAL_SIZE) -> tuple[int]:
    """A 1-d global size covering `n` elements, `per_item` per work item, in whole groups."""
    items = -(-n // per_item)
    return (max(-(-items // local), 1) * local,)


# -- types -----------------------------------------------------------------------------

_CTYPES: Final = {
    "bool": "uchar",
    "uint8": "uchar",
    "int8": "char",
    "int32": "int",
    "int64": "long",
    "float16": "half",
    "float32": "float",
    "float64": "double",
    "bfloat16": "ushort",
}


#: OpenCL C of float `{v}` rounded to bfloat16 bits (ushort), one expression so that it
#: fits a store macro.
BF16_ROUND: Final = (
    "(ushort)(isnan({v}) ? 0x7FC0u"
    " : ((as_uint({v}) + 0x7FFFu + ((as_uint({v}) >> 16) & 1u)) >> 16))"
)


def ctype(dtype: Any) -> str:
    """The OpenCL C storage type of an ember dtype (float16 is `half`, bool `uchar`)."""
    return _CTYPES[dtype.name]


def prelude(dtype: Any, prefix: str) -> str:
    """`#define`s for one dtype under `prefix`: _T storage type, _C compute type, _LOAD, _STORE.

    float16 is stored as `half` and computed in `float` through vload_half / vstore_half
    (round to nearest even): no cl_khr_fp16 is needed. bfloat16 is stored as `ushort`, the
    top half of a float: loads shift it up, stores round to nearest even (NaN: 0x7FC0, as
    the cpu device and c10::BFloat16). bool stores `v != 0`.
    """
    name = dtype.name
    storage = _CTYPES[name]
    if name == "bfloat16":
        compute = "float"
        load = "as_float((uint)((p)[i]) << 16)"
        store = f"((p)[i] = {BF16_ROUND.format(v='(float)(v)')})"
    elif name == "float16":
        compute = "float"
        load = "vload_half((i), (p))"
        store = "vstore_half_rte((float)(v), (i), (p))"
    elif name == "bool":
        compute = "uchar"
        load = "((p)[i])"
        store = "((p)[i] = (uchar)((v) != 0))"
    else:
        compute = storage
        load = "((p)[i])"
        store = f"((p)[i] = ({storage})(v))"
    return (
        f"#define {prefix}_T {storage}\n"
        f"#define {prefix}_C {compute}\n"
        f"#define {prefix}_LOAD(p, i) {load}\n"
        f"#define {prefix}_STORE(p, i, v) {store}\n"
    )


# -- strided geometry --------------------------------------------------------------------

#: OpenCL C of the geometry struct and the offset helper: `em_offset(g, k, linear)` is the
#: element offset, for operand k (0 = output), of the element whose row-major index in the
#: (coalesced) shape is `linear`; `g` is the EmGeometry kernel argument itself.
GEOMETRY_C: Final = f"""
#define EM_MAX_DIMS {MAX_DIMS}
#define EM_MAX_OPERANDS {MAX_OPERANDS}
typedef struct {{
    long ndim;
    long shape[EM_MAX_DIMS];
    long stride[EM_MAX_OPERANDS][EM_MAX_DIMS];
}} EmGeometry;

long em_offset_at(const EmGeometry* g, int k, long linear) {{
    long offset = 0;
    for (int d = (int)g->ndim - 1; d > 0; d--) {{
        const long n = g->shape[d];
        offset += (linear % n) * g->stride[k][d];
        linear /= n;
    }}
    return g->ndim > 0 ? offset + linear * g->stride[k][0] : 0;
}}
#define em_offset(g, k, linear) em_offset_at(&(g), (k), (linear))
"""

_GEOMETRY: Final = struct.Struct(f"{1 + MAX_DIMS + MAX_OPERANDS * MAX_DIMS}q")
_geometries: dict[tuple[Any, ...], bytes] = {}
_GEOMETRY_CACHE_LIMIT: Final = 4096


def _pack_geometry(shape: tuple[int, ...], strides: tuple[tuple[int, ...], ...]) -> bytes:
    if len(strides) > MAX_OPERANDS:
        raise RuntimeError(f"opencl geometry: at most {MAX_OPERANDS} operands, got {len(strides)}")
    nd = len(shape)
    if nd > MAX_DIMS:
        raise RuntimeError(
            f"opencl: {nd} dimensions remain after merging shape {list(shape)}; "
            f"kernels support at most {MAX_DIMS}"
        )
    pad = (0,) * (MAX_DIMS - nd)
    flat: list[int] = [nd, *shape, *pad]
    for k in range(MAX_OPERANDS):
        flat += (*strides[k], *pad) if k < len(strides) else (0,) * MAX_DIMS
    return _GEOMETRY.pack(*flat)


def geometry(shape: tuple[int, ...], *strides_per_operand: tuple[int, ...]) -> bytes:
    """The `EmGeometry` struct (bytes, passed by value) of an iteration over `shape`, with
    one stride tuple (in elements, zero where broadcast) per operand, output first.

    Dims are taken as they are: callers pass a plan's coalesced geometry (`plan_geometry`)
    or a tensor's own. Results are cached.
    """
    key = (shape, *strides_per_operand)
    packed = _geometries.get(key)
    if packed is None:
        packed = _pack_geometry(tuple(shape), tuple(map(tuple, strides_per_operand)))
        if len(_geometries) >= _GEOMETRY_CACHE_LIMIT:
            _geometries.clear()
        _geometries[key] = packed
    return packed


def plan_geometry(plan: ElementwisePlan) -> bytes:
    """The `EmGeometry` of a (non-contiguous, so at least 1-d) elementwise plan."""
    return geometry(plan.shape, *plan.strides)
