"""Reading PyTorch's checkpoints (`torch.save`'s zip format, and the legacy format of
PyTorch < 1.6) without running the code a pickle may name.

A PyTorch checkpoint is a pickle of the saved object whose tensors refer, through pickle's
persistent ids, to raw storages kept beside it. `_RestrictedUnpickler` restricts globals
the way Python's documentation recommends (`find_class`): every global the pickle names is
looked up in Ember's stand-ins for the names a tensor checkpoint needs (containers, the
tensor and parameter rebuild functions, dtypes, storage types, `torch.device`,
`torch.Size`), then in the user's allow-list; anything else raises
`pickle.UnpicklingError` naming it. That is the trust model of PyTorch's own
`weights_only=True` loader; Ember applies it whatever `weights_only` says.
"""

from __future__ import annotations

import _compat_pickle
import codecs
import collections
import io
import pickle
import zipfile
from collections.abc import Callable
from typing import IO, Any, Final

import numpy as np

from ember import _dtype
from ember._device import device
from ember._ops.shape import as_strided
from ember._tensor import Size, Tensor
from ember.nn.parameter import Parameter
from ember.serialization._allowlist import CheckpointRefused, refuse, user_global

__all__ = ["is_legacy_torch", "is_torch_zip", "read_legacy", "read_zip"]

#: (array, storage name, saved location) -> the storage as a 1-d tensor on its device.
Placer = Callable[[np.ndarray, str, str], Tensor]

_ZIP_MAGIC: Final = b"PK\x03\x04"
# A legacy checkpoint opens with this number pickled, then the format's protocol number.
_LEGACY_MAGIC: Final = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL: Final = 1001

# PyTorch's typed storage classes, by the element type each holds.
_STORAGE_DTYPES: Final = {
    "DoubleStorage": "float64", "FloatStorage": "float32", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
    "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
    "BoolStorage": "bool", "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128",
}  # fmt: skip
_NUMPY: Final = {
    "float64": "<f8", "float32": "<f4", "float16": "<f2", "bfloat16": "<u2", "int64": "<i8",
    "int32": "<i4", "int16": "<i2", "int8": "i1", "uint8": "u1", "bool": "?",
    "complex64": "<c8", "complex128": "<c16", "uint16": "<u2", "uint32": "<u4",
    "uint64": "<u8",
}  # fmt: skip
_TORCH_DTYPES: Final = (*_NUMPY, "float8_e4m3fn", "float8_e5m2", "complex32", "qint8")


def is_torch_zip(data: bytes) -> bool:
    return data[:4] == _ZIP_MAGIC


def is_legacy_torch(data: bytes) -> bool:
    """Whether `data` opens with the legacy format's pickled magic number."""
    try:
        return bool(_LegacyHead(data).magic == _LEGACY_MAGIC)
    except Exception:  # whatever fails, this is not that format
        return False


class _LegacyHead:
    def __init__(self, data: bytes) -> None:
        self.stream = io.BytesIO(data)
        self.magic = _safe_loads(self.stream)


def _safe_loads(stream: IO[bytes]) -> Any:
    """A pickle of plain values only (the legacy format's header records)."""
    return _RestrictedUnpickler(stream, "", {}, lambda pid: None).load()


class _StorageType:
    """What `torch.FloatStorage` and friends unpickle to: a storage's element type."""

    def __init__(self, dtype: str | None) -> None:
        self.dtype = dtype


class _Storage:
    """One storage of the checkpoint: its bytes, placed on its device once per dtype."""

    def __init__(self, raw: np.ndarray, name: str, location: str, place: Placer) -> None:
        self.raw, self.name, self.location, self.place = raw, name, location, place
        self.typed: dict[str, Tensor] = {}

    def as_dtype(self, dtype: str, file: str) -> Tensor:
        found = self.typed.get(dtype)
        if found is None:
            found = self.typed[dtype] = self._build(dtype, file)
        return found

    def _build(self, dtype: str, file: str) -> Tensor:
        if dtype not in _NUMPY:
            raise RuntimeError(
                f"ember.load: {file} holds a tensor of dtype torch.{dtype}, which ember "
                "does not support"
            )
        array = np.frombuffer(self.raw, dtype=_NUMPY[dtype])
        if dtype != "bfloat16":
            return self.place(array, self.name, self.location)
        # The raw bits as ml_dtypes' bfloat16, ember.bfloat16's NumPy dtype.
        return self.place(array.view(_dtype.bfloat16.numpy), self.name, self.location)


class _Rebuild:
    """Ember's versions of the functions `torch._utils` pickles tensors through."""

    def __init__(self, file: str, surveying: bool = False) -> None:
        self.file = file
        self.surveying = surveying  # the legacy format's first pass builds no tensors

    def tensor_v2(self, storage: Any, offset: int, size: Any, stride: Any,
                  requires_grad: bool, hooks: Any, metadata: Any = None) -> Tensor:  # fmt: skip
        if self.surveying:
            return None  # type: ignore[return-value]
        if not isinstance(storage, tuple):
            raise CheckpointRefused(f"ember.load: {self.file}: a tensor without a storage")
        held, dtype = storage
        if dtype is None:
            raise CheckpointRefused(f"ember.load: {self.file}: an untyped storage")
        return self._view(held.as_dtype(dtype, self.file), offset, size, stride, requires_grad)

    def tensor_v3(self, storage: Any, offset: int, size: Any, stride: Any,
                  grad: bool, hooks: Any, dtype: Any, metadata: Any = None) -> Tensor:  # fmt: skip
        name = dtype.name if isinstance(dtype, _dtype.dtype) else str(dtype)
        return self.tensor_v2((storage[0], name), offset, size, stride, grad, hooks)

    def _view(self, base: Tensor, offset: int, size: Any, stride: Any, grad: bool) -> Tensor:
        t = as_strided(base, tuple(size), tuple(stride), offset)
        return t.requires_grad_(True) if grad else t

    def parameter(self, data: Tensor, requires_grad: bool, hooks: Any, *state: Any) -> Tensor:
        if self.surveying:
            return data
        return Parameter(data.detach(), requires_grad)

    @staticmethod
    def from_type(func: Callable[..., Any], new_type: Any, args: Any, state: Any) -> Any:
        # A tensor pickled with its Python state (a subclass): Ember keeps the tensor.
        return func(*args)


def _encode_bytes(text: str, encoding: str = "latin1") -> bytes:
    """`_codecs.encode`, which protocol-2 pickles use to carry bytes, for latin-1 only."""
    if not isinstance(text, str) or encoding != "latin1":
        raise CheckpointRefused("ember.load: _codecs.encode is allowed for latin1 text only")
    return codecs.encode(text, "latin1")


def _torch_dtype(name: str) -> Any:
    found = getattr(_dtype, name, None)
    return found if isinstance(found, _dtype.dtype) else _MissingDtype(name)


class _MissingDtype:
    """A dtype value ember lacks (complex64 in an optimizer's state, say): kept as a name."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


def _device(spec: Any, index: Any = None) -> Any:
    try:
        return device(spec) if index is None else device(spec, index)
    except (RuntimeError, ValueError):
        return str(spec) if index is None else f"{spec}:{index}"


def _globals(rebuild: _Rebuild) -> dict[str, Any]:
    table: dict[str, Any] = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        "builtins.set": set,
        "builtins.frozenset": frozenset,
        "builtins.bytearray": bytearray,
        "builtins.complex": complex,
        "builtins.slice": slice,
        "_codecs.encode": _encode_bytes,
        "torch._utils._rebuild_tensor": rebuild.tensor_v2,
        "torch._utils._rebuild_tensor_v2": rebuild.tensor_v2,
        "torch._utils._rebuild_tensor_v3": rebuild.tensor_v3,
        "torch._utils._rebuild_parameter": rebuild.parameter,
        "torch._utils._rebuild_parameter_with_state": rebuild.parameter,
        "torch._tensor._rebuild_from_type_v2": rebuild.from_type,
        "torch.serialization._get_layout": str,
        "torch.Size": Size,
        "torch.device": _device,
        "torch.Tensor": Tensor,
        "torch.nn.parameter.Parameter": _parameter_class(),
    }
    for storage, dtype in _STORAGE_DTYPES.items():
        table[f"torch.{storage}"] = table[f"torch.cuda.{storage}"] = _StorageType(dtype)
    table["torch.storage.UntypedStorage"] = table["torch.UntypedStorage"] = _StorageType(None)
    for name in _TORCH_DTYPES:
        table[f"torch.{name}"] = _torch_dtype(name)
    return table


def _parameter_class() -> Any:
    return Parameter


class _RestrictedUnpickler(pickle.Unpickler):
    """An unpickler whose globals come from `table` and the user's allow-list only."""

    def __init__(
        self, stream: IO[bytes], file: str, table: dict[str, Any], storage: Callable[[Any], Any]
    ) -> None:
        super().__init__(stream, encoding="utf-8")
        self.file, self.table, self.storage = file, table, storage

    def find_class(self, module: str, name: str) -> Any:
        # Protocol-2 pickles name Python 2's modules (__builtin__.set); map them as
        # pickle's own find_class does.
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        path = f"{module}.{name}"
        found = self.table.get(path)
        if found is None:
            found = user_global(path)
        if found is None:
            raise refuse(path, self.file or "the checkpoint")
        return found

    def persistent_load(self, pid: Any) -> Any:
        return self.storage(pid)


def _storage_id(pid: Any, file: str) -> tuple[_StorageType, str, str]:
    if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"):
        raise CheckpointRefused(f"ember.load: {file}: unexpected persistent id {pid!r}")
    kind, key, location = pid[1], pid[2], pid[3]
    if not (isinstance(kind, _StorageType) and isinstance(location, str)):
        raise CheckpointRefused(f"ember.load: {file}: unexpected storage {pid!r}")
    return kind, str(key), location


# -- the zip format (PyTorch >= 1.6) -------------------------------------------------------


def read_zip(data: bytes, file: str, place: Placer) -> Any:
    """The object a `torch.save` zip archive holds."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        names = archive.namelist()
    except (zipfile.BadZipFile, ValueError) as error:
        raise RuntimeError(f"ember.load: {file} is a corrupted zip archive: {error}") from error
    pickles = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
    if not pickles or any(n.endswith("/constants.pkl") for n in names):
        kind = "a TorchScript archive (code)" if pickles else "a zip archive without data.pkl"
        raise RuntimeError(f"ember.load: {file} is {kind}, not a torch.save checkpoint")
    prefix = pickles[0][: -len("data.pkl")]
    order = _read_text(archive, prefix + "byteorder", "little")
    storages: dict[str, _Storage] = {}

    def storage(pid: Any) -> tuple[_Storage, str | None]:
        kind, key, location = _storage_id(pid, file)
        held = storages.get(key)
        if held is None:
            raw = _read_member(archive, f"{prefix}data/{key}", file)
            held = storages[key] = _Storage(raw, key, location, _byteorder(place, order))
        return held, kind.dtype

    with archive.open(pickles[0]) as stream:
        return _RestrictedUnpickler(stream, file, _globals(_Rebuild(file)), storage).load()


def _read_text(archive: zipfile.ZipFile, name: str, default: str) -> str:
    try:
        return archive.read(name).decode().strip()
    except KeyError:
        return default


def _read_member(archive: zipfile.ZipFile, name: str, file: str) -> np.ndarray:
    try:
        return np.frombuffer(archive.read(name), dtype=np.uint8)
    except KeyError as error:
        raise RuntimeError(f"ember.load: {file} lacks the storage record {name}") from error
    except (zipfile.BadZipFile, OSError) as error:
        raise RuntimeError(f"ember.load: {file} is corrupted ({name}): {error}") from error


def _byteorder(place: Placer, order: str) -> Placer:
    if order == "little":
        return place
    if order != "big":
        raise RuntimeError(f"ember.load: unknown byte order {order!r}")

    def swapped(array: np.ndarray, name: str, location: str) -> Tensor:
        return place(array.byteswap().view(array.dtype.newbyteorder("<")), name, location)

    return swapped


# -- the legacy format (PyTorch < 1.6, or _use_new_zipfile_serialization=False) ------------


def read_legacy(data: bytes, file: str, place: Placer) -> Any:
    """The object a legacy `torch.save` stream holds: magic number, protocol, system info,
    the object's pickle, the list of storage keys, then each storage's count and bytes."""
    head = _LegacyHead(data)
    stream = head.stream
    if _safe_loads(stream) != _LEGACY_PROTOCOL:
        raise RuntimeError(f"ember.load: {file} has an unknown legacy protocol version")
    info = _safe_loads(stream)
    little = not isinstance(info, dict) or info.get("little_endian", True)
    body_start = stream.tell()
    kinds: dict[str, tuple[_StorageType, str]] = {}

    def survey(pid: Any) -> None:  # the first pass learns each storage's type
        kind, key, location = _storage_id(pid, file)
        kinds[key] = (kind, location)

    _RestrictedUnpickler(stream, file, _globals(_Rebuild(file, True)), survey).load()
    keys = _safe_loads(stream)
    offset = stream.tell()
    storages: dict[str, _Storage] = {}
    for key in keys:
        kind, location = kinds[str(key)]
        width = np.dtype(_NUMPY.get(kind.dtype or "uint8", "u1")).itemsize
        count = int.from_bytes(data[offset : offset + 8], "little" if little else "big")
        raw = np.frombuffer(data, np.uint8, count * width, offset + 8)
        offset += 8 + count * width
        placer = place if little else _byteorder(place, "big")
        storages[str(key)] = _Storage(raw, str(key), location, placer)

    def storage(pid: Any) -> tuple[_Storage, str | None]:
        kind, key, _ = _storage_id(pid, file)
        return storages[key], kind.dtype

    stream.seek(body_start)
    return _RestrictedUnpickler(stream, file, _globals(_Rebuild(file)), storage).load()
