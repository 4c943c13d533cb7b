"""RAdam (Liu et al.): Adam whose adaptive term is switched on once its variance is tractable."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._ops import add, div, mul, sqrt, zeros_like
from ember.optim._flags import flags
from ember.optim._updates import addcmul_, lerp_
from ember.optim.adam import check_adam_options
from ember.optim.optimizer import Optimizer, ParamsT, _step_tensor

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """Rectified Adam: SGD with momentum while rho_t <= 5, rectified Adam after."""

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_adam_options(lr, betas, eps, weight_decay)
        defaults = {
            "lr": lr,
            "betas": tuple(betas),
            "eps": eps,
            "weight_decay": weight_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
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
            lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
            beta1, beta2 = group["betas"]
            for p, grad in self._gradients(group):
                param_state = self.state[p]
                if not param_state:
                    param_state["step"] = _step_tensor(0.0)
                    param_state["exp_avg"] = zeros_like(p)
                    param_state["exp_avg_sq"] = zeros_like(p)
                step = self._advance_step(param_state)
                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = add(grad, p, alpha=weight_decay)
                exp_avg, exp_avg_sq = param_state["exp_avg"], param_state["exp_avg_sq"]
                lerp_(exp_avg, grad, 1 - beta1)
                addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                corrected = mul(div(exp_avg, bias_correction1), lr)
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
                if rho_t > 5.0:
                    rect = (
                        (rho_t - 4)
                        * (rho_t - 2)
                        * rho_inf
                        / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
                    ) ** 0.5
                    adaptive = div(bias_correction2**0.5, sqrt(exp_avg_sq).add_(eps))
                    corrected = corrected.mul_(adaptive).mul_(rect)
                p.add_(corrected, alpha=-1.0)
        return loss
