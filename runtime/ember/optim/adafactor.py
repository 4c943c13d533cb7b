"""Adafactor (Shazeer & Stern): second moments factored into row and column means.

PyTorch's variant: the relative step size is min(lr, 1/sqrt(step)), scaled by the
parameter's RMS (at least eps2); the second-moment decay is 1 - step**beta2_decay; each
update is clipped to an RMS of at most `d`. Tensors with more than one dimension keep
`row_var` and `col_var` (means of grad**2 over the last and the second-to-last dimension);
vectors and scalars keep a full `variance`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._dtype_info import finfo
from ember._ops import matmul, mul, norm, zeros, zeros_like
from ember._tensor import Tensor
from ember.optim._updates import lerp_
from ember.optim.optimizer import Optimizer, ParamsT, _step_tensor

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """torch.optim.Adafactor: same options, group keys, state keys and step-for-step results."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        beta2_decay: float = -0.8,
        eps: tuple[float | None, float] = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not lr >= 0.0:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not beta2_decay <= 0.0:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not eps[0] >= 0.0:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not eps[1] >= 0.0:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not d >= 1.0:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not weight_decay >= 0.0:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {
            "lr": lr,
            "beta2_decay": beta2_decay,
            "eps": eps,
            "d": d,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr = group["lr"]
            lr = float(lr.item()) if isinstance(lr, Tensor) else lr
            beta2_decay = group["beta2_decay"]
            eps1, eps2 = group["eps"]
            d = group["d"]
            weight_decay = group["weight_decay"]
            for p, grad in self._gradients(group):
                state = self.state[p]
                if not state:
                    _init_state(state, grad)
                if eps1 is None:  # as in PyTorch, the group's first parameter fixes it
                    eps1 = finfo(p.dtype).eps
                step = self._advance_step(state)
                one_minus_beta2 = step**beta2_decay
                rho = min(lr, 1 / (step**0.5))
                # The step size uses the parameter's RMS before weight decay shrinks it.
                alpha = max(eps2, float(norm(p).item()) / (p.numel() ** 0.5)) * rho
                if weight_decay != 0:
                    p.mul_(1 - lr * weight_decay)
                if grad.dim() > 1:
                    row_var, col_var = state["row_var"], state["col_var"]
                    # mean of grad**2 as PyTorch computes it: the squared norm over the size
                    row_mean = norm(grad, dim=-1, keepdim=True).square_().div_(grad.size(-1))
                    lerp_(row_var, row_mean, one_minus_beta2)
                    col_mean = norm(grad, dim=-2, keepdim=True).square_().div_(grad.size(-2))
                    lerp_(col_var, col_mean, one_minus_beta2)
                    var_estimate = matmul(row_var, col_var)
                    var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
                else:
                    variance = state["variance"]
                    lerp_(variance, mul(grad, grad), one_minus_beta2)
                    var_estimate = variance.clone()
                # eps1 is squared because the estimate is square-rooted next.
                update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_().mul_(grad)
                rms = float(norm(update).item()) / ((update.numel() ** 0.5) * d)
                p.add_(update, alpha=-alpha / max(1.0, rms))
        return loss


def _init_state(state: dict[str, Any], grad: Tensor) -> None:
    """Factored row/column moments for matrices and batches of them, a full one otherwise."""
    state["step"] = _step_tensor(0.0)
    if grad.dim() > 1:
        shape = list(grad.shape)
        row_shape, col_shape = [*shape[:-1], 1], [*shape[:-2], 1, shape[-1]]
        state["row_var"] = zeros(row_shape, dtype=grad.dtype, device=grad.device)
        state["col_var"] = zeros(col_shape, dtype=grad.dtype, device=grad.device)
    else:
        state["variance"] = zeros_like(grad)
