"""ember.save / ember.load: round trips of nested state dicts and every dtype, map_location,
crafted and damaged files, and atomic writes."""

from __future__ import annotations

import io
import os
import pathlib
from typing import Any

import numpy as np
import pytest
import safetensors.numpy

import ember
from ember import optim
from ember.serialization import _safetensors_format

from ._forge import forge

DTYPES = [
    ember.bool,
    ember.uint8,
    ember.int8,
    ember.int32,
    ember.int64,
    ember.float16,
    ember.float32,
    ember.float64,
]


def values(dtype: ember.dtype, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype is ember.bool:
        return rng.random(shape) < 0.5
    if dtype.is_floating_point:
        return rng.standard_normal(shape).astype(dtype.numpy)
    info = np.iinfo(dtype.numpy)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype.numpy)


def assert_same_tensor(got: Any, expected: ember.Tensor) -> None:
    assert isinstance(got, ember.Tensor)
    assert got.dtype is expected.dtype and got.shape == expected.shape
    assert got.device == expected.device
    np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))


# -- round trips ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 0, 3), (3, 4, 2)], ids=str)
def test_every_dtype_and_shape_round_trips(
    tmp_path: pathlib.Path, dtype: ember.dtype, shape: tuple[int, ...], device: str
) -> None:
    t = ember.tensor(values(dtype, shape), dtype=dtype, device=device)
    ember.save({"t": t}, tmp_path / "c.safetensors")
    assert_same_tensor(ember.load(tmp_path / "c.safetensors")["t"], t)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_non_contiguous_tensors_save_their_values(
    tmp_path: pathlib.Path, dtype: ember.dtype, device: str
) -> None:
    base = ember.tensor(values(dtype, (4, 6)), dtype=dtype, device=device)
    views = {
        "transposed": base.t(),
        "stepped": base[::2, 1::3],
        "expanded": base[1:2, :].expand(3, 6),
        "offset": base[2],
        "scalar": base[3, 4],
    }
    ember.save(views, str(tmp_path / "v"))
    loaded = ember.load(str(tmp_path / "v"))
    for key, view in views.items():
        assert_same_tensor(loaded[key], view)
        assert loaded[key].is_contiguous()


def test_nested_structures_and_plain_values_round_trip(tmp_path: pathlib.Path) -> None:
    weight = ember.randn(3, 2)
    obj = {
        "model": {"fc.weight": weight, "fc.bias": ember.zeros(3)},
        "epochs": [1, 2, (3, "three", None)],
        "numbers": {
            0: 2**80,
            -1: -0.0,
            1.5: 1e-300,
            True: float("inf"),
            None: float("-inf"),
            "nan": float("nan"),
        },
        "empty": {"list": [], "tuple": (), "dict": {}},
        "text": 'ünïcode \u2603 "quoted" \\ back',
        "flag": False,
        "array": np.arange(6, dtype=np.int16).reshape(2, 3),
        "numpy_scalars": [np.float32(0.25), np.int64(7), np.bool_(True)],
    }
    ember.save(obj, tmp_path / "n")
    loaded = ember.load(tmp_path / "n")
    assert list(loaded) == list(obj)
    assert_same_tensor(loaded["model"]["fc.weight"], weight)
    assert loaded["epochs"] == [1, 2, (3, "three", None)]
    assert isinstance(loaded["epochs"][2], tuple)
    numbers = loaded["numbers"]
    assert list(numbers) == [0, -1, 1.5, True, None, "nan"]
    assert numbers[0] == 2**80 and math_copysign(numbers[-1]) == -1.0
    assert numbers[1.5] == 1e-300 and numbers[True] == float("inf")
    assert numbers[None] == float("-inf") and numbers["nan"] != numbers["nan"]
    assert loaded["empty"] == {"list": [], "tuple": (), "dict": {}}
    assert loaded["text"] == obj["text"] and loaded["flag"] is False
    np.testing.assert_array_equal(loaded["array"], obj["array"])
    assert loaded["array"].dtype == np.int16 and loaded["array"].flags.writeable
    assert loaded["numpy_scalars"] == [0.25, 7, True]


def math_copysign(x: float) -> float:
    return float(np.copysign(1.0, x))


def test_a_tensor_saved_twice_is_stored_once_and_loads_as_one(tmp_path: pathlib.Path) -> None:
    shared = ember.arange(4.0)
    ember.save({"a": shared, "b": [shared], "c": shared.clone()}, tmp_path / "s")
    assert len(safetensors.numpy.load_file(tmp_path / "s")) == 2
    loaded = ember.load(tmp_path / "s")
    assert loaded["a"] is loaded["b"][0] and loaded["a"] is not loaded["c"]


def test_requires_grad_survives(tmp_path: pathlib.Path) -> None:
    p = ember.ones(2).requires_grad_()
    ember.save({"p": p, "d": p.detach()}, tmp_path / "g")
    loaded = ember.load(tmp_path / "g")
    assert loaded["p"].requires_grad and not loaded["d"].requires_grad


def test_tensor_names_follow_the_state_dict_keys(tmp_path: pathlib.Path) -> None:
    """Other safetensors readers see a module state dict under its own keys."""
    state = {"layer.weight": ember.ones(2, 2), "layer.bias": ember.zeros(2)}
    ember.save(state, tmp_path / "m")
    assert sorted(safetensors.numpy.load_file(tmp_path / "m")) == sorted(state)


def test_plain_safetensors_files_load_as_a_dict_of_tensors(tmp_path: pathlib.Path) -> None:
    arrays = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "i": np.array([1, 2])}
    for metadata in (None, {"format": "pt"}):  # what other writers put there
        safetensors.numpy.save_file(arrays, tmp_path / "plain.safetensors", metadata=metadata)
        loaded = ember.load(tmp_path / "plain.safetensors")
        assert sorted(loaded) == ["i", "w"]
        np.testing.assert_array_equal(np.asarray(loaded["w"]), arrays["w"])


def test_file_objects(tmp_path: pathlib.Path) -> None:
    buffer = io.BytesIO()
    ember.save({"x": ember.arange(3)}, buffer)
    buffer.seek(0)
    np.testing.assert_array_equal(np.asarray(ember.load(buffer)["x"]), [0, 1, 2])


def test_optimizer_state_round_trip_continues_training(tmp_path: pathlib.Path) -> None:
    params = [ember.randn(3, 2).requires_grad_(), ember.randn(2).requires_grad_()]
    opt = optim.Adam(params, lr=0.1, amsgrad=True)
    for _ in range(3):
        for p in params:
            p.grad = ember.ones(*p.shape)
        opt.step()
    ember.save({"params": params, "optimizer": opt.state_dict()}, tmp_path / "o")
    loaded = ember.load(tmp_path / "o")
    assert sorted(loaded["optimizer"]["state"]) == [0, 1]
    restored_params = [p.detach().requires_grad_() for p in loaded["params"]]
    restored = optim.Adam(restored_params, lr=0.5)
    restored.load_state_dict(loaded["optimizer"])
    for both in zip(params, restored_params, strict=True):
        for p in both:
            p.grad = ember.full(p.shape, 0.5)
    opt.step()
    restored.step()
    for p, q in zip(params, restored_params, strict=True):
        np.testing.assert_array_equal(np.asarray(p.detach()), np.asarray(q.detach()))


def test_scheduler_state_round_trip(tmp_path: pathlib.Path) -> None:
    opt = optim.SGD([ember.zeros(1).requires_grad_()], lr=0.1, momentum=0.9)
    sched = optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=20)
    for _ in range(5):
        opt.step()
        sched.step()
    ember.save({"optimizer": opt.state_dict(), "scheduler": sched.state_dict()}, tmp_path / "s")
    loaded = ember.load(tmp_path / "s")
    assert loaded["scheduler"] == sched.state_dict()
    assert loaded["optimizer"]["param_groups"] == opt.state_dict()["param_groups"]


# -- map_location -----------------------------------------------------------------------------


def test_map_location_forms(tmp_path: pathlib.Path, device: str) -> None:
    t = ember.arange(4.0, device=device)
    ember.save({"t": t}, tmp_path / "d")
    for where in ("cpu", ember.device("cpu"), {device: "cpu"}):
        assert ember.load(tmp_path / "d", map_location=where)["t"].device == ember.device("cpu")
    seen: list[str] = []

    def relocate(cpu_tensor: ember.Tensor, location: str) -> ember.Tensor:
        seen.append(location)
        assert cpu_tensor.device == ember.device("cpu")
        return ember.mul(cpu_tensor, 2.0)

    np.testing.assert_array_equal(
        np.asarray(ember.load(tmp_path / "d", map_location=relocate)["t"]), [0, 2, 4, 6]
    )
    assert seen == [str(ember.device(device))]
    default = ember.load(tmp_path / "d", map_location=lambda s, loc: None)["t"]
    assert default.device == t.device


def test_an_unavailable_saved_device_needs_map_location(tmp_path: pathlib.Path) -> None:
    structure = {"dict": [["t", {"tensor": "t", "device": "nodevice:3"}]]}
    forge(tmp_path / "f", structure, {"t": np.zeros(2, np.float32)})
    with pytest.raises(RuntimeError, match=r"cannot place tensor 't'.*map_location"):
        ember.load(tmp_path / "f")
    loaded = ember.load(tmp_path / "f", map_location="cpu")
    assert loaded["t"].device == ember.device("cpu")
    assert ember.load(tmp_path / "f", map_location={"nodevice:3": "cpu"})["t"].shape == (2,)


# -- what cannot be saved -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"a": {"b": lambda: 0}}, "at a.b: only module-level classes and functions"),
        ({("x", 1): 1}, "dict keys must be"),
        ({"a": np.array(["s"])}, "dtype <U1 at a"),
    ],
)
def test_unsupported_objects_raise_type_error(
    tmp_path: pathlib.Path, obj: Any, message: str
) -> None:
    with pytest.raises(TypeError, match=message):
        ember.save(obj, tmp_path / "u")
    assert not (tmp_path / "u").exists()


# -- atomic writes ----------------------------------------------------------------------------


def _files(directory: pathlib.Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


@pytest.mark.parametrize("failure", [OSError("No space left on device"), KeyboardInterrupt()])
def test_a_crash_mid_write_keeps_the_previous_checkpoint(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, failure: BaseException
) -> None:
    target = tmp_path / "ckpt"
    ember.save({"version": 1, "w": ember.ones(1000)}, target)
    before = target.read_bytes()

    def partial_write(out: Any, payload: Any) -> None:
        out.write(bytes(payload[: len(payload) // 2]))
        out.flush()
        raise failure

    monkeypatch.setattr(_safetensors_format, "_write_all", partial_write)
    with pytest.raises(type(failure)):
        ember.save({"version": 2, "w": ember.zeros(1000)}, target)
    assert target.read_bytes() == before
    assert ember.load(target)["version"] == 1
    assert _files(tmp_path) == ["ckpt"]


def test_a_failing_fsync_leaves_no_temporary_file(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_fsync(fd: int) -> None:
        raise OSError("I/O error")

    monkeypatch.setattr(os, "fsync", no_fsync)
    with pytest.raises(OSError, match="I/O error"):
        ember.save({"x": 1}, tmp_path / "new")
    assert _files(tmp_path) == []


def test_file_modes(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "m"
    ember.save({}, target)
    umask = os.umask(0o022)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask
    target.chmod(0o600)
    ember.save({"again": True}, target)
    assert target.stat().st_mode & 0o777 == 0o600
    assert ember.load(target) == {"again": True}


def test_missing_files_and_directories_raise_os_errors(tmp_path: pathlib.Path) -> None:
    with pytest.raises(FileNotFoundError):
        ember.load(tmp_path / "absent")
    with pytest.raises(FileNotFoundError):
        ember.save({}, tmp_path / "no" / "such" / "dir")
