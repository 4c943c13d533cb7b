"""Plugin discovery, quarantine, allow/deny lists and strict mode, with real entry points."""

from __future__ import annotations

import json
import subprocess
import textwrap
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path

import pytest

# Printed by every scenario: what the plugin manager reports, as JSON on the last line.
REPORT = """
import json
import ember
from ember._dispatch import REGISTRY

def report(**extra):
    statuses = {
        s.name: {
            "status": s.status,
            "distribution": s.distribution,
            "version": s.version,
            "error": s.error,
            "device_types": s.device_types,
        }
        for s in ember.plugins.status()
    }
    owners = sorted({REGISTRY.entries(*key)[0].plugin for key in REGISTRY._entries})
    cpu = {
        "devices": ember.devices(),
        "cpu": str(ember.device("cpu")),
        "roundtrip": ember.tensor([1.5, 2.5]).tolist(),
        "empty": list(ember.empty(2, 3).shape),
    }
    print(json.dumps({"plugins": statuses, "kernel_owners": owners, "cpu": cpu, **extra}))
"""

CPU_WORKS = {"cpu": "cpu", "roundtrip": [1.5, 2.5], "empty": [2, 3]}


def scenario(
    check_code: Callable[..., subprocess.CompletedProcess[str]],
    site: Path | None,
    body: str = "report()",
    prelude: str = "",
    **env: str,
) -> dict:
    """Run `body` (after REPORT and `prelude`) in a fresh interpreter; return its report."""
    result = check_code(REPORT + prelude + textwrap.dedent(body), site, **env)
    return json.loads(result.stdout.splitlines()[-1])


def assert_cpu_works(data: dict) -> None:
    assert {k: data["cpu"][k] for k in CPU_WORKS} == CPU_WORKS
    assert "cpu" in data["cpu"]["devices"]
    assert data["plugins"]["cpu"]["status"] == "loaded"


def test_good_plugin_is_found_through_its_entry_point(check_code, good_site):
    data = scenario(check_code, good_site)
    assert data["plugins"]["toy"] == {
        "status": "loaded",
        "distribution": "ember-toy",
        "version": "0.2.0",
        "error": None,
        "device_types": ["toydev", "toyoff"],
    }
    assert data["plugins"]["toy_extras"]["status"] == "loaded"
    assert data["plugins"]["toy_extras"]["device_types"] == []
    assert set(data["cpu"]["devices"]) == {"cpu", "toydev"}
    assert_cpu_works(data)


def test_missing_kernel_names_the_op_device_and_dtype(check_code, good_site):
    body = """
    a = ember.ones(2, device="toydev:1")
    try:
        ember.add(a, a)
    except NotImplementedError as exc:
        report(error=str(exc))
    """
    data = scenario(check_code, good_site, body)
    assert data["error"].startswith("add: no kernel for device toydev:1")
    assert "float32" in data["error"]


def test_a_plugin_may_register_kernels_for_another_plugins_device(check_code, good_site):
    body = """
    negated = ember.neg(ember.ones(2, device="toydev")).tolist()  # loads the plugins
    native, _, _, missing = REGISTRY.coverage("toydev")
    report(
        neg=negated,
        native=sorted(native),
        neg_missing="neg" in missing,
    )
    """
    data = scenario(check_code, good_site, body)
    assert data["neg"] == [-1.0, -1.0]
    assert data["native"] == ["copy_", "fill_", "neg"]
    assert not data["neg_missing"]
    assert {"toy", "toy_extras"} <= set(data["kernel_owners"])


def test_broken_plugins_are_quarantined_with_their_errors(check_code, full_site):
    data = scenario(check_code, full_site)
    plugins = data["plugins"]
    assert plugins["broken_import"]["status"] == "failed"
    assert plugins["broken_import"]["error"] == (
        "ImportError: libtoy.so: cannot open shared object file"
    )
    assert plugins["broken_import"]["distribution"] == "ember-broken-import"
    assert plugins["broken_devices"]["status"] == "failed"
    assert plugins["broken_devices"]["error"] == "RuntimeError: toy firmware did not answer"
    assert plugins["broken_kernels"]["status"] == "failed"
    assert plugins["broken_kernels"]["error"] == "ValueError: kernel table corrupt"
    for name in ("broken_import", "broken_devices", "broken_kernels"):
        assert plugins[name]["device_types"] == []
        assert name not in data["kernel_owners"]
    assert plugins["toy"]["status"] == "loaded"
    assert set(data["cpu"]["devices"]) == {"cpu", "toydev"}
    assert_cpu_works(data)


def test_a_failed_kernel_hook_leaves_no_device_and_no_kernel(check_code, full_site):
    body = """
    from ember._ops import names
    try:
        ember.device("halfdev")
    except RuntimeError as exc:
        error = str(exc)
    report(
        error=error,
        halfdev_fill="halfdev" in names.FILL.kernels,
        cpu_fill_owner=next((e.plugin for e in REGISTRY.entries("fill_", "cpu")), "none"),
    )
    """
    data = scenario(check_code, full_site, body)
    assert "unknown device type 'halfdev'" in data["error"]
    assert "plugin broken_kernels failed: ValueError: kernel table corrupt" in data["error"]
    assert not data["halfdev_fill"]
    assert data["cpu_fill_owner"] in ("cpu", "none")  # "none" while cpu kernels are unwritten


def test_disable_list_skips_plugins_by_entry_point_name(check_code, full_site):
    body = """
    try:
        ember.device("toydev")
    except RuntimeError as exc:
        report(error=str(exc))
    """
    data = scenario(
        check_code,
        full_site,
        body,
        EMBER_DISABLE_PLUGINS=" toy, broken_import ,toy_extras",
    )
    plugins = data["plugins"]
    for name in ("toy", "broken_import", "toy_extras"):
        assert plugins[name]["status"] == "disabled"
        assert plugins[name]["error"] is None
        assert plugins[name]["distribution"] is not None
    assert plugins["broken_devices"]["status"] == "failed"
    assert "unknown device type 'toydev'" in data["error"]
    assert "toy" not in data["kernel_owners"]
    assert_cpu_works(data)


def installed_besides_cpu() -> list[str]:
    return [ep.name for ep in entry_points(group="ember.plugins") if ep.name != "cpu"]


def test_allow_list_loads_only_the_named_plugins(check_code, full_site):
    data = scenario(check_code, full_site, EMBER_PLUGINS="cpu,toy")
    plugins = data["plugins"]
    assert {name for name, p in plugins.items() if p["status"] == "loaded"} == {"cpu", "toy"}
    assert {name for name, p in plugins.items() if p["status"] == "disabled"} == {
        "toy_extras",
        "broken_import",
        "broken_devices",
        "broken_kernels",
        *installed_besides_cpu(),  # the real devices installed here are not on the list
    }
    assert "toy_extras" not in data["kernel_owners"]
    assert_cpu_works(data)


def test_deny_list_wins_over_allow_list(check_code, good_site):
    data = scenario(check_code, good_site, EMBER_PLUGINS="cpu,toy", EMBER_DISABLE_PLUGINS="toy")
    assert data["plugins"]["toy"]["status"] == "disabled"
    assert_cpu_works(data)


def test_strict_mode_makes_a_broken_plugin_fatal(run_code, full_site):
    source = """
    import ember  # importing never loads plugins
    from ember.plugins import PluginError
    for attempt in range(2):
        try:
            ember.plugins.status()
        except PluginError as exc:
            print(type(exc.__cause__).__name__, "|", exc)
    try:
        ember.device("cpu")
    except PluginError as exc:
        print("device:", exc)
    """
    result = run_code(source, full_site, EMBER_STRICT_PLUGINS="1")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 3
    assert lines[0] == lines[1], "every later use raises the same error again"
    assert "failed to load" in lines[0]
    causes = {
        "broken_import": "ImportError | plugin 'broken_import' failed to load: ImportError:",
        "broken_devices": "RuntimeError | plugin 'broken_devices' failed to load: RuntimeError:",
        "broken_kernels": "ValueError | plugin 'broken_kernels' failed to load: ValueError:",
    }
    assert any(lines[0].startswith(prefix) for prefix in causes.values()), lines[0]
    assert lines[2].startswith("device: plugin 'broken_")


def test_strict_mode_with_healthy_plugins_loads_normally(check_code, good_site):
    data = scenario(check_code, good_site, EMBER_STRICT_PLUGINS="1")
    assert data["plugins"]["toy"]["status"] == "loaded"
    assert_cpu_works(data)


def test_strict_mode_ignores_disabled_broken_plugins(check_code, full_site):
    data = scenario(
        check_code,
        full_site,
        EMBER_STRICT_PLUGINS="1",
        EMBER_DISABLE_PLUGINS="broken_import,broken_devices,broken_kernels",
    )
    assert all(p["status"] != "failed" for p in data["plugins"].values())
    assert_cpu_works(data)


RUNTIME_PLUGIN = """
from ember.plugins import hookimpl

class RuntimeBackend(ember.DeviceBackend):
    type = "rtdev"
    def device_count(self):
        return 1

class RuntimePlugin:
    def __init__(self, *backends):
        self.backends = list(backends)
    @hookimpl
    def ember_devices(self):
        return self.backends
"""


def test_unregister_purges_interned_devices_and_the_default(check_code):
    body = """
    first, second = RuntimeBackend(), RuntimeBackend()
    ember.plugins.register(RuntimePlugin(first), name="rt")
    old = ember.device("rtdev")
    ember.set_default_device("rtdev")
    ember.plugins.unregister("rt")
    try:
        ember.device("rtdev")
        gone = False
    except RuntimeError:
        gone = True
    default_after = str(ember.get_default_device())
    ember.plugins.register(RuntimePlugin(second), name="rt")
    new = ember.device("rtdev")
    report(
        old_backend=old.backend is first,
        gone=gone,
        default_after=default_after,
        new_backend=new.backend is second,
        fresh=new is not old,
        interned=ember.device("rtdev:0") is new.placement,
    )
    """
    data = scenario(check_code, None, body, prelude=RUNTIME_PLUGIN)
    assert data["old_backend"] and data["gone"] and data["new_backend"]
    assert data["fresh"] and data["interned"]
    assert data["default_after"] == "cpu"
    assert data["plugins"]["rt"]["status"] == "loaded"


def test_register_quarantines_bad_backends(check_code):
    body = """
    class CpuAgain(ember.DeviceBackend):
        type = "cpu"
    class BadName(ember.DeviceBackend):
        type = "Toy Dev"
    results = {}
    for name, plugin in [
        ("dup", RuntimePlugin(CpuAgain())),
        ("badname", RuntimePlugin(BadName())),
        ("notbackend", RuntimePlugin(object())),
        ("twice", RuntimePlugin(RuntimeBackend(), RuntimeBackend())),
    ]:
        status = ember.plugins.register(plugin, name=name)
        results[name] = [status.status, status.error]
    try:
        ember.plugins.register(RuntimePlugin(), name="cpu")
    except ValueError as exc:
        results["same_name"] = str(exc)
    report(results=results)
    """
    data = scenario(check_code, None, body, prelude=RUNTIME_PLUGIN)
    results = data["results"]
    assert results["dup"] == [
        "failed",
        "RuntimeError: device type 'cpu' is already provided by cpu",
    ]
    assert results["badname"][0] == "failed"
    assert "'Toy Dev'" in results["badname"][1]
    assert results["notbackend"][0] == "failed"
    assert "not a DeviceBackend" in results["notbackend"][1]
    assert results["twice"] == [
        "failed",
        "RuntimeError: ember_devices returned device type 'rtdev' twice",
    ]
    assert "already known" in results["same_name"]
    assert_cpu_works(data)  # the cpu plugin kept its status and its device


@pytest.mark.parametrize("strict", ["0", "1"])
def test_register_failure_is_fatal_only_in_strict_mode(run_code, strict):
    source = (
        RUNTIME_PLUGIN
        + """
from ember.plugins import PluginError

class Broken:
    @hookimpl
    def ember_devices(self):
        raise OSError("driver gone")

try:
    print(ember.plugins.register(Broken(), name="broken").status)
except PluginError as exc:
    print("PluginError:", exc)
"""
    )
    result = run_code("import ember\n" + source, EMBER_STRICT_PLUGINS=strict)
    assert result.returncode == 0, result.stderr
    expected = {
        "0": "failed",
        "1": "PluginError: plugin 'broken' failed to load: OSError: driver gone",
    }
    assert result.stdout.strip() == expected[strict]
