"""DistributedDataParallel: data-parallel training across processes, as PyTorch's.

Each process runs the same model on its share of the batch. At construction DDP checks
that every rank has the same parameters and broadcasts rank 0's parameters and buffers;
during backward its reducer (`_reducer.py`) averages gradients across the ranks in
buckets, overlapping the all-reduces with the rest of backward; forward broadcasts rank
0's buffers (BatchNorm's running statistics) first, as PyTorch's `broadcast_buffers`.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ember import distributed as dist
from ember._device import device
from ember._ops import cat
from ember._tensor import Tensor
from ember.autograd._mode import is_grad_enabled, no_grad
from ember.nn.modules.module import Module
from ember.nn.parallel._reducer import FIRST_BUCKET_BYTES, CommHook, Reducer

_DEFAULT_BUCKET_CAP_MB = 25


class DistributedDataParallel(Module):
    """Wrap `module` so that backward averages its gradients over `process_group`.

    The wrapped model is `self.module` (state-dict keys gain the prefix ``module.``, as in
    PyTorch). Arguments are PyTorch's; `check_reduction` is accepted and ignored (PyTorch
    deprecated it), and `static_graph=True` finds unused parameters once, in the first
    iteration, and reuses that set.
    """

    def __init__(
        self,
        module: Module,
        device_ids: Sequence[int | str | device] | None = None,
        output_device: int | str | device | None = None,
        dim: int = 0,
        broadcast_buffers: bool = True,
        process_group: dist.ProcessGroup | None = None,
        bucket_cap_mb: float | None = None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
    ) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(
                f"DistributedDataParallel expects an ember.nn.Module, got {type(module).__name__}"
            )
        group = process_group if process_group is not None else dist.GroupMember.WORLD
        if group is None:
            raise RuntimeError(
                "DistributedDataParallel: the default process group has not been initialized; "
                "call ember.distributed.init_process_group() first"
            )
        named = _unique_trainable(module)
        if not named:
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't have any "
                "parameter that requires a gradient."
            )
        devices = {p.device for _, p in named}
        self.device_ids = _check_devices(devices, device_ids, output_device)
        self.output_device = self.device_ids[0] if self.device_ids else None
        self.module = module
        self.process_group = group
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        cap = _DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb
        if cap <= 0:
            raise ValueError(f"DistributedDataParallel: bucket_cap_mb must be positive, got {cap}")
        self.bucket_bytes_cap = int(cap * 1024 * 1024)
        first = FIRST_BUCKET_BYTES if bucket_cap_mb is None else self.bucket_bytes_cap
        _check_same_model(group, named)
        with no_grad():
            _broadcast_coalesced(group, [p for _, p in named] + _buffers(module))
        self.reducer = Reducer(
            [p for _, p in named],
            [f"module.{name}" for name, _ in named],
            group,
            [first, self.bucket_bytes_cap],
            find_unused_parameters,
            gradient_as_bucket_view,
            static_graph,
        )

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self.device_ids:
            target = self.device_ids[0]
            inputs, kwargs = _to_device(inputs, target), _to_device(kwargs, target)
        if self.broadcast_buffers and self.require_forward_param_sync:
            buffers = _buffers(self.module)
            if buffers and self.process_group.size() > 1:
                with no_grad():
                    _broadcast_coalesced(self.process_group, buffers)
        output = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync:
            self.reducer.prepare_for_backward(output)
        else:
            self.reducer.disarm()
        return output

    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Within this context, backward accumulates gradients locally and communicates
        nothing; the first synchronised backward after it averages what accumulated."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def register_comm_hook(self, state: Any, hook: CommHook) -> None:
        """Reduce each bucket with `hook(state, bucket) -> Future` instead of the built-in
        averaging all-reduce (see `ember.distributed.algorithms.ddp_comm_hooks`). The
        future's value (a tensor, or a list of one) becomes the bucket's averaged
        gradients. Only one hook can be registered, before training starts."""
        if not callable(hook):
            raise TypeError("DistributedDataParallel.register_comm_hook: hook must be callable")
        self.reducer.register_comm_hook(state, hook)

    def extra_repr(self) -> str:
        return (
            f"bucket_cap_mb={self.bucket_bytes_cap / 2**20:g}, buckets={self.reducer.bucket_count}"
        )


def _unique_trainable(module: Module) -> list[tuple[str, Tensor]]:
    seen: set[int] = set()
    named: list[tuple[str, Tensor]] = []
    for name, param in module.named_parameters():
        if param.requires_grad and id(param) not in seen:
            seen.add(id(param))
            named.append((name, param))
    return named


def _buffers(module: Module) -> list[Tensor]:
    seen: set[int] = set()
    out: list[Tensor] = []
    for buffer in module.buffers():
        if id(buffer) not in seen:
            seen.add(id(buffer))
            out.append(buffer)
    return out


def _check_devices(
    devices: set[device],
    device_ids: Sequence[int | str | device] | None,
    output_device: int | str | device | None,
) -> list[device]:
    if device_ids is None and output_device is None:
        return []
    kinds = {d.type for d in devices}
    if len(devices) > 1 or kinds == {"cpu"}:
        raise ValueError(
            "DistributedDataParallel device_ids and output_device arguments only work with "
            "single-device GPU modules, but got device_ids "
            f"{list(device_ids) if device_ids is not None else None}, output_device "
            f"{output_device}, and module parameters {sorted(str(d) for d in devices)}."
        )
    if device_ids is None or len(device_ids) != 1:
        raise ValueError(
            "DistributedDataParallel: device_ids can only be None or a list of one device "
            f"for a single-device module, got {device_ids}"
        )
    (only,) = devices
    wanted = _as_device(device_ids[0], only.type)
    if wanted != only:
        raise ValueError(
            f"DistributedDataParallel: device_ids {list(device_ids)} name {wanted}, but the "
            f"module's parameters are on {only}"
        )
    return [wanted]


def _as_device(value: int | str | device, kind: str) -> device:
    if isinstance(value, int):
        return device(kind, value)
    return device(value)


def _to_device(value: Any, target: device) -> Any:
    if isinstance(value, Tensor):
        return value.to(target)
    if isinstance(value, tuple):
        return tuple(_to_device(v, target) for v in value)
    if isinstance(value, list):
        return [_to_device(v, target) for v in value]
    if isinstance(value, dict):
        return {k: _to_device(v, target) for k, v in value.items()}
    return value


def _check_same_model(group: dist.ProcessGroup, named: list[tuple[str, Tensor]]) -> None:
    """Every rank must hold the same parameters (count, shapes, dtypes) before training."""
    if group.size() == 1:
        return
    layout = repr([(tuple(p.shape), str(p.dtype)) for _, p in named])
    rows = group.exchange([len(named), zlib.crc32(layout.encode())])
    if all(row == rows[0] for row in rows):
        return
    counts = ", ".join(f"rank {r}: {row[0]} parameters" for r, row in enumerate(rows))
    raise RuntimeError(
        "DistributedDataParallel expects the same model on every rank, but the ranks' "
        f"parameters differ in number, shape or dtype ({counts}); this rank "
        f"({group.rank()}) has {layout}"
    )


def _broadcast_coalesced(group: dist.ProcessGroup, tensors: list[Tensor]) -> None:
    """Overwrite `tensors` with rank 0's: one flat broadcast per (dtype, device)."""
    if group.size() == 1 or not tensors:
        return
    kinds: dict[tuple[str, str], list[Tensor]] = {}
    for tensor in tensors:
        kinds.setdefault((str(tensor.dtype), str(tensor.device)), []).append(tensor)
    for members in kinds.values():
        flat = cat([t.detach().reshape(-1) for t in members])
        group.broadcast_work(flat, 0, check=False, blocking=True)
        offset = 0
        for tensor in members:
            n = tensor.numel()
            tensor.detach().copy_(flat[offset : offset + n].view(tensor.shape))
            offset += n
