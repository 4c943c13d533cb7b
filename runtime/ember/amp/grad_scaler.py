"""`ember.amp.GradScaler`: loss scaling for mixed-precision training, as torch.amp.GradScaler.

The scale lives on the host (a Python float); finding inf/NaN in the gradients costs one
host read per optimizer step: the sum of `grad * 0` over all gradients, which is 0 exactly
when every gradient is finite (inf * 0 and NaN * 0 are NaN).
"""

from __future__ import annotations

import enum
import warnings
from collections.abc import Iterable
from typing import Any

from ember import _device
from ember import _dtype as dtypes
from ember._ops import mul, sum, tensor
from ember._tensor import Tensor
from ember.autograd import no_grad

__all__ = ["GradScaler", "OptState"]


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


class GradScaler:
    """Scale the loss, unscale the gradients, skip steps whose gradients are not finite."""

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = device
        if enabled and _device.device_count(device) == 0:
            warnings.warn(
                f"ember.amp.GradScaler is enabled, but {device} is not available. Disabling.",
                stacklevel=2,
            )
            enabled = False
        self._enabled = enabled
        if growth_factor <= 1.0:
            raise ValueError("The growth factor must be > 1.0.")
        if backoff_factor >= 1.0:
            raise ValueError("The backoff factor must be < 1.0.")
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._per_optimizer: dict[int, dict[str, Any]] = {}

    def is_enabled(self) -> bool:
        return self._enabled

    def _state(self, optimizer: Any) -> dict[str, Any]:
        return self._per_optimizer.setdefault(
            id(optimizer), {"stage": OptState.READY, "found_inf": False}
        )

    def scale(self, outputs: Any) -> Any:
        """`outputs` (a tensor or nested lists/tuples of them) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            factor = tensor(self._scale, dtype=dtypes.float32, device=outputs.device)
            return mul(outputs, factor)
        if isinstance(outputs, Iterable):
            scaled = [self.scale(o) for o in outputs]
            return type(outputs)(scaled) if isinstance(outputs, (list, tuple)) else scaled
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer: Any) -> None:
        """Divide the optimizer's gradients by the scale, in place, and look for inf/NaN."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        state["found_inf"] = self._unscale_grads(optimizer, 1.0 / self._scale)
        state["stage"] = OptState.UNSCALED

    def _unscale_grads(self, optimizer: Any, inverse: float) -> bool:
        with no_grad():
            checks = self._unscale_each(optimizer, inverse)
        return any(c != 0.0 for c in checks)

    def _unscale_each(self, optimizer: Any, inverse: float) -> list[float]:
        checks = []
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if g.dtype is dtypes.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                g.mul_(inverse)
                checks.append(float(sum(mul(g, 0.0)).item()))
        return checks

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale if needed, then `optimizer.step()` unless a gradient is inf/NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._state(optimizer)
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale: Any = None) -> None:
        """Back off after an inf/NaN step, grow after `growth_interval` clean ones."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale)
        else:
            if not self._per_optimizer:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(s["found_inf"] for s in self._per_optimizer.values()):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
        self._per_optimizer.clear()

    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def state_dict(self) -> dict[str, Any]:
        """torch's keys; {} when disabled."""
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._growth_tracker,
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved "
                "from a disabled instance of GradScaler."
            )
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
