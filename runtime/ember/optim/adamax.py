"""Adamax (Adam with the infinity norm), PyTorch's formulas."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._ops import abs, add, copy_, maximum, zeros_like
from ember.optim._flags import flags
from ember.optim._updates import addcdiv_, lerp_
from ember.optim.adam import check_adam_options
from ember.optim.optimizer import Optimizer, ParamsT, _step_tensor

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """m = lerp(m, g, 1 - β1); u = max(β2 u, |g| + eps); p -= lr / (1 - β1^t) * m / u."""

    def __init__(
        self,
        params: ParamsT,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_adam_options(lr, betas, eps, weight_decay)
        defaults = {
            "lr": lr,
            "betas": tuple(betas),
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
            beta1, beta2 = group["betas"]
            for p, grad in self._gradients(group):
                param_state = self.state[p]
                if not param_state:
                    param_state["step"] = _step_tensor(0.0)
                    param_state["exp_avg"] = zeros_like(p)
                    param_state["exp_inf"] = zeros_like(p)
                step = self._advance_step(param_state)
                if group["weight_decay"] != 0:
                    grad = add(grad, p, alpha=group["weight_decay"])
                exp_avg, exp_inf = param_state["exp_avg"], param_state["exp_inf"]
                lerp_(exp_avg, grad, 1 - beta1)
                copy_(exp_inf, maximum(exp_inf.mul_(beta2), abs(grad).add_(group["eps"])))
                clr = group["lr"] / (1 - beta1**step)
                addcdiv_(p, exp_avg, exp_inf, -clr)
        return loss
