"""Any object that holds tensors, saved without pickle: the object graph as JSON nodes
naming classes by path, rebuilt on load only for allow-listed classes.

Saving follows the protocol pickle uses (`__reduce_ex__(4)`: a class to instantiate with
`__new__` or a callable, its arguments, a state, list items, dict items), but writes it as
data. Loading resolves every class and function a file names against the allow-list
(`_allowlist`): Ember's own containers and `nn.Module` classes, the functions of
`ember.nn.functional`, and what the user allowed; it then only calls `cls.__new__(cls,
*args)` (or an allow-listed callable), `__setstate__` or `__dict__.update`, and item
insertion. Objects met twice are saved once and come back as one object (cycles too,
through instances).

Nodes (besides the base format's): {"set": [...]}, {"frozenset": [...]}, {"bytes": b64},
{"bytearray": b64}, {"complex": [re, im]}, {"slice": [start, stop, step]}, {"dtype": name},
{"device": str}, {"size": [...]}, {"global": path}, {"ref": id}, and
{"object": path, "id": n, "args": [...], "state": node, "items": [...], "dictitems":
[[k, v], ...]} (with "call" instead of "object" when the class rebuilds through a
callable rather than `__new__`).
"""

from __future__ import annotations

import base64
import collections
import copyreg
import importlib
import types
from collections.abc import Callable
from typing import Any, Final

from ember import _dtype
from ember._device import device
from ember._tensor import Size
from ember.nn.modules.module import Module
from ember.serialization._allowlist import global_path, refuse, user_global
from ember.utils.hooks import HookRegistry

__all__ = ["ObjectDecoder", "ObjectEncoder", "resolve"]

Encode = Callable[[Any, str], Any]
# What `__reduce_ex__` returns for "instantiate with cls.__new__" (not in typeshed).
_NEWOBJ: Final = getattr(copyreg, "__newobj__")  # noqa: B009

# Classes every checkpoint may name besides Ember's nn.Module classes.
_BUILTIN: Final[dict[str, Any]] = {
    global_path(cls): cls
    for cls in (collections.OrderedDict, collections.Counter, collections.deque)
}


def _ember_builtin(path: str) -> Any | None:
    """An Ember class or function that checkpoints may always name, or None."""
    module_name, _, name = path.rpartition(".")
    if not module_name.startswith("ember.") or "<" in name:
        return None
    try:
        found: Any = importlib.import_module(module_name)
    except ImportError:
        return None
    found = getattr(found, name, None)
    if isinstance(found, type) and (issubclass(found, Module) or found is HookRegistry):
        return found
    if isinstance(found, types.FunctionType) and found.__module__.startswith("ember.nn.functional"):
        return found
    return None


def resolve(path: str, file: str, what: str) -> Any:
    """The object an allow-list entry names, or UnpicklingError."""
    found = user_global(path)
    if found is None:
        found = _BUILTIN.get(path)
    if found is None:
        found = _ember_builtin(path)
    if found is None:
        raise refuse(path, file, what)
    return found


class ObjectEncoder:
    """Encodes what the base format lacks; `encode` recurses into the base encoder."""

    def __init__(self, encode: Encode) -> None:
        self.encode = encode
        self.ids: dict[int, tuple[Any, int]] = {}  # id -> (object kept alive, node id)

    def node(self, value: Any, path: str) -> Any:
        simple = self._simple(value, path)
        if simple is not None:
            return simple
        if isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType)):
            return {"global": _path_of(value, path)}
        seen = self.ids.get(id(value))
        if seen is not None:
            return {"ref": seen[1]}
        return self._instance(value, path)

    def _simple(self, value: Any, path: str) -> dict[str, Any] | None:
        if isinstance(value, (set, frozenset)):
            items = [self.encode(v, _join(path, i)) for i, v in enumerate(value)]
            return {"set" if isinstance(value, set) else "frozenset": items}
        if isinstance(value, (bytes, bytearray)):
            kind = "bytes" if isinstance(value, bytes) else "bytearray"
            return {kind: base64.b64encode(bytes(value)).decode()}
        if isinstance(value, complex):
            return {"complex": [self.encode(value.real, path), self.encode(value.imag, path)]}
        if isinstance(value, slice):
            return {"slice": [self.encode(v, path) for v in (value.start, value.stop, value.step)]}
        if isinstance(value, _dtype.dtype):
            return {"dtype": value.name}
        if isinstance(value, device):
            return {"device": str(value)}
        if isinstance(value, Size):
            return {"size": list(value)}
        return None

    def _instance(self, value: Any, path: str) -> dict[str, Any]:
        if isinstance(value, types.ModuleType):
            raise TypeError(
                f"ember.save: cannot save the module {value.__name__} at {path or 'the top level'}"
            )
        try:
            reduced = value.__reduce_ex__(4)
        except TypeError as error:
            raise TypeError(
                f"ember.save: cannot save {type(value).__name__} at "
                f"{path or 'the top level'}: {error}"
            ) from error
        if isinstance(reduced, str):  # a module-level singleton, saved by name
            return {"global": f"{type(value).__module__}.{reduced}"}
        func, args, state, items, dictitems = (*reduced, None, None, None)[:5]
        number = len(self.ids)
        self.ids[id(value)] = (value, number)
        node: dict[str, Any]
        if func is _NEWOBJ:
            node = {"object": _path_of(args[0], path), "id": number}
            args = args[1:]
        else:
            node = {"call": _path_of(func, path), "id": number}
        if args:
            node["args"] = [self.encode(a, _join(path, i)) for i, a in enumerate(args)]
        if state is not None:
            node["state"] = self.encode(state, path)
        if items is not None:
            node["items"] = [self.encode(v, _join(path, i)) for i, v in enumerate(items)]
        if dictitems is not None:
            node["dictitems"] = [
                [self.encode(k, path), self.encode(v, _join(path, k))] for k, v in dictitems
            ]
        return node


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def _path_of(obj: Any, path: str) -> str:
    name = getattr(obj, "__qualname__", None)
    if not isinstance(name, str) or "<" in name or getattr(obj, "__module__", None) is None:
        raise TypeError(
            f"ember.save: cannot save {obj!r} at {path or 'the top level'}: only module-level "
            "classes and functions can be saved by name (not lambdas or local definitions)"
        )
    return global_path(obj)


class ObjectDecoder:
    """Rebuilds the nodes `ObjectEncoder` writes; `decode` recurses into the base decoder."""

    def __init__(self, decode: Callable[[Any], Any], file: str) -> None:
        self.decode = decode
        self.file = file
        self.objects: dict[int, Any] = {}

    def node(self, tag: str, value: Any, node: dict[str, Any]) -> Any:
        simple = _SIMPLE.get(tag)
        if simple is not None and len(node) == 1:
            return simple(self, value)
        if tag == "ref" and isinstance(value, int) and value in self.objects:
            return self.objects[value]
        if tag in ("object", "call") and isinstance(value, str):
            return self._instance(tag, value, node)
        raise ValueError(f"unexpected node {tag!r}")

    def _list(self, value: Any) -> list[Any]:
        if not isinstance(value, list):
            raise ValueError(f"expected a list, got {type(value).__name__}")
        return [self.decode(v) for v in value]

    def _instance(self, tag: str, path: str, node: dict[str, Any]) -> Any:
        number = node.get("id")
        if not isinstance(number, int) or number in self.objects:
            raise ValueError(f"bad object id {number!r}")
        unknown = set(node) - {tag, "id", "args", "state", "items", "dictitems"}
        if unknown:
            raise ValueError(f"unexpected keys {sorted(unknown)} in an object node")
        if tag == "object":
            target = resolve(path, self.file, "class")
        else:  # only plain containers and the user's own choices are ever called
            target = user_global(path) or _BUILTIN.get(path)
            if target is None:
                raise refuse(path, self.file, "callable")
        args = self._list(node.get("args", []))
        if tag == "object":
            if not isinstance(target, type):
                raise refuse(path, self.file, "class")
            obj = target.__new__(target, *args)
        else:
            obj = target(*args)
        self.objects[number] = obj
        if "state" in node:
            _set_state(obj, self.decode(node["state"]))
        for item in self._list(node.get("items", [])):
            obj.append(item)
        for pair in node.get("dictitems", []):
            key, item = self._list(pair)
            obj[key] = item
        return obj


def _set_state(obj: Any, state: Any) -> None:
    setstate = getattr(obj, "__setstate__", None)
    if setstate is not None:
        setstate(state)
        return
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    if state:
        obj.__dict__.update(state)
    for name, value in (slots or {}).items():
        setattr(obj, name, value)


def _b64(value: Any) -> bytes:
    if not isinstance(value, str):
        raise ValueError("expected base64 text")
    return base64.b64decode(value, validate=True)


def _dtype_node(value: Any) -> _dtype.dtype:
    found = getattr(_dtype, value, None) if isinstance(value, str) else None
    if not isinstance(found, _dtype.dtype):
        raise ValueError(f"unknown dtype {value!r}")
    return found


_SIMPLE: Final[dict[str, Callable[[ObjectDecoder, Any], Any]]] = {
    "set": lambda d, v: set(d._list(v)),
    "frozenset": lambda d, v: frozenset(d._list(v)),
    "bytes": lambda d, v: _b64(v),
    "bytearray": lambda d, v: bytearray(_b64(v)),
    "complex": lambda d, v: complex(*(float(x) for x in d._list(v))),
    "slice": lambda d, v: slice(*d._list(v)),
    "dtype": lambda d, v: _dtype_node(v),
    "device": lambda d, v: device(v) if isinstance(v, str) else _bad(v),
    "size": lambda d, v: Size(int(x) for x in d._list(v)),
    "global": lambda d, v: resolve(v, d.file, "global") if isinstance(v, str) else _bad(v),
}


def _bad(value: Any) -> Any:
    raise ValueError(f"unexpected value {value!r}")
