"""Adagrad (Duchi et al.), with PyTorch's learning-rate decay and initial accumulator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._ops import add, full_like, sqrt
from ember.optim._flags import check_non_negative, flags
from ember.optim._updates import addcdiv_, addcmul_
from ember.optim.optimizer import Optimizer, ParamsT, _step_tensor

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """sum += g²; p -= lr / (1 + (step - 1) * lr_decay) * g / (sqrt(sum) + eps)."""

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_non_negative(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay, eps=eps)
        check_non_negative(initial_accumulator_value=initial_accumulator_value)
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            **flags(foreach=foreach, maximize=maximize, differentiable=differentiable, fused=fused),
            "fused": fused,
        }
        super().__init__(params, defaults)
        # As in PyTorch, the state exists from construction, not from the first step.
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["step"] = _step_tensor(0.0)
                self.state[p]["sum"] = full_like(p, group["initial_accumulator_value"])

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            for p, grad in self._gradients(group):
                param_state = self.state[p]
                if "sum" not in param_state:  # a parameter group added after construction
                    param_state["step"] = _step_tensor(0.0)
                    param_state["sum"] = full_like(p, group["initial_accumulator_value"])
                step = self._advance_step(param_state)
                if group["weight_decay"] != 0:
                    grad = add(grad, p, alpha=group["weight_decay"])
                clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
                state_sum = param_state["sum"]
                addcmul_(state_sum, grad, grad, 1)
                addcdiv_(p, grad, sqrt(state_sum).add_(group["eps"]), -clr)
        return loss
