"""Rprop (Riedmiller & Braun): per-element step sizes grown or shrunk by the gradient's sign."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._ops import full_like, mul, sign, where, zeros_like
from ember.optim._flags import flags
from ember.optim._updates import addcmul_
from ember.optim.optimizer import Optimizer, ParamsT, _step_tensor

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """The step size of an element grows by eta+ while its gradient keeps its sign and
    shrinks by eta- when it flips (that step is then skipped), within `step_sizes`."""

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        if not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {
            "lr": lr,
            "etas": tuple(etas),
            "step_sizes": tuple(step_sizes),
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
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            for p, grad in self._gradients(group):
                param_state = self.state[p]
                if not param_state:
                    param_state["step"] = _step_tensor(0.0)
                    param_state["prev"] = zeros_like(p)
                    param_state["step_size"] = full_like(grad, group["lr"])
                self._advance_step(param_state)
                prev, step_size = param_state["prev"], param_state["step_size"]
                agreement = sign(mul(grad, prev))
                flipped = agreement < 0
                # A tensor of the parameter dtype, so the etas are not rounded to float32.
                keep = where(flipped, etaminus, full_like(grad, 1.0))
                factor = where(agreement > 0, etaplus, keep)
                step_size.mul_(factor).clamp_(step_size_min, step_size_max)
                grad = where(flipped, 0.0, grad)
                addcmul_(p, sign(grad), step_size, -1)
                prev.copy_(grad)
        return loss
