"""`Module.state_dict` and `Module.load_state_dict`, with PyTorch's keys, hooks and errors."""

from __future__ import annotations

import itertools
from collections import OrderedDict, namedtuple
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ember._tensor import Tensor
from ember.autograd import _mode
from ember.nn.parameter import Parameter
from ember.utils.hooks import run_hooks

if TYPE_CHECKING:
    from ember.nn.modules.module import Module  # cold path; module.py imports this module

__all__ = ["EXTRA_STATE_KEY_SUFFIX", "IncompatibleKeys", "load_state_dict", "state_dict"]

EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What `load_state_dict` returns: the missing and the unexpected keys."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def state_dict(
    module: Module, destination: dict[str, Any] | None, prefix: str, keep_vars: bool
) -> dict[str, Any]:
    """Parameters and persistent buffers of `module` and its children, keyed by dotted path."""
    if destination is None:
        destination = OrderedDict()
        destination._metadata = OrderedDict()  # type: ignore[attr-defined]
    local_metadata = {"version": module._version}
    metadata = getattr(destination, "_metadata", None)
    if metadata is not None:
        metadata[prefix[:-1]] = local_metadata

    def call_pre_hook(hook: Any, _: dict[str, bool], __: Any) -> None:
        hook(module, prefix, keep_vars)  # its return value is ignored, as in PyTorch

    run_hooks(None, call_pre_hook, module._state_dict_pre_hooks)
    module._save_to_state_dict(destination, prefix, keep_vars)
    for name, child in module._modules.items():
        if child is not None:
            child.state_dict(
                destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars
            )

    def call(hook: Any, flags: dict[str, bool], value: dict[str, Any]) -> Any:
        result = hook(module, value, prefix, local_metadata)
        if flags.get("public") and result is not None:
            raise RuntimeError("state_dict post-hook must return None")
        return result

    result: dict[str, Any] = run_hooks(destination, call, module._state_dict_hooks)
    return result


def save_to_state_dict(
    module: Module, destination: dict[str, Any], prefix: str, keep_vars: bool
) -> None:
    """This module's own entries (no children)."""
    for name, param in module._parameters.items():
        if param is not None:
            destination[prefix + name] = param if keep_vars else param.detach()
    for name, buf in module._buffers.items():
        if buf is not None and name not in module._non_persistent_buffers_set:
            destination[prefix + name] = buf if keep_vars else buf.detach()
    if _overrides(module, "get_extra_state"):
        destination[prefix + EXTRA_STATE_KEY_SUFFIX] = module.get_extra_state()


def _overrides(module: Module, method: str) -> bool:
    from ember.nn.modules.module import Module

    return getattr(type(module), method) is not getattr(Module, method)


def load_from_state_dict(
    module: Module, state: dict[str, Any], prefix: str, local_metadata: dict[str, Any],
    strict: bool, missing_keys: list[str], unexpected_keys: list[str], error_msgs: list[str],
) -> None:  # fmt: skip
    """Copy this module's own entries from `state`, recording what is missing or unexpected."""
    args = (state, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)

    def call_pre_hook(hook: Any, flags: dict[str, bool], _: Any) -> None:
        # Return values are ignored: pre-hooks edit `state` and the key lists in place.
        if flags.get("with_module"):
            hook(module, *args)
        else:
            hook(*args)

    run_hooks(None, call_pre_hook, module._load_state_dict_pre_hooks)
    persistent = {
        k: v for k, v in module._buffers.items() if k not in module._non_persistent_buffers_set
    }
    items = itertools.chain(module._parameters.items(), persistent.items())
    local_state = {k: v for k, v in items if v is not None}
    assign = bool(local_metadata.get("assign_to_params_buffers", False))
    for name, param in local_state.items():
        key = prefix + name
        if key in state:
            _load_one(module, name, key, param, state[key], assign, error_msgs)
        elif strict:
            missing_keys.append(key)
    extra_key = prefix + EXTRA_STATE_KEY_SUFFIX
    if _overrides(module, "set_extra_state"):
        if extra_key in state:
            module.set_extra_state(state[extra_key])
        elif strict:
            missing_keys.append(extra_key)
    elif strict and extra_key in state:
        unexpected_keys.append(extra_key)
    if strict:
        for key in state:
            if key.startswith(prefix) and key != extra_key:
                input_name = key[len(prefix) :].split(".", 1)
                if len(input_name) > 1:
                    if input_name[0] not in module._modules:
                        unexpected_keys.append(key)
                elif input_name[0] not in local_state:
                    unexpected_keys.append(key)


def _load_one(
    module: Module, name: str, key: str, param: Tensor, value: Any, assign: bool,
    error_msgs: list[str],
) -> None:  # fmt: skip
    if not isinstance(value, Tensor):
        error_msgs.append(
            f'While copying the parameter named "{key}", expected ember.Tensor or Tensor-like '
            f"object from checkpoint but received {type(value)}"
        )
        return
    if len(param._shape) == 0 and value._shape == (1,):
        value = value[0]
    if value._shape != param._shape:
        error_msgs.append(
            f"size mismatch for {key}: copying a param with shape {value.shape} from "
            f"checkpoint, the shape in current model is {param.shape}."
        )
        return
    try:
        with _mode.no_grad():
            if assign:
                if isinstance(param, Parameter):
                    if isinstance(value, Parameter):
                        value.requires_grad_(param.requires_grad)
                    else:
                        value = Parameter(value, requires_grad=param.requires_grad)
                setattr(module, name, value)
            else:
                param.copy_(value)
    except Exception as ex:
        error_msgs.append(
            f'While copying the parameter named "{key}", whose dimensions in the model are '
            f"{param.size()} and whose dimensions in the checkpoint are {value.size()}, an "
            f"exception occurred : {ex.args}."
        )


def _post_hook_call(module: Module) -> Any:
    def call(hook: Any, _: dict[str, bool], keys: IncompatibleKeys) -> None:
        if hook(module, keys) is not None:
            raise AssertionError(
                "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                "expected to return new values, if incompatible_keys need to be "
                "modified, it should be done inplace."
            )

    return call


def load_state_dict(
    module: Module, state_dict: Mapping[str, Any], strict: bool, assign: bool
) -> IncompatibleKeys:
    """Copy `state_dict` into `module` and its children; raise on errors (and, if strict,
    on missing or unexpected keys)."""
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    missing_keys: list[str] = []
    unexpected_keys: list[str] = []
    error_msgs: list[str] = []
    metadata = getattr(state_dict, "_metadata", None)
    state: dict[str, Any] = OrderedDict(state_dict)
    if metadata is not None:
        state._metadata = metadata  # type: ignore[attr-defined]
    # Iterative walk in PyTorch's (pre-order) visiting order; post-hooks run after a module's
    # whole subtree, so each module's frame is revisited once its children are done.
    stack: list[tuple[Module, dict[str, Any], str, bool]] = [(module, state, "", False)]
    while stack:
        current, local_state, prefix, children_done = stack.pop()
        if children_done:
            keys = IncompatibleKeys(missing_keys, unexpected_keys)
            run_hooks(keys, _post_hook_call(current), current._load_state_dict_post_hooks)
            continue
        local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
        if assign:
            local_metadata["assign_to_params_buffers"] = assign
        current._load_from_state_dict(
            local_state, prefix, local_metadata, True, missing_keys, unexpected_keys, error_msgs
        )
        stack.append((current, local_state, prefix, True))
        children = []
        for name, child in current._modules.items():
            if child is not None:
                child_prefix = prefix + name + "."
                child_state = {k: v for k, v in local_state.items() if k.startswith(child_prefix)}
                children.append((child, child_state, child_prefix, False))
        stack.extend(reversed(children))
    if strict:
        if unexpected_keys:
            keys_text = ", ".join(f'"{k}"' for k in unexpected_keys)
            error_msgs.insert(0, f"Unexpected key(s) in state_dict: {keys_text}. ")
        if missing_keys:
            keys_text = ", ".join(f'"{k}"' for k in missing_keys)
            error_msgs.insert(0, f"Missing key(s) in state_dict: {keys_text}. ")
    if error_msgs:
        joined = "\n\t".join(error_msgs)
        raise RuntimeError(
            f"Error(s) in loading state_dict for {type(module).__name__}:\n\t{joined}"
        )
    return IncompatibleKeys(missing_keys, unexpected_keys)
