"""ParameterList and ParameterDict: parameters held in a list or a dict, registered on the
container (PyTorch's semantics: plain tensors become Parameters, other objects are kept
as attributes, a plain-dict update goes in sorted key order)."""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ember._tensor import Tensor
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["ParameterDict", "ParameterList"]


def _describe(key: str, value: Any, by_type: bool = False) -> str:
    """One line of the containers' repr, as PyTorch writes it (ParameterList names the
    dtype, ParameterDict the tensor type)."""
    if isinstance(value, Tensor):
        size = "x".join(str(s) for s in value.shape)
        device = f" ({value.device})" if value.device.type not in ("cpu", "numpy") else ""
        kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
        what = value.type() if by_type else value.dtype
        return f"  ({key}): {kind} containing: [{what} of size {size}{device}]"
    return f"  ({key}): Object of type: {type(value).__name__}"


def _as_parameter(value: Any) -> Any:
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ParameterList(Module):
    """A list of parameters (or other objects), each registered under its index."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _get_abs_string_index(self, idx: Any) -> str:
        idx = operator.index(idx)
        if not -len(self) <= idx < len(self):
            raise IndexError(f"index {idx} is out of range")
        return str(idx + len(self) if idx < 0 else idx)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            out = ParameterList()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, self._get_abs_string_index(idx))

    def __setitem__(self, idx: int, param: Any) -> None:
        setattr(self, self._get_abs_string_index(idx), _as_parameter(param))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable[Any]) -> ParameterList:
        return self.extend(parameters)

    def __dir__(self) -> list[str]:
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value: Any) -> ParameterList:
        """Add `value` (a plain tensor becomes a Parameter) at the end."""
        index = len(self)
        self._size += 1
        self[index] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Append every value of an iterable."""
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError(
                "ParameterList.extend should be called with an iterable, but got "
                + type(values).__name__
            )
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_describe(str(k), p) for k, p in enumerate(self))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """A dict of parameters (or other objects) by string key, each registered under it."""

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key: Any) -> str:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is not a string "
                f"(type is '{type(key).__name__}'). Open an issue on github if you need "
                "non-string keys."
            )
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value: Any) -> None:
        attr = self._key_to_attr(key)  # checked first, so a bad key leaves no trace
        self._keys[key] = None
        setattr(self, attr, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same objects."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default: Any = None) -> Any:
        """self[key], first set to `default` when absent."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Remove every entry."""
        for key in list(self._keys):
            del self[key]

    def pop(self, key: str) -> Any:
        """Remove `key` and return its value."""
        value = self[key]
        del self[key]
        return value

    def popitem(self) -> tuple[str, Any]:
        """Remove and return the last inserted (key, value)."""
        key = list(self._keys)[-1]
        value = self[key]
        del self[key]
        return key, value

    def get(self, key: str, default: Any = None) -> Any:
        """self[key] if present, else `default`."""
        if key in self._keys:
            return self[key]
        return default

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        """A new ParameterDict with every key set to `default`."""
        return ParameterDict((k, default) for k in keys)

    def keys(self) -> Any:
        """The keys, in insertion order."""
        return self._keys.keys()

    def items(self) -> Iterable[tuple[str, Any]]:
        """(key, value) pairs, in insertion order."""
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Iterable[Any]:
        """The values, in insertion order."""
        return (self[k] for k in self._keys)

    def update(self, parameters: Any) -> None:
        """Add entries from a mapping (plain dicts in sorted key order, as PyTorch) or from
        an iterable of (key, value) pairs."""
        if not isinstance(parameters, Iterable):
            raise TypeError(
                "ParametersDict.update should be called with an iterable of key/value pairs, "
                "but got " + type(parameters).__name__
            )
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, Mapping):
            for key, parameter in sorted(parameters.items()):
                self[key] = parameter
        else:
            for j, pair in enumerate(parameters):
                if not isinstance(pair, Iterable):
                    raise TypeError(
                        f"ParameterDict update sequence element #{j} should be Iterable; is"
                        + type(pair).__name__
                    )
                pair = tuple(pair)
                if len(pair) != 2:
                    raise ValueError(
                        f"ParameterDict update sequence element #{j} has length {len(pair)}; "
                        "2 is required"
                    )
                self[pair[0]] = pair[1]

    def extra_repr(self) -> str:
        return "\n".join(_describe(k, p, by_type=True) for k, p in self.items())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: ParameterDict) -> ParameterDict:
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self
