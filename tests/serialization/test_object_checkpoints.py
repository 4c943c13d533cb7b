"""ember.save of whole objects (a module, user classes, shared and cyclic references)
without pickle, rebuilt on load only for allow-listed classes."""

from __future__ import annotations

import collections
import json
import pathlib

import numpy as np
import pytest
import safetensors

import ember
import ember.nn as nn
import ember.nn.functional as F


class Tied(nn.Module):
    """A user module with a shared submodule, a functional attribute and plain state."""

    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Linear(3, 3)
        self.decoder = self.encoder
        self.activation = F.relu
        self.config = {"scale": 2.0, "tags": {"x"}, "shape": ember.Size([1, 3])}

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        return self.decoder(self.activation(self.encoder(x))) * self.config["scale"]


class Node:
    def __init__(self, name: str) -> None:
        self.name = name
        self.peer: Node | None = None


def test_a_whole_ember_module_round_trips(tmp_path: pathlib.Path) -> None:
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8, 2))
    model.eval()
    ember.save(model, tmp_path / "m")
    loaded = ember.load(tmp_path / "m")  # Ember's own classes need no allow-listing
    assert type(loaded) is nn.Sequential and not loaded.training
    x = ember.randn(2, 1, 4, 4)
    np.testing.assert_array_equal(loaded(x).detach().numpy(), model(x).detach().numpy())
    assert all(isinstance(p, nn.Parameter) for p in loaded.parameters())
    assert [n for n, _ in loaded.named_parameters()] == [n for n, _ in model.named_parameters()]


def test_a_user_module_needs_allow_listing(tmp_path: pathlib.Path) -> None:
    model = Tied()
    ember.save({"model": model, "step": 3}, tmp_path / "t")
    with pytest.raises(RuntimeError, match=f"names the class {__name__}.Tied"):
        ember.load(tmp_path / "t")
    with ember.serialization.safe_globals([Tied]):
        loaded = ember.load(tmp_path / "t")["model"]
    assert loaded.decoder is loaded.encoder and loaded.activation is F.relu
    assert loaded.config == model.config
    x = ember.randn(4, 3)
    np.testing.assert_array_equal(loaded(x).detach().numpy(), model(x).detach().numpy())


def test_cycles_and_shared_objects(tmp_path: pathlib.Path) -> None:
    a, b = Node("a"), Node("b")
    a.peer, b.peer = b, a
    ember.save([a, b, collections.OrderedDict(z=1, y=2), 1 + 2j, b"\x01"], tmp_path / "c")
    with ember.serialization.safe_globals([Node]):
        ra, rb, od, z, raw = ember.load(tmp_path / "c")
    assert ra.peer is rb and rb.peer is ra and ra.name == "a"
    assert type(od) is collections.OrderedDict and list(od) == ["z", "y"]
    assert z == 1 + 2j and raw == b"\x01"


def test_the_object_graph_is_json_in_the_file(tmp_path: pathlib.Path) -> None:
    ember.save(nn.Linear(2, 1), tmp_path / "l")
    with safetensors.safe_open(tmp_path / "l", "numpy") as f:
        structure = json.loads(f.metadata()["structure"])
        assert sorted(f.keys()) == ["_parameters.bias", "_parameters.weight"]
    assert structure["object"] == "ember.nn.modules.linear.Linear"


def test_a_callable_node_naming_an_ember_class_is_refused(tmp_path: pathlib.Path) -> None:
    # "call" nodes would run a constructor: only containers and allow-listed names may.
    from ._forge import forge

    forge(tmp_path / "f", {"call": "ember.nn.modules.linear.Linear", "id": 0, "args": [9, 9]})
    with pytest.raises(RuntimeError, match=r"callable ember\.nn\.modules\.linear\.Linear"):
        ember.load(tmp_path / "f")
    forge(tmp_path / "g", {"global": "os.system"})
    with pytest.raises(RuntimeError, match=r"global os\.system"):
        ember.load(tmp_path / "g")
