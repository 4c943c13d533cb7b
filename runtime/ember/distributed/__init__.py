"""ember.distributed: PyTorch's collective API over pluggable communication engines.

`init_process_group(backend="mpi" | "nccl" | None)` makes the default group of the job's
processes (started by `mpiexec` or `python -m ember.distributed.run`); the collectives
(`all_reduce`, `broadcast`, `all_gather`, `reduce_scatter_tensor`, ...) take tensors of any
device. Engines are plugins (`ember_collective_backends`); MPI, on mpi4py, is built in.
docs/distributed.md is the guide.
"""

from __future__ import annotations

from ember._collective import CollectiveBackend, Communicator, ReduceOp
from ember.distributed._errors import DistBackendError, DistError, DistNetworkError, DistStoreError
from ember.distributed._grad_bucket import GradBucket
from ember.distributed._group import ProcessGroup
from ember.distributed._mpi import MPIBackend
from ember.distributed._work import Work
from ember.distributed.distributed_c10d import (
    Backend,
    GroupMember,
    all_gather,
    all_gather_into_tensor,
    all_gather_object,
    all_reduce,
    barrier,
    broadcast,
    broadcast_object_list,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_available,
    is_backend_available,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    is_torchelastic_launched,
    new_group,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
)

__all__ = [
    "Backend", "CollectiveBackend", "Communicator", "DistBackendError", "DistError",
    "DistNetworkError", "DistStoreError", "GradBucket", "GroupMember", "MPIBackend", "ProcessGroup",
    "ReduceOp", "Work",
    "all_gather", "all_gather_into_tensor", "all_gather_object", "all_reduce", "barrier",
    "broadcast", "broadcast_object_list", "destroy_process_group", "get_backend",
    "get_global_rank", "get_group_rank", "get_process_group_ranks", "get_rank",
    "get_world_size", "group", "init_process_group", "is_available", "is_backend_available",
    "is_gloo_available", "is_initialized", "is_mpi_available", "is_nccl_available",
    "is_torchelastic_launched", "new_group", "reduce", "reduce_scatter",
    "reduce_scatter_tensor",
]  # fmt: skip
