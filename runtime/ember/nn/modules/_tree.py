"""The tree half of `Module`: traversal, lookup by dotted path, modes and conversions.

`Module` inherits these methods from `ModuleTree`; they only walk `_parameters`, `_buffers`
and `_modules`, so they live apart from the registration and hook logic in module.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ember._ops import creation
from ember._tensor import Tensor
from ember.nn.modules import _conversion
from ember.nn.parameter import Parameter

if TYPE_CHECKING:
    from ember.nn.modules.module import Module

__all__ = ["ModuleTree"]

T = TypeVar("T", bound="ModuleTree")


class ModuleTree:
    """Traversal, dotted-path lookup, train/eval and in-place conversions of a module tree."""

    training: bool
    _parameters: dict[str, Parameter | None]
    _buffers: dict[str, Tensor | None]
    _modules: dict[str, Module | None]

    def _get_name(self) -> str:
        return type(self).__name__

    def _as_module(self) -> Module:
        # Only Module inherits this class: every ModuleTree is a Module.
        return cast("Module", self)

    # -- traversal -------------------------------------------------------------------------

    def _named_members(
        self, members: Callable[[Module], Any], prefix: str = "", recurse: bool = True,
        remove_duplicate: bool = True,
    ) -> Iterator[tuple[str, Any]]:  # fmt: skip
        memo: set[Any] = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self._as_module())]
        )
        for module_prefix, module in modules:
            for name, value in members(module):
                if value is None or value in memo:
                    continue
                if remove_duplicate:
                    memo.add(value)
                yield module_prefix + ("." if module_prefix else "") + name, value

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """This module's parameters (and its descendants' when recurse)."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) pairs."""
        yield from self._named_members(
            lambda m: m._parameters.items(), prefix, recurse, remove_duplicate
        )

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """This module's buffers (and its descendants' when recurse)."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """(dotted name, buffer) pairs."""
        yield from self._named_members(
            lambda m: m._buffers.items(), prefix, recurse, remove_duplicate
        )

    def children(self) -> Iterator[Module]:
        """The immediate child modules."""
        for _, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """(name, module) pairs of the immediate children, each module once."""
        memo: set[Module] = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        """This module and all its descendants, pre-order."""
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(
        self, memo: set[Module] | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """(dotted name, module) pairs of this module and its descendants, pre-order."""
        if memo is None:
            memo = set()
        # An explicit stack (pre-order, children in registration order): deep models don't
        # hit the recursion limit.
        stack: list[tuple[str, Module]] = [(prefix, self._as_module())]
        while stack:
            path, module = stack.pop()
            if module in memo:
                continue
            if remove_duplicate:
                memo.add(module)
            yield path, module
            children = [
                (path + ("." if path else "") + name, child)
                for name, child in module._modules.items()
                if child is not None
            ]
            stack.extend(reversed(children))

    # -- modes and conversions -------------------------------------------------------------

    def train(self: T, mode: bool = True) -> T:
        """Set training mode on this module and its descendants."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self: T) -> T:
        """Set evaluation mode (`train(False)`)."""
        return self.train(False)

    def requires_grad_(self: T, requires_grad: bool = True) -> T:
        """Set requires_grad on every parameter."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter (to None, or to zeros)."""
        _conversion.zero_grad(self.parameters(), set_to_none)

    def apply(self: T, fn: Callable[[Module], None]) -> T:
        """Call `fn` on every descendant (children first), then on this module."""
        for module in self.children():
            module.apply(fn)
        fn(self._as_module())
        return self

    def _apply(self: T, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> T:
        if recurse:
            for module in self.children():
                module._apply(fn)
        _conversion.apply_to_tensors(self._as_module(), fn)
        return self

    def to(self: T, *args: Any, **kwargs: Any) -> T:
        """Move and/or cast parameters and buffers (floating dtypes only), in place."""
        return self._apply(_conversion.to_converter(args, kwargs))

    def cpu(self: T) -> T:
        """Move parameters and buffers to the CPU."""
        return self._apply(lambda t: t.cpu())

    def type(self: T, dst_type: Any) -> T:
        """Cast every parameter and buffer to `dst_type`."""
        return self._apply(lambda t: t.to(dst_type))

    def float(self: T) -> T:
        """Cast floating-point parameters and buffers to float32."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self: T) -> T:
        """Cast floating-point parameters and buffers to float64."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self: T) -> T:
        """Cast floating-point parameters and buffers to float16."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self: T) -> T:
        """Cast floating-point parameters and buffers to bfloat16."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def to_empty(self: T, *, device: Any, recurse: bool = True) -> T:
        """Move parameters and buffers to `device` without copying their values."""
        return self._apply(lambda t: creation.empty_like(t, device=device), recurse=recurse)

    # -- lookup by dotted path -------------------------------------------------------------

    def get_submodule(self, target: str) -> Module:
        """The submodule at a dotted path ("" is this module)."""
        if target == "":
            return self._as_module()
        mod = self._as_module()
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, ModuleTree):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Replace (or, unless strict, add) the submodule at a dotted path."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, ModuleTree):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(parent._get_name() + " has no attribute `" + name + "`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), ModuleTree):
            raise AttributeError("`" + name + "` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at a dotted path."""
        module_path, _, param_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, param_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(mod, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at a dotted path."""
        module_path, _, buffer_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, buffer_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + buffer_name + "`")
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        buffer: Tensor = getattr(mod, buffer_name)
        return buffer
