"""PyTorch's collective API (`torch.distributed.distributed_c10d`) over Ember's engines.

The default group is made by `init_process_group`; `backend=None` picks by device: MPI for
host tensors and NCCL for cuda tensors where a plugin provides it (`"cpu:mpi,cuda:nccl"`
spells the same). Public collectives check their arguments here and that every rank
agrees (see _group.py); `async_op=True` returns a `Work`, otherwise they return once done,
waiting at most the group's timeout.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Sequence
from datetime import timedelta
from typing import Any, Final

from ember._collective import CollectiveBackend, Communicator, ReduceOp
from ember._dtype import uint8
from ember._ops import empty, stack, zeros
from ember._tensor import Tensor
from ember.distributed._errors import DistError
from ember.distributed._group import ProcessGroup, describe
from ember.distributed._mpi import MPIBackend
from ember.distributed._work import Work, completed_work
from ember.plugins._manager import MANAGER

__all__ = [
    "Backend", "GroupMember", "ProcessGroup", "ReduceOp", "Work", "all_gather",
    "all_gather_into_tensor", "all_gather_object", "all_reduce", "barrier", "broadcast",
    "broadcast_object_list", "destroy_process_group", "get_backend", "get_global_rank",
    "get_group_rank", "get_process_group_ranks", "get_rank", "get_world_size", "group",
    "init_process_group", "is_available", "is_backend_available", "is_gloo_available",
    "is_initialized", "is_mpi_available", "is_nccl_available", "is_torchelastic_launched",
    "new_group", "reduce", "reduce_scatter", "reduce_scatter_tensor",
]  # fmt: skip

DEFAULT_TIMEOUT: Final = timedelta(minutes=30)  # PyTorch's default for CPU backends
_BUILTIN: Final[dict[str, CollectiveBackend]] = {"mpi": MPIBackend()}
_NOT_INITIALISED: Final = (
    "Default process group has not been initialized, please make sure to call init_process_group."
)


class Backend(str):
    """A backend name, lower-cased (`Backend("MPI") == "mpi"`), as `torch.distributed.Backend`."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"

    def __new__(cls, name: str) -> Backend:
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, got {name!r}")
        return super().__new__(cls, name.lower())


class _World:
    """The process-wide state: the default group and every group made from it."""

    def __init__(self) -> None:
        self.default: ProcessGroup | None = None
        self.groups: list[ProcessGroup] = []
        self.count = 0


_WORLD = _World()


class _WorldMeta(type):
    """Gives `group` and `GroupMember` PyTorch's class attribute `WORLD` (the default group)."""

    @property
    def WORLD(cls) -> ProcessGroup | None:
        return _WORLD.default


class group(metaclass=_WorldMeta):
    """`group.WORLD` is the default process group."""


class GroupMember(metaclass=_WorldMeta):
    """`GroupMember.NON_GROUP_MEMBER` is what `new_group` returns to ranks left out."""

    NON_GROUP_MEMBER: Final = -100


# -- availability -------------------------------------------------------------------------


def _engines() -> dict[str, CollectiveBackend]:
    """Built-in engines and those plugins bring (ember_collective_backends)."""
    engines = dict(_BUILTIN)
    MANAGER.ensure_loaded()
    for name, (engine, _) in MANAGER.collective_backends.items():
        engines[name] = engine
    return engines


def is_available() -> bool:
    """Whether ember.distributed can be used: always (engines may still be missing)."""
    return True


def is_backend_available(backend: str) -> bool:
    """Whether the engine named `backend` is installed and usable here."""
    engine = _engines().get(Backend(backend))
    return engine is not None and engine.unavailable_reason() is None


def is_mpi_available() -> bool:
    return is_backend_available("mpi")


def is_nccl_available() -> bool:
    return is_backend_available("nccl")


def is_gloo_available() -> bool:
    """Gloo is not an Ember engine (it does not install on current Pythons): MPI serves CPUs."""
    return False


def is_torchelastic_launched() -> bool:
    """Whether the process was started by a launcher that sets TORCHELASTIC_RUN_ID."""
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def is_initialized() -> bool:
    """Whether `init_process_group` has made the default group."""
    return _WORLD.default is not None


# -- groups ---------------------------------------------------------------------------------


def _parse_backend(backend: str | None) -> list[str]:
    """Engine names in routing order: `"mpi"`, `"cpu:mpi,cuda:nccl"` or None (by device)."""
    engines = _engines()
    if backend is None:
        chosen = ["mpi"]
        nccl = engines.get("nccl")
        if nccl is not None and nccl.unavailable_reason() is None:
            chosen.insert(0, "nccl")
        return chosen
    names: list[str] = []
    for part in str(backend).split(","):
        name = part.split(":", 1)[-1].strip().lower()
        if name not in names:
            names.append(name)
    for name in names:
        if name == Backend.GLOO:
            raise RuntimeError(
                "init_process_group: Ember has no gloo backend; use backend='mpi' for CPU "
                "tensors (it runs on the same machines; see docs/distributed.md)"
            )
        if name not in engines:
            known = ", ".join(sorted(engines))
            raise ValueError(f"init_process_group: unknown backend {name!r} (known: {known})")
    # Engines that read device memory first, so a cuda tensor goes to NCCL, not MPI.
    return sorted(names, key=lambda n: not engines[n].device_types)


def _timeout(timeout: timedelta | None) -> timedelta:
    if timeout is None:
        return DEFAULT_TIMEOUT
    if not isinstance(timeout, timedelta):
        raise TypeError(f"timeout must be a datetime.timedelta, got {type(timeout).__name__}")
    return timeout


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: timedelta | None = None,
    world_size: int = -1,
    rank: int = -1,
    store: Any = None,
    group_name: str = "",
    pg_options: Any = None,
    device_id: Any = None,
) -> None:
    """Make the default group of every process of the job (started by `mpiexec` or
    `python -m ember.distributed.run`); `world_size`/`rank`, when given, must match."""
    if _WORLD.default is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None:
        raise ValueError("init_process_group: MPI and NCCL bootstrap without a store")
    if init_method not in (None, "env://", "mpi://"):
        raise ValueError(
            f"init_process_group: init_method {init_method!r} is not supported: the MPI "
            "launcher (mpiexec, srun, python -m ember.distributed.run) starts the ranks"
        )
    engines = _engines()
    made: list[tuple[CollectiveBackend, Communicator]] = []
    for name in _parse_backend(backend):
        engine = engines[name]
        reason = engine.unavailable_reason()
        if reason is not None:
            raise RuntimeError(f"init_process_group: backend {name!r} is unavailable: {reason}")
        made.append((engine, engine.world()))
    comm = made[0][1]
    _check_launch(comm, world_size, rank)
    default = ProcessGroup(made, list(range(comm.size)), _timeout(timeout), group_name or "0")
    _WORLD.default = default
    _WORLD.groups = [default]
    _WORLD.count = 1


def _check_launch(comm: Communicator, world_size: int, rank: int) -> None:
    expected = world_size if world_size != -1 else int(os.environ.get("WORLD_SIZE", comm.size))
    if expected != comm.size:
        raise ValueError(
            f"init_process_group: world_size is {expected} but the job has {comm.size} "
            "processes; start the ranks with mpiexec -n N or python -m ember.distributed.run"
        )
    if rank not in (-1, comm.rank):
        raise ValueError(f"init_process_group: rank={rank} but this process is rank {comm.rank}")


def _default() -> ProcessGroup:
    if _WORLD.default is None:
        raise ValueError(_NOT_INITIALISED)
    return _WORLD.default


def _get_default_group() -> ProcessGroup:
    """The group `init_process_group` made (PyTorch's private name, used by DDP)."""
    return _default()


def _resolve(group: ProcessGroup | int | None) -> ProcessGroup | None:
    """The group to use, or None on a rank outside it."""
    default = _default()
    if group is None:
        return default
    if isinstance(group, int) and group == GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(group).__name__}")
    if group not in _WORLD.groups:
        raise ValueError("the group was destroyed or belongs to no initialised default group")
    return group


def new_group(
    ranks: Sequence[int] | None = None,
    timeout: timedelta | None = None,
    backend: str | None = None,
    pg_options: Any = None,
    use_local_synchronization: bool = False,
    group_desc: str | None = None,
    device_id: Any = None,
) -> ProcessGroup | int:
    """A group of the global `ranks` (all by default). Every rank of the default group must
    call it, as in PyTorch; ranks left out get `GroupMember.NON_GROUP_MEMBER`."""
    default = _default()
    members = sorted(set(range(default.size()) if ranks is None else ranks))
    if ranks is not None and len(members) != len(list(ranks)):
        raise ValueError(f"new_group: ranks {list(ranks)} has duplicates")
    bad = [r for r in members if not 0 <= r < default.size()]
    if bad:
        raise ValueError(f"new_group: ranks {bad} are outside the world of {default.size()}")
    if backend is not None and set(_parse_backend(backend)) != set(default.backend_names()):
        raise ValueError("new_group: a subgroup uses the default group's backends")
    _WORLD.count += 1
    name = group_desc or str(_WORLD.count - 1)
    made: list[tuple[CollectiveBackend, Communicator]] = []
    engines = _engines()
    for engine_name, (_, comm) in zip(default.backend_names(), default._engines, strict=True):
        sub = _run_split(default, comm, members)
        if sub is not None:
            made.append((engines[engine_name], sub))
    if not made:
        return GroupMember.NON_GROUP_MEMBER
    made_group = ProcessGroup(
        made, members, _timeout(timeout) if timeout else default._timeout, name
    )
    _WORLD.groups.append(made_group)
    return made_group


def _run_split(
    default: ProcessGroup, comm: Communicator, members: list[int]
) -> Communicator | None:
    """Split on the default group's thread, so it stays in order with queued collectives."""
    box: list[Communicator | None] = []

    def step(routed: list[Any]) -> None:
        box.append(comm.split(members))

    if default.size() == 1:
        return comm.split(members)
    default._submit("new_group", [], step, None, blocking=True)
    return box[0]


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Finish a group's queued collectives and free it (the default: every group)."""
    if group is None or group is _WORLD.default:
        for made in reversed(_WORLD.groups):
            made.close()
        _WORLD.default = None
        _WORLD.groups = []
        return
    resolved = _resolve(group)
    if resolved is not None:
        resolved.close()
        _WORLD.groups.remove(resolved)


def get_rank(group: ProcessGroup | int | None = None) -> int:
    """This process's rank in `group` (-1 outside it)."""
    resolved = _resolve(group)
    return -1 if resolved is None else resolved.rank()


def get_world_size(group: ProcessGroup | int | None = None) -> int:
    """The number of ranks in `group` (-1 outside it)."""
    resolved = _resolve(group)
    return -1 if resolved is None else resolved.size()


def get_backend(group: ProcessGroup | None = None) -> Backend:
    """The group's backend name (`"cpu:mpi,cuda:nccl"` style when it has several)."""
    resolved = _resolve(group)
    if resolved is None:
        raise ValueError("Invalid process group specified")
    names = resolved.backend_names()
    if len(names) == 1:
        return Backend(names[0])
    engines = _engines()
    parts = [f"{'cuda' if engines[n].device_types else 'cpu'}:{n}" for n in names]
    return Backend(",".join(parts))


def get_process_group_ranks(group: ProcessGroup) -> list[int]:
    resolved = _resolve(group)
    return [] if resolved is None else resolved.ranks()


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    ranks = get_process_group_ranks(group)
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return ranks[group_rank]


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:
    ranks = get_process_group_ranks(group)
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return ranks.index(global_rank)


# -- collectives ----------------------------------------------------------------------------


def _tensor(value: Any, op: str, what: str = "tensor") -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(
            f"ember.distributed.{op}: {what} must be a Tensor, got {type(value).__name__}"
        )
    return value


def _reduce_op(op: Any, name: str, tensor: Tensor) -> ReduceOp:
    if not isinstance(op, ReduceOp):
        raise TypeError(f"ember.distributed.{name}: op must be a ReduceOp, got {op!r}")
    if op is ReduceOp.AVG and not tensor.dtype.is_floating_point:
        raise ValueError(
            f"ember.distributed.{name}: ReduceOp.AVG needs a floating dtype, "
            f"got {tensor.dtype.name}"
        )
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and tensor.dtype.is_floating_point:
        raise ValueError(f"ember.distributed.{name}: {op!r} needs an integer or bool dtype")
    return op


def _finish(group: ProcessGroup, work: Work, async_op: bool) -> Work | None:
    if async_op:
        return work
    group.wait(work)
    return None


def _skip(async_op: bool, op: str) -> Work | None:
    """A rank outside the group: nothing to do (PyTorch warns and returns)."""
    return completed_work(op) if async_op else None


def all_reduce(
    tensor: Tensor,
    op: ReduceOp = ReduceOp.SUM,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """Reduce `tensor` in place across the group: every rank ends with the result."""
    _tensor(tensor, "all_reduce")
    op = _reduce_op(op, "all_reduce", tensor)
    resolved = _resolve(group)
    if resolved is None:
        return _skip(async_op, "all_reduce")
    return _finish(
        resolved, resolved.all_reduce_work(tensor, op, check=True, blocking=not async_op), async_op
    )


def reduce(
    tensor: Tensor,
    dst: int | None = None,
    op: ReduceOp = ReduceOp.SUM,
    group: ProcessGroup | None = None,
    async_op: bool = False,
    group_dst: int | None = None,
) -> Work | None:
    """Reduce into `dst`'s tensor (the others' tensors are left reduced too, which PyTorch
    allows: their contents after the call are unspecified)."""
    _tensor(tensor, "reduce")
    resolved = _resolve(group)
    if resolved is None:
        return _skip(async_op, "reduce")
    _group_rank(resolved, dst, group_dst, "reduce", "dst")
    op = _reduce_op(op, "reduce", tensor)
    return _finish(
        resolved, resolved.all_reduce_work(tensor, op, check=True, blocking=not async_op), async_op
    )


def _group_rank(
    group: ProcessGroup, rank: int | None, group_rank: int | None, op: str, role: str
) -> int:
    if (rank is None) == (group_rank is None):
        if rank is None and group_rank is None:
            raise ValueError(f"ember.distributed.{op}: give {role} or group_{role}")
        raise ValueError(f"ember.distributed.{op}: give {role} or group_{role}, not both")
    if group_rank is not None:
        if not 0 <= group_rank < group.size():
            raise ValueError(
                f"ember.distributed.{op}: group_{role}={group_rank} is outside the group"
            )
        return group_rank
    ranks = group.ranks()
    if rank not in ranks:
        raise ValueError(
            f"ember.distributed.{op}: {role}={rank} is not a rank of the group {ranks}"
        )
    return ranks.index(rank)


def broadcast(
    tensor: Tensor,
    src: int | None = None,
    group: ProcessGroup | None = None,
    async_op: bool = False,
    group_src: int | None = None,
) -> Work | None:
    """Overwrite `tensor` on every rank with the one of global rank `src`."""
    _tensor(tensor, "broadcast")
    resolved = _resolve(group)
    if resolved is None:
        return _skip(async_op, "broadcast")
    root = _group_rank(resolved, src, group_src, "broadcast", "src")
    return _finish(
        resolved, resolved.broadcast_work(tensor, root, check=True, blocking=not async_op), async_op
    )


def all_gather_into_tensor(
    output_tensor: Tensor,
    input_tensor: Tensor,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """Every rank's `input_tensor`, concatenated along dim 0 (or stacked, when
    `output_tensor` has shape (world_size, *input.shape)), into `output_tensor`."""
    _tensor(output_tensor, "all_gather_into_tensor", "output_tensor")
    _tensor(input_tensor, "all_gather_into_tensor", "input_tensor")
    resolved = _resolve(group)
    if resolved is None:
        return _skip(async_op, "all_gather_into_tensor")
    _same_kind("all_gather_into_tensor", output_tensor, input_tensor)
    if output_tensor.numel() != input_tensor.numel() * resolved.size():
        raise ValueError(
            f"ember.distributed.all_gather_into_tensor: output {describe(output_tensor)} must "
            f"hold world_size ({resolved.size()}) x input {describe(input_tensor)}"
        )
    work = resolved.all_gather_work(output_tensor, input_tensor, check=True, blocking=not async_op)
    return _finish(resolved, work, async_op)


def all_gather(
    tensor_list: list[Tensor],
    tensor: Tensor,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """Fill `tensor_list` (one tensor per rank, each shaped like `tensor`) with every rank's."""
    _tensor(tensor, "all_gather")
    resolved = _resolve(group)
    if resolved is None:
        return _skip(async_op, "all_gather")
    if len(tensor_list) != resolved.size():
        raise ValueError(
            f"ember.distributed.all_gather: tensor_list has {len(tensor_list)} tensors for a "
            f"group of {resolved.size()}"
        )
    for item in tensor_list:
        _tensor(item, "all_gather", "tensor_list's items")
        _same_kind("all_gather", item, tensor)
        if tuple(item.shape) != tuple(tensor.shape):
            raise ValueError(
                f"ember.distributed.all_gather: tensor_list holds {describe(item)}, the input "
                f"is {describe(tensor)}"
            )
    flat = empty((resolved.size(), *tensor.shape), dtype=tensor.dtype, device=tensor.device)
    resolved.all_gather_work(flat, tensor, check=True, blocking=True)
    for i, item in enumerate(tensor_list):
        item.detach().copy_(flat[i])
    return completed_work("all_gather", tensor_list) if async_op else None


def reduce_scatter_tensor(
    output: Tensor,
    input: Tensor,
    op: ReduceOp = ReduceOp.SUM,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """Reduce `input` (world_size x output's elements) and keep this rank's block."""
    _tensor(output, "reduce_scatter_tensor", "output")
    _tensor(input, "reduce_scatter_tensor", "input")
    op = _reduce_op(op, "reduce_scatter_tensor", input)
    resolved = _resolve(group)
    if resolved is None:
        return _skip(async_op, "reduce_scatter_tensor")
    _same_kind("reduce_scatter_tensor", output, input)
    if input.numel() != output.numel() * resolved.size():
        raise ValueError(
            f"ember.distributed.reduce_scatter_tensor: input {describe(input)} must hold "
            f"world_size ({resolved.size()}) x output {describe(output)}"
        )
    work = resolved.reduce_scatter_work(output, input, op, check=True, blocking=not async_op)
    return _finish(resolved, work, async_op)


def reduce_scatter(
    output: Tensor,
    input_list: list[Tensor],
    op: ReduceOp = ReduceOp.SUM,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """`reduce_scatter_tensor` with the input given as one tensor per rank."""
    flat = stack([_tensor(t, "reduce_scatter", "input_list's items") for t in input_list])
    return reduce_scatter_tensor(output, flat, op, group, async_op)


def barrier(
    group: ProcessGroup | None = None, async_op: bool = False, device_ids: Any = None
) -> Work | None:
    """Return once every rank of the group has entered it."""
    resolved = _resolve(group)
    if resolved is None:
        return _skip(async_op, "barrier")
    return _finish(resolved, resolved.barrier_work(check=True, blocking=not async_op), async_op)


def _same_kind(op: str, output: Tensor, tensor: Tensor) -> None:
    if output.dtype != tensor.dtype or output.device != tensor.device:
        raise ValueError(
            f"ember.distributed.{op}: output {describe(output)} and input {describe(tensor)} "
            "must have the same dtype and device"
        )


# -- Python objects (pickled: only for the job's own ranks, never for untrusted data) --------


def _gather_bytes(group: ProcessGroup, payload: bytes) -> list[bytes]:
    lengths = [row[0] for row in group.exchange([len(payload)])]
    width = max(lengths)
    padded = zeros((width,), dtype=uint8)
    if payload:
        padded.numpy()[: len(payload)] = memoryview(payload)
    everyone = empty((group.size(), width), dtype=uint8)
    group.all_gather_work(everyone, padded, check=False, blocking=True)
    rows = everyone.numpy()
    return [rows[r, : lengths[r]].tobytes() for r in range(group.size())]


def all_gather_object(object_list: list[Any], obj: Any, group: ProcessGroup | None = None) -> None:
    """Fill `object_list` with every rank's `obj` (pickled, like PyTorch)."""
    resolved = _resolve(group)
    if resolved is None:
        return
    if len(object_list) != resolved.size():
        raise ValueError(
            f"ember.distributed.all_gather_object: object_list has {len(object_list)} slots "
            f"for a group of {resolved.size()}"
        )
    for i, payload in enumerate(_gather_bytes(resolved, pickle.dumps(obj))):
        object_list[i] = pickle.loads(payload)


def broadcast_object_list(
    object_list: list[Any],
    src: int | None = None,
    group: ProcessGroup | None = None,
    device: Any = None,
    group_src: int | None = None,
) -> None:
    """Replace `object_list`'s items on every rank with `src`'s (pickled, like PyTorch)."""
    resolved = _resolve(group)
    if resolved is None:
        return
    root = _group_rank(
        resolved,
        0 if src is None and group_src is None else src,
        group_src,
        "broadcast_object_list",
        "src",
    )
    mine = pickle.dumps(list(object_list)) if resolved.rank() == root else b""
    received = pickle.loads(_gather_bytes(resolved, mine)[root])
    if len(received) != len(object_list):
        raise DistError(
            f"ember.distributed.broadcast_object_list: rank {root} sent {len(received)} "
            f"objects, this rank's list has {len(object_list)}"
        )
    object_list[:] = received
