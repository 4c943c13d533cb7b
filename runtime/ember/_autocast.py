"""Autocast's dispatch-level cast: the state, the per-device op lists, and the op wrapper.

Each op on PyTorch's autocast lists is defined with `@autocast_op("<name>")`. When no
autocast region is active anywhere (`_active == 0`) the wrapper costs one global read and
calls the op. Inside a region enabled for the tensors' device type it casts the floating
tensor arguments — to the region's dtype for the lower-precision list (matmul, linear,
conv, ...), to float32 for the float32 list (softmax, losses, sums, ...) — through
`ember.to`, so autograd sees the casts and gradients come back in the parameters' dtype.
The op body then runs with autocast suspended (torch redispatches below its Autocast key),
so a composite's own parts are not cast again.

Lists follow PyTorch 2.13's (aten/src/ATen/autocast_mode.cpp), restricted to ops Ember
has: `cpu` uses torch's CPU lists; every other device type uses its CUDA lists.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar, cast

from ember import _dtype as dtypes
from ember import _upper
from ember._tensor import Tensor

__all__ = ["FP32", "LOWER", "STATE", "autocast_op", "call", "default_dtype", "is_active"]

F = TypeVar("F", bound=Callable[..., Any])

_LOWER_COMMON = {"conv1d", "conv2d", "conv_transpose2d", "bmm", "mm", "linear", "matmul"}
_LOWER_COMMON |= {"scaled_dot_product_attention"}
#: ops that run in the autocast dtype, by device kind
LOWER: dict[str, frozenset[str]] = {
    "cpu": frozenset(_LOWER_COMMON),
    "other": frozenset(_LOWER_COMMON),
}
_FP32_LOSSES = {"mse_loss", "l1_loss", "huber_loss", "smooth_l1_loss", "nll_loss"}
_FP32_LOSSES |= {"binary_cross_entropy_with_logits", "cross_entropy"}
_FP32_LOSSES |= {"cosine_embedding_loss", "hinge_embedding_loss", "kl_div", "margin_ranking_loss"}
_FP32_LOSSES |= {"multi_margin_loss", "multilabel_margin_loss", "poisson_nll_loss"}
_FP32_LOSSES |= {"soft_margin_loss", "triplet_margin_loss"}
_FP32_CPU_ONLY = {"ctc_loss", "grid_sampler"}
_FP32_OTHER_ONLY = {"cosine_similarity"}
#: ops that run in float32, by device kind
FP32: dict[str, frozenset[str]] = {
    "cpu": frozenset(_FP32_LOSSES | {"binary_cross_entropy"} | _FP32_CPU_ONLY),
    "other": frozenset(
        _FP32_LOSSES | {"softmax", "log_softmax", "layer_norm", "group_norm"} | _FP32_OTHER_ONLY
    ),
}

_active = 0  # autocast regions enabled in any thread: the disabled fast path reads only this
_active_lock = threading.Lock()


class _State(threading.local):
    def __init__(self) -> None:
        # device type -> (enabled, dtype, cache_enabled); absent means disabled
        self.regions: dict[str, tuple[bool, dtypes.dtype, bool]] = {}
        self.suspended = False
        self.cache: dict[int, tuple[Any, Any]] = {}  # id(leaf) -> (leaf, its cast)
        self.depth = 0


STATE = _State()


def default_dtype(device_type: str) -> dtypes.dtype:
    """torch's defaults: bfloat16 on cpu, float16 elsewhere."""
    if device_type == "cpu":
        return dtypes.bfloat16
    return dtypes.float16


def is_active() -> bool:
    return _active > 0


def _put(device_type: str, region: tuple[bool, dtypes.dtype, bool] | None) -> None:
    """Set (or clear, with None) `device_type`'s state, keeping `_active` in step: it counts
    the enabled states, however they were set (a region or `ember.set_autocast_enabled`)."""
    global _active
    was = STATE.regions.get(device_type)
    if region is None:
        STATE.regions.pop(device_type, None)
    else:
        STATE.regions[device_type] = region
    change = int(region is not None and region[0]) - int(was is not None and was[0])
    if change:
        with _active_lock:
            _active += change


def enter(device_type: str, enabled: bool, dtype: dtypes.dtype, cache: bool) -> Any:
    """Open a region; returns what `leave` needs to restore."""
    previous = STATE.regions.get(device_type)
    _put(device_type, (enabled, dtype, cache))
    STATE.depth += 1
    return previous


def leave(device_type: str, enabled: bool, previous: Any) -> None:
    _put(device_type, previous)
    STATE.depth -= 1
    if STATE.depth == 0:
        STATE.cache.clear()  # torch drops cached casts when the outermost region exits


def set_enabled(device_type: str, enabled: bool) -> None:
    """torch.set_autocast_enabled: turn autocast on or off for `device_type` in this thread,
    outside any region (a region open later, or closing, sets its own state)."""
    region = STATE.regions.get(device_type)
    dtype = region[1] if region is not None else default_dtype(device_type)
    cache = region[2] if region is not None else True
    _put(device_type, (bool(enabled), dtype, cache))


def set_dtype(device_type: str, dtype: dtypes.dtype) -> None:
    """torch.set_autocast_dtype: the dtype autocast casts to for `device_type`."""
    region = STATE.regions.get(device_type)
    enabled = region[0] if region is not None else False
    cache = region[2] if region is not None else True
    _put(device_type, (enabled, dtype, cache))


def _device_type(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    for value in (*args, *kwargs.values()):
        if isinstance(value, Tensor):
            return value._device.type
    return None


def _cast(value: Any, target: dtypes.dtype, cache: bool) -> Any:
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, target, cache) for v in value)
    if not isinstance(value, Tensor):
        return value
    dt = value._dtype
    if not dt.is_floating_point or dt is target or dt is dtypes.float64:
        return value
    # Cache casts of leaves that require grad (weights) for the region, as torch does.
    cacheable = cache and value.requires_grad and value.grad_fn is None
    if cacheable:
        found = STATE.cache.get(id(value))
        if found is not None and found[0] is value and found[1]._dtype is target:
            return found[1]
    out = _upper.ops.to(value, target)
    if cacheable:
        STATE.cache[id(value)] = (value, out)
    return out


def _target(name: str, device_type: str) -> tuple[dtypes.dtype, bool] | None:
    region = STATE.regions.get(device_type)
    if region is None or not region[0]:
        return None
    kind = "cpu" if device_type == "cpu" else "other"
    if name in LOWER[kind]:
        return region[1], region[2]
    if name in FP32[kind]:
        return dtypes.float32, False
    return None


def call(name: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run op `name` (whose body is `fn`) under the open regions' policy for it.

    Hot ops call this from their first line, behind `if _autocast._active and not
    _autocast.STATE.suspended:`; the body then runs with `suspended` set, so `fn` calling
    itself back lands in its ordinary path.
    """
    device_type = _device_type(args, kwargs)
    found = None if device_type is None else _target(name, device_type)
    if kwargs.get("out") is not None:  # out= variants are not autocast, as in torch
        found = None
    if found is None:
        return fn(*args, **kwargs)
    target, cache = found
    args = tuple(_cast(a, target, cache) for a in args)
    kwargs = {k: _cast(v, target, cache) for k, v in kwargs.items()}
    STATE.suspended = True
    try:
        return fn(*args, **kwargs)
    finally:
        STATE.suspended = False


def autocast_op(name: str) -> Callable[[F], F]:
    """Make op `name` follow autocast's policy: a wrapper for ops costing microseconds.

    Disabled, the wrapper adds ~0.2 us (a Python frame); the hottest small ops (mm, bmm,
    matmul, linear) inline the check instead (~30 ns), see `call`.
    """

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def op(*args: Any, **kwargs: Any) -> Any:
            if not _active or STATE.suspended:
                return fn(*args, **kwargs)
            return call(name, fn, *args, **kwargs)

        return cast(F, op)

    return wrap
