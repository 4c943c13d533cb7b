"""Averaged SGD (Polyak & Juditsky), PyTorch's formulas and state layout."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._ops import add, sub, zeros_like
from ember.optim._flags import check_non_negative, flags
from ember.optim.optimizer import Optimizer, ParamsT, _step_tensor

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """SGD with step lr / (1 + lambd lr t)^alpha, averaging into `ax` from step `t0` on."""

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_non_negative(lr=lr, weight_decay=weight_decay)
        defaults = {
            "lr": lr,
            "lambd": lambd,
            "alpha": alpha,
            "t0": t0,
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
            lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
            for p, grad in self._gradients(group):
                param_state = self.state[p]
                if not param_state:
                    # eta and mu are 0-d tensors of the step dtype, as in PyTorch, so their
                    # values round the same way.
                    param_state["step"] = _step_tensor(0.0)
                    param_state["eta"] = _step_tensor(lr)
                    param_state["mu"] = _step_tensor(1.0)
                    param_state["ax"] = zeros_like(p)
                step = self._advance_step(param_state)
                if group["weight_decay"] != 0:
                    grad = add(grad, p, alpha=group["weight_decay"])
                eta, mu, ax = param_state["eta"], param_state["mu"], param_state["ax"]
                eta_value = float(eta.item())
                p.mul_(1 - lambd * eta_value)
                p.add_(grad, alpha=-eta_value)
                mu_value = float(mu.item())
                if mu_value != 1:
                    ax.add_(sub(p, ax).mul_(mu_value))
                else:
                    ax.copy_(p)
                # PyTorch makes the new values default-dtype tensors before copying them in,
                # so they are rounded to that dtype even when loading made eta float64.
                eta.fill_(_rounded(lr / ((1 + lambd * lr * step) ** alpha)))
                mu.fill_(_rounded(1 / max(1, step - t0)))
        return loss


def _rounded(value: float) -> float:
    return float(_step_tensor(value).item())
