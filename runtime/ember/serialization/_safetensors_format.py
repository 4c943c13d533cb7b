"""Ember's checkpoint format: `save` / `load` on safetensors, never pickle.

A checkpoint is one safetensors file. Its tensors are the payload; everything else (the
nesting of dicts, lists and tuples, the plain values int, float, str, bool, None, and any
other object as the class path and state `_objects` encodes) is a JSON document in the
safetensors metadata, together with a SHA-256 digest of the whole file. Loading parses JSON
and raw little-endian arrays only, and rebuilds objects only of allow-listed classes, so an
untrusted file cannot run code; a truncated or corrupted file raises `RuntimeError` naming
the file. Writes go to a temporary file in the target's directory, are flushed and fsynced,
and replace the target in one `os.replace`, so a crash never leaves a half-written
checkpoint in its place.

The format (version 2; version 1, without object nodes, is read too): safetensors metadata
{"format": "ember", "version": "2", "structure": JSON, "sha256": hex}. In the structure,
null/true/false/numbers/strings are themselves; every other node is a one-key object:
{"dict": [[key, value], ...]} (keys keep their type), {"list": [...]}, {"tuple": [...]},
{"float": "inf" | "-inf" | "nan"}, {"ndarray": name}, {"tensor": name, "device": "cpu",
"requires_grad": true (optional), "parameter": true (optional)}, where name is the tensor's
key in the payload (its path in the object: "model.fc.weight"), or one of `_objects`'
nodes. The digest is SHA-256 of the whole file with the digest's own 64 characters set to
"0".
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Callable
from typing import IO, Any, Final

import numpy as np
import safetensors
import safetensors.numpy

from ember import _dtype
from ember._device import device
from ember._ops.creation import tensor
from ember._tensor import Tensor
from ember.nn.parameter import Parameter
from ember.serialization._objects import ObjectDecoder, ObjectEncoder

__all__ = ["MapLocation", "place", "read", "save"]

FORMAT: Final = "ember"
VERSION: Final = "2"
_READABLE: Final = ("1", "2")
_DIGEST_KEY: Final = "sha256"
_PLACEHOLDER: Final = b"0" * 64  # the digest field's bytes while the digest is computed
_MAX_HEADER: Final = 100_000_000  # safetensors' own limit on the JSON header
_CHUNK: Final = 1 << 20

FileLike = str | os.PathLike[str] | IO[bytes]
MapLocation = str | device | dict[str, str] | Callable[[Tensor, str], Tensor | None] | None


# -- save ---------------------------------------------------------------------------------


def save(obj: Any, f: FileLike) -> None:
    """Write `obj` (nested dicts/lists/tuples of tensors, NumPy arrays, int, float, str,
    bool, None) to `f`: a path, written atomically, or a binary file object."""
    arrays: dict[str, np.ndarray] = {}
    structure = _Encoder(arrays).encode(obj, "")
    metadata = {
        "format": FORMAT,
        "version": VERSION,
        "structure": json.dumps(structure, allow_nan=False, separators=(",", ":")),
        _DIGEST_KEY: _PLACEHOLDER.decode(),
    }
    payload = bytearray(safetensors.numpy.save(arrays, metadata=metadata))
    field = _digest_field(_PLACEHOLDER)
    start = payload.find(field)
    payload[start : start + len(field)] = _digest_field(
        hashlib.sha256(payload).hexdigest().encode()
    )
    if isinstance(f, (str, os.PathLike)):
        _atomic_write(os.fspath(f), payload)
    else:
        _write_all(f, payload)


class _Encoder:
    """Turns a state dict into tagged JSON, moving tensors and arrays into `arrays`."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self.arrays = arrays
        self.names: dict[int, tuple[Any, str]] = {}  # id -> (object kept alive, its name)
        self.objects = ObjectEncoder(self.encode)

    def encode(self, value: Any, path: str) -> Any:
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            return value if math.isfinite(value) else {"float": repr(value)}
        if isinstance(value, np.generic) and isinstance(value.item(), (bool, int, float)):
            return self.encode(value.item(), path)
        if isinstance(value, Tensor):
            return self._tensor(value, path)
        if isinstance(value, np.ndarray):
            return {"ndarray": self._store(value, path, _c_contiguous(value))}
        if type(value) is dict:
            return {
                "dict": [[self._key(k, path), self._child(v, path, k)] for k, v in value.items()]
            }
        if type(value) in (list, tuple):
            items = [self._child(v, path, i) for i, v in enumerate(value)]
            return {"tuple" if isinstance(value, tuple) else "list": items}
        return self.objects.node(value, path)

    def _child(self, value: Any, path: str, key: Any) -> Any:
        return self.encode(value, f"{path}.{key}" if path else str(key))

    def _key(self, key: Any, path: str) -> Any:
        if key is None or isinstance(key, (bool, str, int, float)):
            return self.encode(key, path)
        raise TypeError(
            f"ember.save: dict keys must be str, int, float, bool or None; got "
            f"{type(key).__name__} at {path or 'the top level'}"
        )

    def _tensor(self, t: Tensor, path: str) -> dict[str, Any]:
        host = t.detach()
        if host.device.type != "cpu":
            host = host.to("cpu")
        name = self._store(t, path, _c_contiguous(host.numpy()))
        encoded: dict[str, Any] = {"tensor": name, "device": str(t.device)}
        if t.requires_grad:
            encoded["requires_grad"] = True
        if _is_parameter(t):
            encoded["parameter"] = True
        return encoded

    def _store(self, obj: Any, path: str, array: np.ndarray) -> str:
        """Name `array` after its path (a tensor met twice is stored once)."""
        found = self.names.get(id(obj))
        if found is not None:
            return found[1]
        if array.dtype not in _SAVABLE:
            raise TypeError(f"ember.save: cannot save an array of dtype {array.dtype} at {path}")
        name, n = path or "tensor", 1
        while name in self.arrays:
            n += 1
            name = f"{path}#{n}"
        self.arrays[name] = array
        self.names[id(obj)] = (obj, name)
        return name


_SAVABLE: Final = {np.dtype(d.numpy) for d in _dtype.ALL_DTYPES} | {
    np.dtype(t) for t in ("int16", "uint16", "uint32", "uint64")
}


def _c_contiguous(array: np.ndarray) -> np.ndarray:
    # Not np.ascontiguousarray, which turns 0-d arrays into 1-d ones.
    return array if array.flags.c_contiguous else array.copy(order="C")


def _digest_field(digest: bytes) -> bytes:
    return b'"' + _DIGEST_KEY.encode() + b'":"' + digest + b'"'


def _write_all(out: IO[bytes], payload: bytes | bytearray) -> None:
    view = memoryview(payload)
    for start in range(0, len(view), _CHUNK):
        out.write(view[start : start + _CHUNK])


def _atomic_write(path: str, payload: bytes | bytearray) -> None:
    """Write to a temporary file beside `path`, fsync it, rename it over `path`, fsync the
    directory: readers see the old file or the new one, never a partial one."""
    directory = os.path.dirname(os.path.abspath(path))
    mode = _new_file_mode(path)
    fd, temporary = tempfile.mkstemp(
        prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory
    )
    try:
        with os.fdopen(fd, "wb") as out:
            _write_all(out, payload)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _fsync_directory(directory)


def _new_file_mode(path: str) -> int:
    """The mode the checkpoint gets: the replaced file's, else what open() would give."""
    with contextlib.suppress(OSError):
        return os.stat(path).st_mode & 0o777
    return 0o666 & ~_umask()


def _umask() -> int:
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status") as status:
        for line in status:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    current = os.umask(0o022)  # no /proc: read it by setting it (briefly process-wide)
    os.umask(current)
    return current


def _fsync_directory(directory: str) -> None:
    # The rename is durable once the directory entry is; not every platform can fsync one.
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# -- load ---------------------------------------------------------------------------------


def _numpy_dtype(name: str) -> np.dtype:
    """A safetensors dtype name as NumPy's: safetensors.numpy's table, and BF16 as ml_dtypes'
    bfloat16 (ember.bfloat16's NumPy dtype), which that table lacks."""
    if name == "BF16":
        return _dtype.bfloat16.numpy
    return np.dtype(safetensors.numpy._getdtype(name))


def _load_arrays(data: bytes) -> dict[str, np.ndarray]:
    """safetensors.numpy.load, knowing BF16."""
    return {
        key: np.frombuffer(view["data"], dtype=_numpy_dtype(view["dtype"])).reshape(view["shape"])
        for key, view in safetensors.deserialize(data)
    }


def read(name: str, data: bytes, map_location: MapLocation) -> Any:
    """The object an Ember checkpoint (or any safetensors file, as a dict of tensors)
    holds; `name` names the file in errors."""
    metadata = _read_metadata(name, data)
    try:
        arrays = _load_arrays(data)
    except Exception as error:  # safetensors' errors, and KeyError for dtypes NumPy lacks
        raise RuntimeError(f"ember.load: {name} is truncated or corrupted: {error}") from error
    if metadata is None or not (
        metadata.get("format") == FORMAT or "structure" in metadata or _DIGEST_KEY in metadata
    ):
        # A plain safetensors file (other tools write {"format": "pt"}): its tensors by name.
        return {key: place(name, arrays[key], key, "cpu", map_location) for key in arrays}
    if metadata.get("format") != FORMAT:
        raise RuntimeError(f"ember.load: {name} is corrupted: its metadata names no format")
    if metadata.get("version") not in _READABLE:
        raise RuntimeError(
            f"ember.load: {name} has checkpoint format version {metadata.get('version')!r}, "
            f"this ember reads version {VERSION}"
        )
    _check_digest(name, data, metadata)
    try:
        structure = json.loads(metadata["structure"])
        return _Decoder(name, arrays, map_location).decode(structure)
    except (KeyError, TypeError, ValueError, RecursionError) as error:
        raise RuntimeError(f"ember.load: {name} has an invalid structure: {error}") from error


def _read_metadata(name: str, data: bytes) -> dict[str, str] | None:
    """The safetensors header's `__metadata__`, after checking the header's framing."""
    hint = (
        "ember.load reads ember.save's safetensors files and torch.save's checkpoints; it "
        "never unpickles arbitrary objects"
    )
    if len(data) < 8:
        raise RuntimeError(f"ember.load: {name} is truncated ({len(data)} bytes); {hint}")
    size = int.from_bytes(data[:8], "little")
    if size > _MAX_HEADER or 8 + size > len(data):
        raise RuntimeError(
            f"ember.load: {name} is truncated or not a safetensors file (header of {size} "
            f"bytes in a file of {len(data)}); {hint}"
        )
    try:
        header = json.loads(data[8 : 8 + size])
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise RuntimeError(
            f"ember.load: {name} is corrupted or not a safetensors file ({error}); {hint}"
        ) from error
    if not isinstance(header, dict):
        raise RuntimeError(f"ember.load: {name} is corrupted: its header is not a JSON object")
    metadata = header.get("__metadata__")
    if metadata is not None and not (
        isinstance(metadata, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    ):
        raise RuntimeError(f"ember.load: {name} is corrupted: its metadata is not text")
    return metadata


def _check_digest(name: str, data: bytes, metadata: dict[str, str]) -> None:
    digest = metadata.get(_DIGEST_KEY, "").encode()
    field = _digest_field(digest)
    header_end = 8 + int.from_bytes(data[:8], "little")
    start = data.find(field, 8, header_end)
    if len(digest) != 64 or start < 0:
        raise RuntimeError(f"ember.load: {name} is corrupted: its digest is missing or malformed")
    hasher = hashlib.sha256()
    hasher.update(memoryview(data)[:start])
    hasher.update(_digest_field(_PLACEHOLDER))
    hasher.update(memoryview(data)[start + len(field) :])
    if hasher.hexdigest().encode() != digest:
        raise RuntimeError(
            f"ember.load: {name} is corrupted: its SHA-256 digest does not match its contents"
        )


class _Decoder:
    """Rebuilds the saved object from the tagged JSON; every node is checked."""

    def __init__(self, name: str, arrays: dict[str, np.ndarray], map_location: MapLocation):
        self.name = name
        self.arrays = arrays
        self.map_location = map_location
        self.loaded: dict[str, Any] = {}  # tensors stored once come back as one object
        self.objects = ObjectDecoder(self.decode, name)

    def decode(self, node: Any) -> Any:
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if not isinstance(node, dict) or not node:
            raise ValueError(f"unexpected node {_preview(node)}")
        if len(node) == 1:
            ((tag, value),) = node.items()
            if tag == "dict" and isinstance(value, list):
                return {self._key(item): self.decode(item[1]) for item in value}
            if tag in ("list", "tuple") and isinstance(value, list):
                items = [self.decode(v) for v in value]
                return items if tag == "list" else tuple(items)
            if tag == "float" and value in ("inf", "-inf", "nan"):
                return float(value)
            if tag == "ndarray" and isinstance(value, str):
                return self._array(value).copy()
        if "tensor" in node:
            return self._tensor(node)
        tag = next(iter(node))
        return self.objects.node(tag, node[tag], node)

    def _key(self, item: Any) -> Any:
        if not (isinstance(item, list) and len(item) == 2):
            raise ValueError(f"unexpected dict item {_preview(item)}")
        key = self.decode(item[0])
        if not (key is None or isinstance(key, (bool, int, float, str))):
            raise ValueError(f"unexpected dict key {_preview(item[0])}")
        return key

    def _array(self, name: str) -> np.ndarray:
        if name not in self.arrays:
            raise ValueError(f"the structure names a tensor {name!r} that the file lacks")
        return self.arrays[name]

    def _tensor(self, node: dict[str, Any]) -> Tensor:
        name, location = node["tensor"], node.get("device")
        grad = node.get("requires_grad", False)
        parameter = node.get("parameter", False)
        if not (
            isinstance(name, str)
            and isinstance(location, str)
            and grad in (True, False)
            and parameter in (True, False)
            and set(node) <= {"tensor", "device", "requires_grad", "parameter"}
        ):
            raise ValueError(f"unexpected tensor node {_preview(node)}")
        found = self.loaded.get(name)
        if found is None:
            found = self.loaded[name] = place(
                self.name, self._array(name), name, location, self.map_location
            )
            if parameter:
                found = self.loaded[name] = _parameter(found, grad)
            elif grad:
                found.requires_grad_(True)
        return found


def _is_parameter(t: Tensor) -> bool:
    return isinstance(t, Parameter)


def _parameter(t: Tensor, requires_grad: bool) -> Tensor:
    return Parameter(t, requires_grad)


def place(
    file: str, array: np.ndarray, name: str, location: str, map_location: MapLocation
) -> Tensor:
    """The array as a tensor on the device that `map_location` picks for `location`."""
    if array.dtype not in _dtype.FROM_NUMPY:
        raise RuntimeError(
            f"ember.load: tensor {name!r} in {file} has dtype {array.dtype}, which ember "
            "does not support"
        )
    if callable(map_location) and not isinstance(map_location, device):
        placed = map_location(tensor(array, device="cpu"), location)
        if placed is not None:
            if not isinstance(placed, Tensor):
                raise TypeError(
                    f"ember.load: map_location returned {type(placed).__name__}, not a Tensor"
                )
            return placed
        target: Any = location
    elif isinstance(map_location, dict):
        target = map_location.get(location, location)
    else:
        target = location if map_location is None else map_location
    try:
        where = device(target)
        return tensor(array, device=where)
    except (RuntimeError, ValueError) as error:
        raise RuntimeError(
            f"ember.load: cannot place tensor {name!r} from {file} on {target}: {error}. "
            "Pass map_location (e.g. map_location='cpu') to load it elsewhere."
        ) from error


def _preview(node: Any) -> str:
    text = json.dumps(node)
    return text if len(text) <= 80 else text[:77] + "..."
