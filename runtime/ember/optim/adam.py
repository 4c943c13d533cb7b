"""Adam (Kingma & Ba), optionally AMSGrad and decoupled weight decay (PyTorch's formulas)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._ops import add, copy_, maximum, sqrt, zeros_like
from ember.optim._flags import flags
from ember.optim._multi_tensor_adam import fused_adam_group
from ember.optim._updates import addcdiv_, addcmul_, lerp_
from ember.optim.optimizer import Optimizer, ParamsT, _step_tensor

__all__ = ["Adam"]


class Adam(Optimizer):
    """Adam with bias correction exactly as PyTorch computes it; `amsgrad`, `maximize`."""

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        decoupled_weight_decay: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_adam_options(lr, betas, eps, weight_decay)
        defaults = {
            "lr": lr,
            "betas": tuple(betas),
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "decoupled_weight_decay": decoupled_weight_decay,
            **flags(
                foreach=foreach,
                maximize=maximize,
                capturable=capturable,
                differentiable=differentiable,
                fused=fused,
            ),
            "fused": fused,
        }
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient."""
        loss = self._evaluate(closure)
        state = self.state
        for group in self.param_groups:
            if fused_adam_group(self, group):  # a device's multi-tensor kernel
                continue
            lr = group["lr"]
            beta1, beta2 = group["betas"]
            eps = group["eps"]
            weight_decay = group["weight_decay"]
            amsgrad = group["amsgrad"]
            decoupled = group["decoupled_weight_decay"]
            for p, grad in self._gradients(group):
                param_state = state[p]
                if not param_state:
                    param_state["step"] = _step_tensor(0.0)
                    param_state["exp_avg"] = zeros_like(p)
                    param_state["exp_avg_sq"] = zeros_like(p)
                    if amsgrad:
                        param_state["max_exp_avg_sq"] = zeros_like(p)
                step = self._advance_step(param_state)
                if weight_decay != 0:
                    if decoupled:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = add(grad, p, alpha=weight_decay)
                exp_avg = param_state["exp_avg"]
                exp_avg_sq = param_state["exp_avg_sq"]
                lerp_(exp_avg, grad, 1 - beta1)
                addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2**0.5
                if amsgrad:
                    max_exp_avg_sq = param_state["max_exp_avg_sq"]
                    copy_(max_exp_avg_sq, maximum(max_exp_avg_sq, exp_avg_sq))
                    second = max_exp_avg_sq
                else:
                    second = exp_avg_sq
                denom = sqrt(second).div_(bias_correction2_sqrt).add_(eps)
                addcdiv_(p, exp_avg, denom, -step_size)
        return loss


def check_adam_options(
    lr: float, betas: tuple[float, float], eps: float, weight_decay: float
) -> None:
    """PyTorch's argument checks, shared by Adam and AdamW."""
    if not lr >= 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not eps >= 0.0:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not weight_decay >= 0.0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
