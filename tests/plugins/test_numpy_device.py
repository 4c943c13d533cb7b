"""ember-numpy, the reference device and the template plugin authors copy: found through
its installed entry point, a working device with host memory, rendered from the runtime's
expression table, drawing the cpu's random numbers, and small (at most 300 lines)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import ember
from ember.plugins import expressions

PACKAGE = Path(__file__).resolve().parents[2] / "plugins" / "ember-numpy"
MAX_LINES = 300


def test_found_through_its_installed_entry_point(check_code) -> None:
    source = """
    import json
    import ember
    from ember._dispatch import REGISTRY
    status = {s.name: s for s in ember.plugins.status()}["numpy"]
    native, rendered, composite, missing = REGISTRY.coverage("numpy")
    print(json.dumps({
        "status": [status.status, status.distribution, status.device_types],
        "devices": ember.devices(), "rendered": len(rendered), "missing": missing,
    }))
    """
    data = json.loads(check_code(source, EMBER_PLUGINS="cpu,numpy").stdout)
    assert data["status"] == ["loaded", "ember-numpy", ["numpy"]]
    assert set(data["devices"]) == {"cpu", "numpy"}
    assert data["rendered"] == len(expressions.UNARY) + len(expressions.BINARY)
    assert data["missing"] == []


def test_allocates_computes_and_copies() -> None:
    host = np.arange(12.0).reshape(3, 4)
    t = ember.tensor(host, device="numpy")
    assert str(t.device) == "numpy:0"
    assert ember.zeros(3, device="numpy").tolist() == [0.0, 0.0, 0.0]
    assert ember.full((2,), 7.0, device="numpy").tolist() == [7.0, 7.0]
    assert t.T.tolist() == host.T.tolist()
    np.testing.assert_allclose((t.T @ t + 1).to("cpu").numpy(), host.T @ host + 1)
    np.testing.assert_allclose(t.sum(1).tolist(), host.sum(1))
    assert ember.tensor([[1, 2], [3, 4]], dtype=ember.int8, device="numpy").to("cpu").tolist() == [
        [1, 2],
        [3, 4],
    ]
    assert list(ember.zeros(0, 4, device="numpy").shape) == [0, 4]


def test_memory_is_host_memory_shared_with_numpy() -> None:
    t = ember.zeros(2, 3, device="numpy")
    t.numpy()[1, 2] = 5.0
    assert t[1, 2].item() == 5.0
    array = np.arange(6.0)[::2]
    shared = ember.as_tensor(array, device="numpy")
    array[1] = -1.0
    assert shared.tolist() == [0.0, -1.0, 4.0]
    assert np.from_dlpack(shared).tolist() == [0.0, -1.0, 4.0]


def test_the_numpy_column_covers_every_cell_of_the_c_table() -> None:
    for c_table, numpy_table in (
        (expressions.UNARY, expressions.NUMPY_UNARY),
        (expressions.BINARY, expressions.NUMPY_BINARY),
    ):
        assert {op: set(row) for op, row in c_table.items()} == {
            op: set(row) for op, row in numpy_table.items()
        }


def test_draws_the_same_numbers_as_cpu() -> None:
    def draws(device: str) -> list[list[float]]:
        ember.manual_seed(5)
        return [
            ember.rand(100, device=device).tolist(),
            ember.empty(50, dtype=ember.float64, device=device).uniform_(-3, 5).tolist(),
            ember.randint(-7, 1000, (100,), device=device).tolist(),
            ember.randperm(64, device=device).tolist(),
        ]

    assert draws("numpy") == draws("cpu")


def test_the_template_stays_small() -> None:
    files = [
        path
        for path in PACKAGE.rglob("*")
        if path.is_file()
        and not {"__pycache__", "build"} & set(path.parts)
        and not any(part.endswith(".egg-info") for part in path.parts)
    ]
    lines = sum(len(path.read_text().splitlines()) for path in files)
    assert PACKAGE / "pyproject.toml" in files
    assert lines <= MAX_LINES, f"ember-numpy has {lines} lines (at most {MAX_LINES})"
