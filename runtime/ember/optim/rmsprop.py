"""RMSprop (Hinton), optionally centered and with momentum (PyTorch's formulas)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._ops import add, div, mul, sqrt, sub, zeros_like
from ember.optim._flags import flags
from ember.optim._updates import addcdiv_, addcmul_, lerp_
from ember.optim.optimizer import Optimizer, ParamsT, _step_tensor

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop with smoothing `alpha`, `eps`, `weight_decay`, `momentum`, `centered`, `maximize`."""

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        if not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not eps >= 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not momentum >= 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not weight_decay >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not alpha >= 0.0:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
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
        state = self.state
        for group in self.param_groups:
            lr = group["lr"]
            alpha = group["alpha"]
            eps = group["eps"]
            weight_decay = group["weight_decay"]
            momentum = group["momentum"]
            centered = group["centered"]
            for p, grad in self._gradients(group):
                param_state = state[p]
                if not param_state:
                    param_state["step"] = _step_tensor(0.0)
                    param_state["square_avg"] = zeros_like(p)
                    if momentum > 0:
                        param_state["momentum_buffer"] = zeros_like(p)
                    if centered:
                        param_state["grad_avg"] = zeros_like(p)
                self._advance_step(param_state)
                if weight_decay != 0:
                    grad = add(grad, p, alpha=weight_decay)
                square_avg = param_state["square_avg"]
                addcmul_(square_avg.mul_(alpha), grad, grad, 1 - alpha)
                if centered:
                    grad_avg = param_state["grad_avg"]
                    lerp_(grad_avg, grad, 1 - alpha)
                    # PyTorch's square_avg + (-1 * grad_avg) * grad_avg, which is exactly this
                    avg = sqrt(sub(square_avg, mul(grad_avg, grad_avg)))
                else:
                    avg = sqrt(square_avg)
                avg = avg.add_(eps)
                if momentum > 0:
                    buf = param_state["momentum_buffer"]
                    buf.mul_(momentum).add_(div(grad, avg))
                    p.add_(buf, alpha=-lr)
                else:
                    addcdiv_(p, grad, avg, -lr)
        return loss
