"""Stochastic weight averaging (torch.optim.swa_utils): AveragedModel, update_bn, SWALR and the
averaging functions, with PyTorch's semantics.

The `multi_avg_fn` forms take lists of tensors as PyTorch's do; ember updates them one tensor
at a time (it has no fused multi-tensor kernels), with the same results.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

from ember import _dtype
from ember._ops.creation import tensor as make_tensor
from ember._tensor import Tensor
from ember.autograd._mode import no_grad
from ember.nn.modules.module import Module
from ember.nn.modules.normalization import _BatchNorm
from ember.optim._scheduler_base import LRScheduler, per_group
from ember.optim._updates import lerp_
from ember.optim.optimizer import Optimizer

__all__ = [
    "SWALR",
    "AveragedModel",
    "get_ema_avg_fn",
    "get_ema_multi_avg_fn",
    "get_swa_avg_fn",
    "get_swa_multi_avg_fn",
    "update_bn",
]

AvgFn = Callable[[Tensor, Tensor, Any], Tensor]
MultiAvgFn = Callable[[Sequence[Tensor], Sequence[Tensor], Any], None]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."
        )


def get_ema_multi_avg_fn(decay: float = 0.999) -> MultiAvgFn:
    """In place: ema = decay * ema + (1 - decay) * current, for lists of tensors."""
    _check_decay(decay)

    def ema_update(ema: Sequence[Tensor], current: Sequence[Tensor], _: Any) -> None:
        with no_grad():
            for p_ema, p_model in zip(ema, current, strict=True):
                if p_ema.is_floating_point():
                    lerp_(p_ema, p_model, 1 - decay)
                else:
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> MultiAvgFn:
    """In place: the running mean avg += (current - avg) / (n + 1), for lists of tensors."""

    def swa_update(averaged: Sequence[Tensor], current: Sequence[Tensor], n: Any) -> None:
        # PyTorch computes the weight from the count tensor, so it is rounded to float32.
        weight = float((1 / (n + 1)).item()) if isinstance(n, Tensor) else 1.0 / (n + 1)
        with no_grad():
            for p_avg, p_model in zip(averaged, current, strict=True):
                if p_avg.is_floating_point():
                    lerp_(p_avg, p_model, weight)
                else:
                    p_avg.copy_(p_avg + (p_model - p_avg) / (n + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> AvgFn:
    """decay * ema + (1 - decay) * current."""
    _check_decay(decay)

    def ema_update(ema: Tensor, current: Tensor, num_averaged: Any) -> Tensor:
        with no_grad():
            return decay * ema + (1 - decay) * current

    return ema_update


def get_swa_avg_fn() -> AvgFn:
    """averaged + (current - averaged) / (num_averaged + 1)."""

    def swa_update(averaged: Tensor, current: Tensor, num_averaged: Any) -> Tensor:
        with no_grad():
            return averaged + (current - averaged) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of `model` whose parameters (and, with `use_buffers`, buffers) are a running
    average of the model's: equal weights by default (SWA), or `avg_fn`/`multi_avg_fn`."""

    def __init__(
        self,
        model: Module,
        device: Any = None,
        avg_fn: AvgFn | None = None,
        multi_avg_fn: MultiAvgFn | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", make_tensor(0, dtype=_dtype.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The averaged copy's forward."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold `model`'s current parameters into the average (the first call copies them)."""
        if self.use_buffers:
            own: Iterable[Tensor] = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs: Iterable[Tensor] = itertools.chain(model.parameters(), model.buffers())
        else:
            own, theirs = self.parameters(), model.parameters()
        n_averaged: Tensor = self.n_averaged
        first = int(n_averaged.item()) == 0
        averaged, current = [], []
        with no_grad():
            for p_avg, p_model in zip(own, theirs, strict=False):
                p_model_ = p_model.detach().to(p_avg.device)
                averaged.append(p_avg.detach())
                current.append(p_model_)
                if first:
                    p_avg.detach().copy_(p_model_)
            if not first:
                if self.multi_avg_fn is not None:
                    self.multi_avg_fn(averaged, current, n_averaged)
                else:
                    # PyTorch's cpu path: the per-tensor formula (no multi-tensor kernels).
                    avg_fn = self.avg_fn or get_swa_avg_fn()
                    for p_avg, p_model in zip(averaged, current, strict=True):
                        p_avg.copy_(avg_fn(p_avg, p_model, n_averaged))
            if not self.use_buffers:
                for b_avg, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                    b_avg.detach().copy_(b_model.detach().to(b_avg.device))
            n_averaged.add_(1)


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute every batch norm's running statistics with one pass over `loader`
    (a cumulative average: momentum None), then restore the momenta and training mode."""
    momenta: dict[Module, Any] = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr to its `swa_lr` over `anneal_epochs` (cosine or linear), then
    holds it."""

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float | Sequence[float],
        anneal_epochs: int = 10,
        anneal_strategy: Literal["cos", "linear"] = "cos",
        last_epoch: int = -1,
    ) -> None:
        for value, group in zip(
            per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups, strict=True
        ):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def get_lr(self) -> list[float]:
        """Recover the lr the schedule started from, then move it `alpha` of the way to swa_lr."""
        self._warn_outside_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        groups = self.optimizer.param_groups
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [
            g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev_lrs, strict=True)
        ]

    def state_dict(self) -> dict[str, Any]:
        """The attributes, without the optimizer and the anneal function."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes and the anneal function."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
