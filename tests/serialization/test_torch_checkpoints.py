"""PyTorch's checkpoints read by ember.load (zip and legacy formats), the allow-list, and
`python -m ember convert`: values against torch's own tensors."""

from __future__ import annotations

import collections
import pathlib
import pickle
import subprocess
import sys

import numpy as np
import pytest
import safetensors.numpy
import torch

import ember
import ember.nn as nn


class Scaler(torch.nn.Module):
    """A user class a torch checkpoint may name (for the allow-list tests)."""

    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.full((2,), 3.0))


def _sample() -> dict:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    base = torch.arange(12.0, dtype=torch.float64).reshape(3, 4)
    return {
        "model": model.state_dict(),
        "epoch": 7,
        "loss": 0.25,
        "transposed": base.t(),
        "row": base[1],  # shares base's storage
        "ints": torch.tensor([1, -2, 3], dtype=torch.int32),
        "flags": torch.tensor([True, False]),
        "half": torch.tensor([0.5, 2.0], dtype=torch.float16),
        "param": torch.nn.Parameter(torch.ones(2)),
        "dtype": torch.float16,
        "device": torch.device("cpu"),
        "size": torch.Size([2, 3]),
        "names": {"a", "b"},
        "blob": b"\x00\x01",
        "nested": [(1, 2.5), {"k": None}],
    }


def _check_against(loaded: dict, saved: dict) -> None:
    for key in ("transposed", "row", "ints", "flags", "half"):
        want = saved[key]
        got = loaded[key]
        assert isinstance(got, ember.Tensor)
        assert got.shape == tuple(want.shape)
        assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert loaded["transposed"].stride() == saved["transposed"].stride()
    assert loaded["row"]._storage is loaded["transposed"]._storage  # one storage, as saved
    assert isinstance(loaded["model"], collections.OrderedDict)
    for key, want in saved["model"].items():
        np.testing.assert_array_equal(loaded["model"][key].numpy(), want.numpy())
    assert isinstance(loaded["param"], nn.Parameter) and loaded["param"].requires_grad
    assert loaded["epoch"] == 7 and loaded["loss"] == 0.25
    assert loaded["dtype"] is ember.float16 and loaded["device"].type == "cpu"
    assert loaded["size"] == (2, 3) and isinstance(loaded["size"], ember.Size)
    assert loaded["names"] == {"a", "b"} and loaded["blob"] == b"\x00\x01"
    assert loaded["nested"] == [(1, 2.5), {"k": None}]


@pytest.mark.parametrize("zipped", [True, False], ids=["zip", "legacy"])
def test_a_torch_checkpoint_loads_with_its_values(tmp_path: pathlib.Path, zipped: bool) -> None:
    saved = _sample()
    torch.save(saved, tmp_path / "c.pt", _use_new_zipfile_serialization=zipped)
    _check_against(ember.load(tmp_path / "c.pt"), saved)
    _check_against(ember.load(tmp_path / "c.pt", weights_only=True), saved)


def test_a_torch_state_dict_loads_into_the_ember_module(tmp_path: pathlib.Path) -> None:
    torch.manual_seed(1)
    theirs = torch.nn.Sequential(torch.nn.Linear(5, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    torch.save(theirs.state_dict(), tmp_path / "m.pth")
    ours = nn.Sequential(nn.Linear(5, 3), nn.ReLU(), nn.Linear(3, 2))
    ours.load_state_dict(ember.load(tmp_path / "m.pth"))
    x = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    want = theirs(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(
        ours(ember.from_numpy(x)).detach().numpy(), want, rtol=1e-6, atol=1e-6
    )


def test_a_torch_optimizer_state_loads(tmp_path: pathlib.Path) -> None:
    model = torch.nn.Linear(2, 2)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.ones(1, 2)).sum().backward()
    opt.step()
    torch.save(opt.state_dict(), tmp_path / "o.pt")
    loaded = ember.load(tmp_path / "o.pt")
    assert loaded["param_groups"][0]["lr"] == 0.01
    want = opt.state_dict()["state"][0]["exp_avg"].numpy()
    np.testing.assert_array_equal(loaded["state"][0]["exp_avg"].numpy(), want)


def test_map_location_places_storages(tmp_path: pathlib.Path) -> None:
    torch.save({"w": torch.ones(3)}, tmp_path / "w.pt")
    seen = []

    def where(t: ember.Tensor, location: str) -> ember.Tensor:
        seen.append(location)
        return t

    assert ember.load(tmp_path / "w.pt", map_location=where)["w"].tolist() == [1.0, 1.0, 1.0]
    assert seen == ["cpu"]
    assert ember.load(tmp_path / "w.pt", map_location="cpu")["w"].device.type == "cpu"


def test_a_class_nobody_allowed_is_refused_then_allowed(tmp_path: pathlib.Path) -> None:
    torch.save(Scaler(), tmp_path / "whole.pt")
    path = f"{__name__}.Scaler"
    with pytest.raises(pickle.UnpicklingError, match=f"names the global {path}"):
        ember.load(tmp_path / "whole.pt")
    with pytest.raises(RuntimeError, match="not allow-listed"):  # also a RuntimeError
        ember.load(tmp_path / "whole.pt", weights_only=False)
    # With the class allowed, the object is rebuilt from its pickled state (no __init__).
    with ember.serialization.safe_globals([Scaler]):
        assert ember.serialization.get_safe_globals() == [Scaler]
        rebuilt = ember.load(tmp_path / "whole.pt")
    assert ember.serialization.get_safe_globals() == []
    assert type(rebuilt) is Scaler
    assert rebuilt._parameters["w"].tolist() == [3.0, 3.0]


def test_add_and_clear_safe_globals() -> None:
    ember.serialization.add_safe_globals([Scaler, (collections.defaultdict, "x.dd")])
    try:
        assert ember.serialization.get_safe_globals() == [
            Scaler,
            (collections.defaultdict, "x.dd"),
        ]
    finally:
        ember.serialization.clear_safe_globals()
    assert ember.serialization.get_safe_globals() == []
    with pytest.raises(TypeError, match="not a class or function"):
        ember.serialization.add_safe_globals([3])


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_torchscript_archives_and_unknown_dtypes_are_refused(tmp_path: pathlib.Path) -> None:
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), tmp_path / "s.pt")
    with pytest.raises(RuntimeError, match="TorchScript archive"):
        ember.load(tmp_path / "s.pt")
    torch.save({"c": torch.ones(2, dtype=torch.complex64)}, tmp_path / "c.pt")
    with pytest.raises(RuntimeError, match="dtype complex64, which ember does not support"):
        ember.load(tmp_path / "c.pt")


def test_truncated_torch_checkpoints_raise_runtime_error(tmp_path: pathlib.Path) -> None:
    torch.save({"w": torch.arange(4.0)}, tmp_path / "w.pt")
    data = (tmp_path / "w.pt").read_bytes()
    for length in (10, len(data) // 2, len(data) - 30):
        (tmp_path / "cut.pt").write_bytes(data[:length])
        with pytest.raises(RuntimeError):
            ember.load(tmp_path / "cut.pt")


def test_convert_writes_plain_safetensors(tmp_path: pathlib.Path) -> None:
    saved = _sample()
    torch.save(saved, tmp_path / "in.pt")
    done = subprocess.run(
        [sys.executable, "-m", "ember", "convert", str(tmp_path / "in.pt"), str(tmp_path / "o")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "left out" in done.stdout and "epoch" in done.stdout
    arrays = safetensors.numpy.load_file(tmp_path / "o")
    np.testing.assert_array_equal(arrays["model.0.weight"], saved["model"]["0.weight"].numpy())
    np.testing.assert_array_equal(arrays["transposed"], saved["transposed"].numpy())
    failed = subprocess.run(
        [sys.executable, "-m", "ember", "convert", str(tmp_path / "nope"), str(tmp_path / "x")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert failed.returncode == 1 and "No such file" in failed.stderr
