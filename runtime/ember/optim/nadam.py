"""NAdam (Dozat): Adam with Nesterov momentum and PyTorch's momentum-decay schedule."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._ops import add, div, sqrt, zeros_like
from ember.optim._flags import check_non_negative, flags
from ember.optim._updates import addcdiv_, addcmul_, lerp_
from ember.optim.adam import check_adam_options
from ember.optim.optimizer import Optimizer, ParamsT, _step_tensor

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """μ_t = β1 (1 - ½·0.96^(t·ψ)); the update mixes g and m by μ_t and μ_{t+1}."""

    def __init__(
        self,
        params: ParamsT,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_adam_options(lr, betas, eps, weight_decay)
        check_non_negative(momentum_decay=momentum_decay)
        defaults = {
            "lr": lr,
            "betas": tuple(betas),
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
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
            momentum_decay = group["momentum_decay"]
            for p, grad in self._gradients(group):
                param_state = self.state[p]
                if not param_state:
                    param_state["step"] = _step_tensor(0.0)
                    param_state["mu_product"] = _step_tensor(1.0)
                    param_state["exp_avg"] = zeros_like(p)
                    param_state["exp_avg_sq"] = zeros_like(p)
                step = self._advance_step(param_state)
                bias_correction2 = 1 - beta2**step
                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = add(grad, p, alpha=weight_decay)
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
                # The product is a 0-d tensor of the step's dtype, rounded as PyTorch's is.
                mu_product_t = param_state["mu_product"]
                mu_product_t.mul_(mu)
                mu_product = float(mu_product_t.item())
                mu_product_next = mu_product * mu_next
                exp_avg, exp_avg_sq = param_state["exp_avg"], param_state["exp_avg_sq"]
                lerp_(exp_avg, grad, 1 - beta1)
                addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
                denom = sqrt(div(exp_avg_sq, bias_correction2)).add_(eps)
                addcdiv_(p, grad, denom, -lr * (1.0 - mu) / (1.0 - mu_product))
                addcdiv_(p, exp_avg, denom, (-lr * mu_next) / (1.0 - mu_product_next))
        return loss
