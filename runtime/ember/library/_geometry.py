"""The op plan's geometry for a custom op's kernel: what the runtime hands the devices'
own elementwise kernels, for any layout of the tensors a custom kernel receives."""

from __future__ import annotations

from typing import Any

from ember._ops._launch import plan_for
from ember._ops._meta import broadcast_shapes
from ember._plan import ElementwisePlan
from ember._tensor import Tensor

__all__ = ["elementwise_plan"]


def elementwise_plan(out: Tensor, *inputs: Any) -> ElementwisePlan:
    """The plan of computing `out` elementwise from `inputs` (tensors broadcastable to
    out's shape, or Python numbers): the iteration shape after broadcasting and merging
    dims, each operand's strides in elements over it (0 where it broadcasts), offsets from
    each storage's start, dtypes, and whether one flat loop covers it (`plan.contiguous`).
    Operands are ordered out first. Plans are cached by layout, as the runtime's are."""
    tensors = [x for x in inputs if isinstance(x, Tensor)]
    devices = {str(t.device) for t in (out, *tensors)}
    if len(devices) > 1:
        raise RuntimeError(
            f"elementwise_plan: expected all tensors to be on the same device, but found "
            f"{', '.join(sorted(devices))}"
        )
    shapes = [tuple(t.shape) for t in tensors]
    if shapes and broadcast_shapes("elementwise_plan", out._shape, *shapes) != out._shape:
        raise RuntimeError(
            f"elementwise_plan: inputs of shapes {[list(s) for s in shapes]} do not broadcast "
            f"to the output's shape {list(out.shape)}"
        )
    return plan_for(out, tuple(inputs))
