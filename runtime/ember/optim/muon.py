"""Muon (Jordan et al.): momentum whose update is orthogonalised by a Newton-Schulz iteration.

Only for 2-D parameters (hidden layers' weight matrices), as in PyTorch. PyTorch runs the
iteration in bfloat16; ember has no bfloat16, so it runs in the parameter's dtype, which is the
same algorithm with fewer rounding errors (results agree with PyTorch's to bfloat16 precision,
and to the last bits with the same iteration run in the parameter's dtype).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ember._ops import addmm, mm, norm, zeros_like
from ember._tensor import Tensor
from ember.optim._updates import lerp_
from ember.optim.optimizer import Optimizer, ParamsT

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


class Muon(Optimizer):
    """torch.optim.Muon: same options, group keys and `momentum_buffer` state."""

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B, DEFAULT_C),
        eps: float = EPS,
        ns_steps: int = DEFAULT_NS_STEPS,
        adjust_lr_fn: str | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not lr >= 0.0:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not momentum >= 0.0:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not weight_decay >= 0.0:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {
            "lr": lr,
            "weight_decay": weight_decay,
            "momentum": momentum,
            "nesterov": nesterov,
            "ns_coefficients": ns_coefficients,
            "eps": eps,
            "ns_steps": ns_steps,
            "adjust_lr_fn": adjust_lr_fn,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        "Muon only supports 2D parameters whereas we found a parameter with "
                        f"size: {p.size()}"
                    )

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr = group["lr"]
            lr = float(lr.item()) if isinstance(lr, Tensor) else lr
            weight_decay = group["weight_decay"]
            momentum = group["momentum"]
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if grad.ndim != 2:
                    raise ValueError("Param gradient must be a 2D matrix")
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = zeros_like(grad)
                buf = lerp_(state["momentum_buffer"], grad, 1 - momentum)
                update = lerp_(grad.clone(), buf, momentum) if group["nesterov"] else buf
                update = zeropower_via_newtonschulz(
                    update, group["ns_coefficients"], group["ns_steps"], group["eps"]
                )
                adjusted_lr = _adjust_lr(lr, group["adjust_lr_fn"], tuple(p.shape))
                p.mul_(1 - lr * weight_decay)
                p.add_(update, alpha=-adjusted_lr)
        return loss


def zeropower_via_newtonschulz(
    grad: Tensor, ns_coefficients: Sequence[float], ns_steps: int, eps: float
) -> Tensor:
    """An approximate orthogonalisation U S' V^T of G = U S V^T, S' roughly in [0.5, 1.5].

    PyTorch's quintic iteration X <- a X + (b A + c A^2) X with A = X X^T, from X = G / |G|,
    on the wide orientation (so A is the smaller Gram matrix). A new tensor; `grad` is kept.
    """
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.dim() != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.size(0) > grad.size(1)
    ortho = grad.T.clone() if tall else grad.clone()
    ortho.div_(norm(ortho).clamp(min=eps))
    for _ in range(ns_steps):
        gram = mm(ortho, ortho.T)
        gram_update = addmm(gram, gram, gram, beta=b, alpha=c)
        ortho = addmm(ortho, gram_update, ortho, beta=a)
    return ortho.T if tall else ortho


def _adjust_lr(lr: float, adjust_lr_fn: str | None, shape: tuple[int, ...]) -> float:
    """Scale lr so the orthogonalised update's RMS does not depend on the matrix's aspect."""
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio
