"""Untrusted and damaged checkpoints: pickle payloads, crafted structures and metadata,
every truncation and every single-byte corruption raise RuntimeError and run nothing."""

from __future__ import annotations

import json
import pathlib
import pickle
from typing import Any

import numpy as np
import pytest
import safetensors.numpy

import ember

from ._forge import forge


class Exploit:
    """Unpickling this would create a marker file."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> Any:
        return (open, (self.marker, "w"))


def test_a_pickle_payload_is_rejected_without_running(tmp_path: pathlib.Path) -> None:
    marker = tmp_path / "pwned"
    (tmp_path / "evil.pt").write_bytes(pickle.dumps({"x": Exploit(str(marker))}))
    with pytest.raises(RuntimeError, match="never unpickles"):
        ember.load(tmp_path / "evil.pt")
    assert not marker.exists()


def test_a_torch_checkpoint_naming_a_callable_is_refused(tmp_path: pathlib.Path) -> None:
    torch = pytest.importorskip("torch")
    marker = tmp_path / "pwned"
    torch.save({"w": torch.ones(2), "x": Exploit(str(marker))}, tmp_path / "model.pt")
    with pytest.raises(pickle.UnpicklingError, match=r"io\.open, which is not allow-listed"):
        ember.load(tmp_path / "model.pt", weights_only=False)
    assert not marker.exists()


@pytest.mark.parametrize(
    ("structure", "message"),
    [
        ({"__reduce__": ["os.system", ["touch pwned"]]}, "unexpected node"),
        ({"dict": [["a", {"tensor": "missing", "device": "cpu"}]]}, "lacks"),
        ({"dict": [[["unhashable"], 1]]}, "unexpected node"),
        ({"dict": [[{"list": [1]}, 1]]}, "unexpected dict key"),
        ({"dict": [["a"]]}, "unexpected dict item"),
        ({"tensor": "t", "device": 7}, "unexpected tensor node"),
        ({"tensor": "t", "device": "cpu", "requires_grad": "yes"}, "unexpected tensor node"),
        ({"float": "1e5"}, "unexpected node"),
        ({"list": [1], "tuple": [2]}, "unexpected node"),
        ([1, 2], "unexpected node"),
        ("{not json", "invalid structure"),
        ('{"list": ' * 100_000 + "[]" + "}" * 100_000, "invalid structure"),
    ],
    ids=range(12),
)
def test_malicious_structures_are_rejected(
    tmp_path: pathlib.Path, structure: Any, message: str
) -> None:
    forge(tmp_path / "m", structure, {"t": np.zeros(1, np.float32)})
    with pytest.raises(RuntimeError, match=message):
        ember.load(tmp_path / "m")
    assert not (pathlib.Path.cwd() / "pwned").exists()


def test_metadata_checks(tmp_path: pathlib.Path) -> None:
    forge(tmp_path / "v", [], metadata={"version": "3"})
    with pytest.raises(RuntimeError, match="format version '3'"):
        ember.load(tmp_path / "v")
    forge(tmp_path / "d", {"list": []}, metadata={"sha256": "abc"})
    with pytest.raises(RuntimeError, match="digest is missing or malformed"):
        ember.load(tmp_path / "d")
    header = json.dumps({"__metadata__": {"format": 1}}).encode()
    (tmp_path / "h").write_bytes(len(header).to_bytes(8, "little") + header)
    with pytest.raises(RuntimeError, match="metadata is not text"):
        ember.load(tmp_path / "h")
    (tmp_path / "big").write_bytes((10**12).to_bytes(8, "little") + b"{}")
    with pytest.raises(RuntimeError, match="truncated or not a safetensors file"):
        ember.load(tmp_path / "big")


def test_unsupported_dtypes_in_a_file_raise(tmp_path: pathlib.Path) -> None:
    safetensors.numpy.save_file({"u": np.zeros(2, np.uint16)}, tmp_path / "u16")
    with pytest.raises(RuntimeError, match="dtype uint16"):
        ember.load(tmp_path / "u16")


def _small_checkpoint(path: pathlib.Path) -> bytes:
    ember.save({"w": ember.arange(6.0).reshape(2, 3), "step": 3, "name": "x"}, path)
    return path.read_bytes()


def test_every_truncation_raises_runtime_error(tmp_path: pathlib.Path) -> None:
    data = _small_checkpoint(tmp_path / "full")
    for length in range(len(data)):
        (tmp_path / "cut").write_bytes(data[:length])
        with pytest.raises(RuntimeError, match="cut"):
            ember.load(tmp_path / "cut")


def test_every_single_byte_corruption_raises_runtime_error(tmp_path: pathlib.Path) -> None:
    data = _small_checkpoint(tmp_path / "full")
    for position in range(len(data)):
        damaged = bytearray(data)
        damaged[position] ^= 0x01
        (tmp_path / "bad").write_bytes(bytes(damaged))
        with pytest.raises(RuntimeError, match="bad"):
            ember.load(tmp_path / "bad")
