"""DistributedSampler: each rank of a data-parallel job reads its own share of a dataset.

As `torch.utils.data.distributed.DistributedSampler`: every rank draws the same permutation
(seeded with `seed + epoch`, so call `set_epoch` each epoch for a new shuffle), pads it by
repeating indices until it divides evenly (or drops the tail with `drop_last=True`), and
takes every `num_replicas`-th index starting at its rank. The ranks' shares are disjoint
(up to the padding) and equally long, so every rank runs the same number of steps.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized

from ember._ops.random import Generator, randperm
from ember.utils.data.sampler import Sampler


class DistributedSampler(Sampler[int]):
    """Indices of `dataset` for one rank of `num_replicas` (default: the default group's)."""

    def __init__(
        self,
        dataset: Sized,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None or rank is None:
            from ember import distributed as dist

            if not dist.is_available() or not dist.is_initialized():
                raise RuntimeError(
                    "DistributedSampler: pass num_replicas and rank, or call "
                    "ember.distributed.init_process_group() first (requires the distributed "
                    "package to be available)"
                )
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if num_replicas < 1:
            raise ValueError(f"DistributedSampler: num_replicas must be >= 1, got {num_replicas}")
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        self.shuffle = shuffle
        self.seed = seed
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            generator = Generator()
            generator.manual_seed(self.seed + self.epoch)
            indices = randperm(n, generator=generator).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[: self.total_size]
        else:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        return iter(indices[self.rank : self.total_size : self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use `epoch` in the shuffle's seed: a new order every epoch, equal on all ranks."""
        self.epoch = epoch
