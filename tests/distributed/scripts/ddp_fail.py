"""A DDP job whose rank 1 raises inside backward (from a parameter's gradient hook) while
rank 0 waits for the gradient buckets: the launcher must end the whole job quickly."""

import ember
import ember.distributed as dist
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
model = DDP(nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2)))
if dist.get_rank() == 1:

    def fail(grad: ember.Tensor) -> ember.Tensor:
        raise ValueError("rank 1 fails inside backward")

    model.module[0].weight.register_hook(fail)
model(ember.randn(3, 4)).sum().backward()
dist.barrier()
print(f"rank {dist.get_rank()} finished: the failure did not stop the job", flush=True)
