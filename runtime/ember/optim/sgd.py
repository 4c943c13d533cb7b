"""Stochastic gradient descent, optionally with momentum (PyTorch's formulas, step for step)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._ops import add, clone
from ember.optim._flags import flags
from ember.optim.optimizer import Optimizer, ParamsT

__all__ = ["SGD"]


class SGD(Optimizer):
    """SGD with momentum, dampening, Nesterov momentum, weight decay (L2) and maximize."""

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            **flags(foreach=foreach, maximize=maximize, differentiable=differentiable, fused=fused),
            "fused": fused,
        }
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient."""
        loss = self._evaluate(closure)
        state = self.state
        for group in self.param_groups:
            lr = group["lr"]
            momentum = group["momentum"]
            dampening = group["dampening"]
            weight_decay = group["weight_decay"]
            nesterov = group["nesterov"]
            for p, grad in self._gradients(group):
                if weight_decay != 0:
                    grad = add(grad, p, alpha=weight_decay)
                if momentum != 0:
                    param_state = state[p]
                    buf = param_state.get("momentum_buffer")
                    if buf is None:
                        buf = param_state["momentum_buffer"] = clone(grad.detach())
                    else:
                        buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                    grad = add(grad, buf, alpha=momentum) if nesterov else buf
                p.add_(grad, alpha=-lr)
        return loss
