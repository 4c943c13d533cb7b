"""The cuda plugin on this machine, found through its entry point in a fresh interpreter:
it loads, reports the device with the driver's own reason when there is none, leaves the
other devices working, and costs a CPU-only import a few milliseconds.

The expected reason is computed independently in the same interpreter, by asking CuPy's
runtime bindings directly; on a GPU machine the device must instead be available.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DEVICE_ROOT = ROOT / "devices" / "cuda"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder on PYTHONPATH holding ember-cuda's entry point, unless it is installed."""
    folder = tmp_path_factory.mktemp("cuda-site")
    if not any(ep.name == "cuda" for ep in entry_points(group="ember.plugins")):
        info = folder / "ember_cuda-0.1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ember-cuda\nVersion: 0.1.0\n")
        (info / "entry_points.txt").write_text("[ember.plugins]\ncuda = ember_cuda.plugin\n")
    return folder


def run(site: Path, code: str, *args: str, env: dict[str, str] | None = None) -> str:
    paths = [str(DEVICE_ROOT), str(site), os.environ.get("PYTHONPATH", "")]
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in paths if p),
        **(env or {}),
    }
    environment.pop("EMBER_PLUGINS", None)
    environment.pop("EMBER_DISABLE_PLUGINS", None)
    done = subprocess.run(
        [sys.executable, *args, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=environment,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


STATUS = """
    import json, sys
    {before}
    import ember, ember.plugins
    statuses = {{s.name: [s.status, s.error, s.device_types] for s in ember.plugins.status()}}
    try:
        ember.zeros(3, device="cuda")
        opened = None
    except RuntimeError as error:
        opened = str(error)
    x = ember.tensor([1.0, 2.0, 3.0])
    others = {{}}
    for kind in [k for s in ember.plugins.status() for k in s.device_types]:
        if kind != "cuda" and ember.is_available(kind):
            t = ember.tensor([1.0, 2.0, 3.0], device=kind)
            others[kind] = (t * 2 + 1).tolist()
    expected = None
    if "cupy_backends" not in sys.modules or sys.modules["cupy_backends"] is not None:
        try:
            from cupy_backends.cuda.api import runtime
            runtime.getDeviceCount()
        except ImportError as error:
            expected = "import"
        except runtime.CUDARuntimeError as error:
            expected = [error.status, str(error)]
    print(json.dumps({{
        "statuses": statuses,
        "available": ember.is_available("cuda"),
        "count": ember.device_count("cuda"),
        "opened": opened,
        "cpu": (x * 2 + 1).tolist(),
        "others": others,
        "expected": expected,
    }}))
"""


def test_the_plugin_loads_and_reports_the_driver_status(site: Path) -> None:
    data = json.loads(run(site, STATUS.format(before="")))
    assert data["statuses"]["cuda"][:2] == ["loaded", None]
    assert data["statuses"]["cuda"][2] == ["cuda"]
    assert data["cpu"] == [3.0, 5.0, 7.0]
    assert all(values == [3.0, 5.0, 7.0] for values in data["others"].values())
    expected = data["expected"]
    if expected is None:  # a GPU machine: getDeviceCount succeeded
        assert data["available"] and data["count"] >= 1
        return
    assert expected != "import", "CuPy imports in this interpreter but not in the probe"
    status, message = expected
    assert not data["available"] and data["count"] == 0
    assert f"status {status}" in data["opened"] and message in data["opened"]
    if status == 35:
        assert "cudaErrorInsufficientDriver" in data["opened"]
        assert "driver" in data["opened"]
    if status == 100:
        assert "cudaErrorNoDevice" in data["opened"] and "no GPU" in data["opened"]


def test_without_cupy_the_reason_says_to_install_it(site: Path) -> None:
    # sys.modules[name] = None is how Python spells "this module is not installed":
    # every import of it raises ImportError, as in an environment without CuPy.
    before = "sys.modules['cupy_backends'] = None; sys.modules['cupy'] = None"
    data = json.loads(run(site, STATUS.format(before=before)))
    assert data["statuses"]["cuda"][:2] == ["loaded", None]
    assert not data["available"]
    assert "CuPy is not installed" in data["opened"]
    assert "ember-cuda[cuda13]" in data["opened"]
    assert data["cpu"] == [3.0, 5.0, 7.0]


def test_info_shows_the_device_and_why_it_is_unavailable(site: Path) -> None:
    out = run(site, "import runpy, sys; sys.argv = ['ember', 'info']; "
              "runpy.run_module('ember', run_name='__main__')")  # fmt: skip
    rows = [line.split() for line in out.splitlines()]
    assert ["cuda", "0.1.0", "ember-cuda", "loaded", "cuda"] in rows
    device_rows = [row for row in rows if row[:2] == ["cuda", "cuda"]]
    assert device_rows, out
    if device_rows[0][3] == "no":
        assert "why:" in out and "status" in out


def test_importing_the_plugin_costs_a_cpu_only_machine_little(site: Path) -> None:
    """The plugin's import and its probe (what loading the plugin costs), after ember."""
    code = """
        import time, json
        import ember, ember.plugins.sdk
        start = time.perf_counter()
        import ember_cuda.plugin
        imported = time.perf_counter()
        ember_cuda.plugin.BACKEND.unavailable_reason()
        probed = time.perf_counter()
        import sys
        print(json.dumps({"import_ms": (imported - start) * 1e3,
                          "probe_ms": (probed - imported) * 1e3,
                          "cupy_imported": "cupy" in sys.modules}))
    """
    run(site, code)  # once, so that bytecode is cached where it can be
    data = json.loads(run(site, code))
    print(f"ember_cuda plugin: import {data['import_ms']:.1f} ms, probe {data['probe_ms']:.1f} ms")
    assert not data["cupy_imported"], "the probe must import only cupy_backends' runtime"
    # ~1 ms import and ~3 ms probe with bytecode cached, ~15 ms without: a generous bound.
    assert data["import_ms"] + data["probe_ms"] < 100
