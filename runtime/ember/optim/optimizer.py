"""The `Optimizer` base class: parameter groups, per-parameter state, state dicts, hooks.

Subclasses implement `step`; the base wraps every subclass's `step` once (at class creation)
so that it runs with grad mode off, runs the step hooks, and marks the optimizer as stepped
for the learning-rate schedulers' call-order warning. Updates are written with in-place
ember ops, so they run on every device.
"""

from __future__ import annotations

import functools
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from typing import Any, TypeAlias

from ember import _dtype
from ember._ops import neg
from ember._ops.creation import tensor
from ember._tensor import Tensor
from ember.autograd import _mode
from ember.autograd._mode import enable_grad
from ember.utils.hooks import HookRegistry, RemovableHandle, run_hooks

__all__ = [
    "Optimizer",
    "ParamsT",
    "register_optimizer_step_post_hook",
    "register_optimizer_step_pre_hook",
    "required",
]

ParamsT: TypeAlias = Iterable[Tensor] | Iterable[dict[str, Any]] | Iterable[tuple[str, Tensor]]
StateDict: TypeAlias = dict[str, Any]


class _RequiredParameter:
    """Marks a default that every parameter group must set (PyTorch's `required`)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required: Any = _RequiredParameter()

_global_step_pre_hooks = HookRegistry()
_global_step_post_hooks = HookRegistry()


def register_optimizer_step_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Run `hook(optimizer, args, kwargs)` before every optimizer's step."""
    return _global_step_pre_hooks.add(hook)


def register_optimizer_step_post_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Run `hook(optimizer, args, kwargs)` after every optimizer's step."""
    return _global_step_post_hooks.add(hook)


def _hooked_step(step: Callable[..., Any]) -> Callable[..., Any]:
    """`step` with grad mode off, step hooks run and the stepped flag set.

    As in PyTorch, hooks see `args` with the optimizer first, pre-hooks may replace
    (args, kwargs), and post-hooks run per optimizer first, then global ones.
    """

    @functools.wraps(step)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        self: Optimizer = args[0]
        if self._in_step:  # a subclass's step calling super().step(): hooks run once
            return step(*args, **kwargs)
        if _global_step_pre_hooks or self._step_pre_hooks:
            args, kwargs = self._run_step_pre_hooks(args, kwargs)
        grad_mode = _mode.STATE
        enabled = grad_mode.enabled
        grad_mode.enabled = False
        self._in_step = True
        try:
            result = step(*args, **kwargs)
        finally:
            grad_mode.enabled = enabled
            self._in_step = False
        self._opt_called = True
        if _global_step_post_hooks or self._step_post_hooks:
            self._step_post_hooks.call_each(self, args, kwargs)
            _global_step_post_hooks.call_each(self, args, kwargs)
        return result

    wrapper._ember_step = True  # type: ignore[attr-defined]
    return wrapper


class Optimizer:
    """Base class of all optimizers: `param_groups`, `state`, `step`, `zero_grad`, state dicts."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_ember_step", False):
            cls.step = _hooked_step(step)  # type: ignore[method-assign]

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._step_pre_hooks = HookRegistry()
        self._step_post_hooks = HookRegistry()
        self._state_dict_pre_hooks = HookRegistry()
        self._state_dict_post_hooks = HookRegistry()
        self._load_state_dict_pre_hooks = HookRegistry()
        self._load_state_dict_post_hooks = HookRegistry()
        self._in_step = False
        self._opt_called = False
        # Python mirrors of the 0-d `step` tensors, so a step needs no device read.
        self._step_values: dict[int, tuple[Tensor, int, float]] = {}
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {type(params).__name__}"
            )
        self.state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if not param_groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    # -- parameter groups -----------------------------------------------------------------

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (the defaults fill the rest)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        if names:
            if len(names) != len(params):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are "
                    "missing"
                )
            param_group["param_names"] = names
        param_group["params"] = params
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    f"{type(p).__name__}"
                )
            if not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            param_group.setdefault(name, default)
        ids = {id(p) for p in params}
        if len(ids) != len(params):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, "
                "this will cause an error",
                stacklevel=3,
            )
        for group in self.param_groups:
            if ("param_names" in param_group) != ("param_names" in group):
                kind = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {kind} to the optimizer"
                )
            if not ids.isdisjoint(id(p) for p in group["params"]):
                raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # -- gradients and steps --------------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter: to None (default), or to zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if grad.grad_fn is not None:
                        grad.detach_()
                    else:
                        grad.requires_grad_(False)
                    grad.zero_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update the parameters once; `closure` re-evaluates the model and returns the loss."""
        raise NotImplementedError

    @staticmethod
    def _evaluate(closure: Callable[[], Any] | None) -> Any:
        """Run the closure with grad enabled (steps run under no_grad)."""
        if closure is None:
            return None
        with enable_grad():
            return closure()

    @staticmethod
    def _gradients(group: dict[str, Any]) -> Iterator[tuple[Tensor, Tensor]]:
        """(param, grad) for each parameter of `group` with a gradient, negated to maximize."""
        maximize = group["maximize"]
        for p in group["params"]:
            grad = p.grad
            if grad is not None:
                yield p, (neg(grad) if maximize else grad)

    def _advance_step(self, state: dict[str, Any]) -> float:
        """Add one to `state["step"]` (a 0-d tensor, as PyTorch keeps it) and return it.

        The value is mirrored in Python and re-read from the tensor only when something else
        wrote to it (its version moved), so a step costs one fill and no host read.
        """
        step_t = state["step"]
        if not isinstance(step_t, Tensor):  # a state dict written with a plain number
            step_t = state["step"] = _step_tensor(float(step_t))
        key = id(step_t)
        mirrored = self._step_values.get(key)
        if mirrored is not None and mirrored[0] is step_t and mirrored[1] == step_t._version:
            value = mirrored[2] + 1.0
        else:
            value = float(step_t.item()) + 1.0
        step_t.fill_(value)
        if value >= 16777216.0 and step_t.dtype is _dtype.float32:
            value = float(step_t.item())  # beyond 2**24 float32 rounds, as PyTorch's does
        self._step_values[key] = (step_t, step_t._version, value)
        return value

    # -- hooks ----------------------------------------------------------------------------

    def register_step_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """`hook(optimizer, args, kwargs) -> None | (args, kwargs)` before each step."""
        return self._step_pre_hooks.add(hook)

    def register_step_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """`hook(optimizer, args, kwargs)` after each step."""
        return self._step_post_hooks.add(hook)

    def register_state_dict_pre_hook(
        self, hook: Callable[[Optimizer], None], prepend: bool = False
    ) -> RemovableHandle:
        """`hook(optimizer)` before `state_dict()` builds the dict."""
        return self._state_dict_pre_hooks.add(hook, prepend=prepend)

    def register_state_dict_post_hook(
        self, hook: Callable[[Optimizer, StateDict], StateDict | None], prepend: bool = False
    ) -> RemovableHandle:
        """`hook(optimizer, state_dict) -> None | state_dict` after `state_dict()`."""
        return self._state_dict_post_hooks.add(hook, prepend=prepend)

    def register_load_state_dict_pre_hook(
        self, hook: Callable[[Optimizer, StateDict], StateDict | None], prepend: bool = False
    ) -> RemovableHandle:
        """`hook(optimizer, state_dict) -> None | state_dict` before loading."""
        return self._load_state_dict_pre_hooks.add(hook, prepend=prepend)

    def register_load_state_dict_post_hook(
        self, hook: Callable[[Optimizer], None], prepend: bool = False
    ) -> RemovableHandle:
        """`hook(optimizer)` after loading."""
        return self._load_state_dict_post_hooks.add(hook, prepend=prepend)

    def _run_step_pre_hooks(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        def call(hook: Any, flags: dict[str, bool], value: Any) -> Any:
            result = hook(self, *value)
            if result is not None and not (isinstance(result, tuple) and len(result) == 2):
                raise RuntimeError(
                    "optimizer step pre-hook must return None or a tuple of "
                    f"(new_args, new_kwargs), but got {result!r}"
                )
            return result

        return run_hooks((args, kwargs), call, _global_step_pre_hooks, self._step_pre_hooks)

    # -- state dicts ----------------------------------------------------------------------

    def state_dict(self) -> StateDict:
        """{"state": {index: per-parameter state}, "param_groups": [options + "params": indices]}.

        Parameters are numbered in group order, as PyTorch numbers them; the state's tensors
        are the optimizer's own (not copies).
        """
        self._state_dict_pre_hooks.call_each(self)
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        result: StateDict = {"state": state, "param_groups": groups}
        return self._state_dict_post_hooks.run(result, lambda hook, _, sd: hook(self, sd))

    def load_state_dict(self, state_dict: StateDict) -> None:
        """Load a `state_dict()`: groups must match in number and sizes.

        Unlike PyTorch, the state's tensors are copied, so the optimizer never shares them
        with the dict it was given (loading one dict into two optimizers is safe).
        """
        state_dict = dict(state_dict)
        state_dict = self._load_state_dict_pre_hooks.run(
            state_dict, lambda hook, _, sd: hook(self, sd)
        )
        groups = self.param_groups
        saved_groups = [_copy_plain(g) for g in state_dict["param_groups"]]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for group, saved in zip(groups, saved_groups, strict=True):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't match the size "
                    "of optimizer's group"
                )
        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in groups),
                strict=True,
            )
        )
        state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in id_map:
                param = id_map[key]
                state[param] = {k: _cast_state(param, k, v) for k, v in value.items()}
            else:
                state[key] = value
        for group, saved in zip(groups, saved_groups, strict=True):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            for key, default in self.defaults.items():  # dicts from before an option existed
                saved.setdefault(key, default)
        self.state = state
        self.param_groups = saved_groups
        self._step_values.clear()
        self._load_state_dict_post_hooks.call_each(self)


def scalar_dtype() -> _dtype.dtype:
    """The dtype of `step` counters: float64 under a float64 default dtype, else float32."""
    default = _dtype.get_default_dtype()
    return _dtype.float64 if default is _dtype.float64 else _dtype.float32


def _step_tensor(value: float) -> Tensor:
    return tensor(value, dtype=scalar_dtype(), device="cpu")


def _cast_state(param: Tensor, key: Any, value: Any) -> Any:
    """A copy of one state entry, its tensors moved to the parameter's device (and dtype)."""
    if isinstance(value, Tensor):
        if key == "step":  # counters keep their dtype and stay on the host, as in PyTorch
            return value.detach().clone()
        if param.is_floating_point():
            return value.detach().to(device=param.device, dtype=param.dtype, copy=True)
        return value.detach().to(device=param.device, copy=True)
    if isinstance(value, dict):
        return {k: _cast_state(param, k, v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, None, v) for v in value)
    return value


def _copy_plain(value: Any) -> Any:
    """A copy of nested dicts and lists (tensors and other leaves are shared)."""
    if isinstance(value, dict):
        return {k: _copy_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_plain(v) for v in value]
    return value
