"""Adadelta (Zeiler), PyTorch's formulas."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._ops import add, sqrt, zeros_like
from ember.optim._flags import check_non_negative, flags
from ember.optim._updates import addcmul_
from ember.optim.optimizer import Optimizer, ParamsT, _step_tensor

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Running averages of g² and of the update², with decay `rho`; the step scales by `lr`."""

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_non_negative(lr=lr, eps=eps, weight_decay=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            **flags(
                foreach=foreach,
                maximize=maximize,
                capturable=capturable,
                differentiable=differentiable,
            ),
        }
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            rho, eps = group["rho"], group["eps"]
            for p, grad in self._gradients(group):
                param_state = self.state[p]
                if not param_state:
                    param_state["step"] = _step_tensor(0.0)
                    param_state["square_avg"] = zeros_like(p)
                    param_state["acc_delta"] = zeros_like(p)
                self._advance_step(param_state)
                if group["weight_decay"] != 0:
                    grad = add(grad, p, alpha=group["weight_decay"])
                square_avg, acc_delta = param_state["square_avg"], param_state["acc_delta"]
                addcmul_(square_avg.mul_(rho), grad, grad, 1 - rho)
                std = sqrt(add(square_avg, eps))
                delta = sqrt(add(acc_delta, eps)).div_(std).mul_(grad)
                addcmul_(acc_delta.mul_(rho), delta, delta, 1 - rho)
                p.add_(delta, alpha=-group["lr"])
        return loss
