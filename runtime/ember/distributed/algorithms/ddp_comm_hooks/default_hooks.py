"""PyTorch's default DDP communication hooks: plain averaging and 16-bit compression.

Register one with `model.register_comm_hook(state, hook)`, where `state` is the process
group to reduce over (None: the default group). Each returns a Future of the bucket's
averaged gradients. Over MPI a 16-bit bucket still travels as float32 (MPI has no 16-bit
reduction), so compression saves bandwidth only on an engine that reduces 16-bit floats
natively, such as NCCL; the rounding to 16 bits happens either way.
"""

from __future__ import annotations

from typing import Any

from ember import distributed as dist
from ember._dtype import bfloat16, dtype, float16
from ember._tensor import Tensor
from ember.distributed._grad_bucket import GradBucket
from ember.distributed._group import ProcessGroup
from ember.futures import Future

__all__ = ["allreduce_hook", "bf16_compress_hook", "fp16_compress_hook"]


def _group(process_group: ProcessGroup | None) -> ProcessGroup:
    group = process_group if process_group is not None else dist.GroupMember.WORLD
    if group is None:
        raise RuntimeError("DDP communication hook: the default process group is not initialized")
    return group


def allreduce_hook(process_group: ProcessGroup | None, bucket: GradBucket) -> Future[Tensor]:
    """Average the bucket: divide by the world size, then sum across the ranks."""
    group = _group(process_group)
    tensor = bucket.buffer()
    tensor.div_(group.size())
    work = dist.all_reduce(tensor, group=group, async_op=True)
    assert work is not None
    return work.get_future().then(lambda done: done.value()[0])


def _compress_hook(
    target: dtype, process_group: ProcessGroup | None, bucket: GradBucket
) -> Future[Tensor]:
    group = _group(process_group)
    buffer = bucket.buffer()
    compressed = buffer.to(target).div_(group.size())
    work = dist.all_reduce(compressed, group=group, async_op=True)
    assert work is not None

    def decompress(done: Future[Any]) -> Tensor:
        buffer.copy_(done.value()[0])
        return buffer

    return work.get_future().then(decompress)


def fp16_compress_hook(process_group: ProcessGroup | None, bucket: GradBucket) -> Future[Tensor]:
    """Average the bucket in float16 (gradients rounded to half precision)."""
    return _compress_hook(float16, process_group, bucket)


def bf16_compress_hook(process_group: ProcessGroup | None, bucket: GradBucket) -> Future[Tensor]:
    """Average the bucket in bfloat16 (gradients rounded to bfloat16)."""
    return _compress_hook(bfloat16, process_group, bucket)
