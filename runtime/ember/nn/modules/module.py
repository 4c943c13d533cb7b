"""`Module`, the base class of every layer and model, with PyTorch's registries and hooks."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from ember._tensor import Tensor
from ember.nn.modules import _call, _state_dict
from ember.nn.modules._hooks import (
    GLOBAL,
    LOCK,
    register_module_buffer_registration_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
    register_module_module_registration_hook,
    register_module_parameter_registration_hook,
)
from ember.nn.modules._state_dict import IncompatibleKeys as _IncompatibleKeys
from ember.nn.modules._tree import ModuleTree
from ember.nn.parameter import Buffer, Parameter
from ember.utils.hooks import HookRegistry, RemovableHandle, run_hooks

__all__ = [
    "Module",
    "register_module_buffer_registration_hook",
    "register_module_forward_hook",
    "register_module_forward_pre_hook",
    "register_module_full_backward_hook",
    "register_module_full_backward_pre_hook",
    "register_module_module_registration_hook",
    "register_module_parameter_registration_hook",
]

T = TypeVar("T", bound="Module")
Hook = Callable[..., Any]

# Per-module registries, created by Module.__init__ (PyTorch's attribute names).
_REGISTRIES = (
    "_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks",
    "_state_dict_pre_hooks", "_state_dict_hooks", "_load_state_dict_pre_hooks",
    "_load_state_dict_post_hooks",
)  # fmt: skip


def _forward_unimplemented(self: Module, *input: Any) -> Any:
    """Define the computation performed at every call (subclasses override it)."""
    raise NotImplementedError(
        f'Module [{type(self).__name__}] is missing the required "forward" function'
    )


def typename(obj: Any) -> str:
    """A readable type name for error messages (PyTorch's `torch.typename`)."""
    if isinstance(obj, Tensor):
        return "ember.nn.Parameter" if isinstance(obj, Parameter) else "ember.Tensor"
    cls = type(obj)
    module = cls.__module__
    return cls.__qualname__ if module in ("", "builtins") else f"{module}.{cls.__qualname__}"


class Module(ModuleTree):
    """Base class for all neural network modules; subclasses define `forward`."""

    dump_patches: bool = False
    _version: int = 1
    call_super_init: bool = False

    training: bool
    _parameters: dict[str, Parameter | None]
    _buffers: dict[str, Tensor | None]
    _non_persistent_buffers_set: set[str]
    _modules: dict[str, Module | None]
    _forward_pre_hooks: HookRegistry
    _forward_hooks: HookRegistry
    _backward_pre_hooks: HookRegistry
    _backward_hooks: HookRegistry
    _state_dict_pre_hooks: HookRegistry
    _state_dict_hooks: HookRegistry
    _load_state_dict_pre_hooks: HookRegistry
    _load_state_dict_post_hooks: HookRegistry
    _maybe_call_hooks: bool

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if not self.call_super_init and kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                f"'{next(iter(kwargs))}'"
            )
        if not self.call_super_init and args:
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but "
                f"{len(args) + 1} were given"
            )
        # Straight into __dict__: these are plain attributes, not parameters or modules.
        state = self.__dict__
        state["training"] = True
        state["_parameters"] = {}
        state["_buffers"] = {}
        state["_non_persistent_buffers_set"] = set()
        state["_modules"] = {}
        for name in _REGISTRIES:
            state[name] = HookRegistry()
        # Set when a call-time hook is registered; the hook-free call tests only this flag.
        state["_maybe_call_hooks"] = False
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward: Callable[..., Any] = _forward_unimplemented

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run `forward` between the registered hooks (PyTorch's order)."""
        if self._maybe_call_hooks or GLOBAL.maybe_call_hooks:
            return _call.call_with_hooks(self, args, kwargs)
        return self.forward(*args, **kwargs)

    # -- registration ----------------------------------------------------------------------

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer: state that is not a parameter (saved in state_dict if persistent)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(self, name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                "(ember Tensor or None required)"
            )
        tensor = run_hooks(tensor, self._registration_call(name), GLOBAL.buffer_registration)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter, reachable as an attribute of this module."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(self, name, "parameter", self._parameters)
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{typename(param)}' object to parameter '{name}' "
                "(ember.nn.Parameter or None required)"
            )
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must "
                f"be created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        param = run_hooks(param, self._registration_call(name), GLOBAL.parameter_registration)
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module, reachable as an attribute of this module."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = self._registered_module(name, module)

    def register_module(self, name: str, module: Module | None) -> None:
        """Alias for `add_module`."""
        self.add_module(name, module)

    def _registration_call(self, name: str) -> Callable[[Hook, dict[str, bool], Any], Any]:
        return lambda hook, _flags, value: hook(self, name, value)

    def _registered_module(self, name: str, module: Module | None) -> Module | None:
        hooks = GLOBAL.module_registration
        return run_hooks(module, self._registration_call(name), hooks) if hooks else module

    # -- attributes ------------------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        # Unrolled: layers read their parameters through here on every forward.
        state = self.__dict__
        parameters = state.get("_parameters")
        if parameters is not None and name in parameters:
            return parameters[name]
        buffers = state.get("_buffers")
        if buffers is not None and name in buffers:
            return buffers[name]
        modules = state.get("_modules")
        if modules is not None and name in modules:
            return modules[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        state = self.__dict__
        params = state.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove_from(name, state, self._buffers, self._modules)
            self._non_persistent_buffers_set.discard(name)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{typename(value)}' as parameter '{name}' "
                    "(ember.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        else:
            self._set_module_buffer_or_attribute(name, value)

    def _set_module_buffer_or_attribute(self, name: str, value: Any) -> None:
        state = self.__dict__
        modules = state.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _remove_from(name, state, self._parameters, self._buffers)
            self._non_persistent_buffers_set.discard(name)
            modules[name] = self._registered_module(name, value)
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{typename(value)}' as child module '{name}' "
                    "(ember.nn.Module or None expected)"
                )
            modules[name] = self._registered_module(name, value)
        else:
            buffers = state.get("_buffers")
            if isinstance(value, Buffer):
                # An nn.Buffer registers itself, with its own persistence.
                if buffers is None:
                    raise AttributeError("cannot assign buffer before Module.__init__() call")
                _remove_from(name, state, self._parameters, self._modules)
                self.register_buffer(name, value, value.persistent)
            elif buffers is not None and name in buffers:
                if value is not None and not isinstance(value, Tensor):
                    raise TypeError(
                        f"cannot assign '{typename(value)}' as buffer '{name}' "
                        "(ember.Tensor or None expected)"
                    )
                self.register_buffer(name, value, name not in self._non_persistent_buffers_set)
            else:
                object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        keys = [*dir(type(self)), *self.__dict__, *self._parameters, *self._modules]
        keys += list(self._buffers)
        return sorted(key for key in keys if not key[0].isdigit())

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    # -- hooks -----------------------------------------------------------------------------

    def _add_call_hook(
        self, registry: HookRegistry, hook: Hook, prepend: bool, **flags: bool
    ) -> RemovableHandle:
        with LOCK:
            handle = registry.add(hook, prepend=prepend, **{k: v for k, v in flags.items() if v})
            self.__dict__["_maybe_call_hooks"] = True
        return handle

    def register_forward_pre_hook(
        self, hook: Hook, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """`hook(module, args)` (or `(module, args, kwargs)`) before forward; may replace args."""
        return self._add_call_hook(self._forward_pre_hooks, hook, prepend, with_kwargs=with_kwargs)

    def register_forward_hook(
        self, hook: Hook, *, prepend: bool = False, with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:  # fmt: skip
        """`hook(module, args, output)` after forward; may replace the output."""
        return self._add_call_hook(
            self._forward_hooks, hook, prepend, with_kwargs=with_kwargs, always_call=always_call
        )

    def register_full_backward_pre_hook(self, hook: Hook, prepend: bool = False) -> RemovableHandle:
        """`hook(module, grad_output)` before the module's backward; may replace grad_output."""
        return self._add_call_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook: Hook, prepend: bool = False) -> RemovableHandle:
        """`hook(module, grad_input, grad_output)` after backward; may replace grad_input."""
        return self._add_call_hook(self._backward_hooks, hook, prepend)

    def register_state_dict_pre_hook(self, hook: Hook) -> RemovableHandle:
        """`hook(module, prefix, keep_vars)` before `state_dict` collects this module."""
        return self._state_dict_pre_hooks.add(hook)

    def register_state_dict_post_hook(self, hook: Hook) -> RemovableHandle:
        """`hook(module, state_dict, prefix, local_metadata)` after; it edits in place."""
        return self._state_dict_hooks.add(hook, public=True)

    def _register_state_dict_hook(self, hook: Hook) -> RemovableHandle:
        """Like the post-hook, but a non-None return replaces the state dict."""
        return self._state_dict_hooks.add(hook)

    def register_load_state_dict_pre_hook(self, hook: Hook) -> RemovableHandle:
        """`hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)` before this module loads its entries."""
        return self._load_state_dict_pre_hooks.add(hook, with_module=True)

    def _register_load_state_dict_pre_hook(
        self, hook: Hook, with_module: bool = False
    ) -> RemovableHandle:
        return self._load_state_dict_pre_hooks.add(hook, with_module=with_module)

    def register_load_state_dict_post_hook(self, hook: Hook) -> RemovableHandle:
        """`hook(module, incompatible_keys)` after this module's subtree was loaded."""
        return self._load_state_dict_post_hooks.add(hook)

    # -- state dict ------------------------------------------------------------------------

    def state_dict(
        self, *, destination: dict[str, Any] | None = None, prefix: str = "",
        keep_vars: bool = False,
    ) -> dict[str, Any]:  # fmt: skip
        """Parameters and persistent buffers by dotted name (detached unless keep_vars)."""
        return _state_dict.state_dict(self, destination, prefix, keep_vars)

    def _save_to_state_dict(
        self, destination: dict[str, Any], prefix: str, keep_vars: bool
    ) -> None:
        _state_dict.save_to_state_dict(self, destination, prefix, keep_vars)

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> _IncompatibleKeys:
        """Copy parameters and buffers from `state_dict`; return the missing/unexpected keys."""
        return _state_dict.load_state_dict(self, state_dict, strict, assign)

    def _load_from_state_dict(
        self, state_dict: dict[str, Any], prefix: str, local_metadata: dict[str, Any],
        strict: bool, missing_keys: list[str], unexpected_keys: list[str], error_msgs: list[str],
    ) -> None:  # fmt: skip
        _state_dict.load_from_state_dict(
            self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
            error_msgs,
        )  # fmt: skip

    def get_extra_state(self) -> Any:
        """Extra (non-tensor) state for state_dict; override together with set_extra_state."""
        raise RuntimeError("Module.get_extra_state() is only called when a subclass overrides it")

    def set_extra_state(self, state: Any) -> None:
        """Restore what get_extra_state returned; override together with get_extra_state."""
        raise RuntimeError("Module.set_extra_state() is only called when a subclass overrides it")

    # -- printing --------------------------------------------------------------------------

    def extra_repr(self) -> str:
        """The module-specific part of `repr` (one line or several); override it."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            f"({key}): " + _addindent(repr(module), 2) for key, module in self._modules.items()
        ]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


def _addindent(text: str, spaces: int) -> str:
    first, *rest = text.split("\n")
    if not rest:
        return text
    return "\n".join([first, *((" " * spaces + line) if line.strip() else "" for line in rest)])


def _check_name(module: Module, name: Any, kind: str, registry: dict[str, Any]) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {typename(name)}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if hasattr(module, name) and name not in registry:
        raise KeyError(f"attribute '{name}' already exists")


def _remove_from(name: str, *registries: dict[str, Any]) -> None:
    for registry in registries:
        registry.pop(name, None)
