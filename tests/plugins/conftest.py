"""Throwaway plugin distributions, installed as real entry-point metadata for subprocesses.

Each distribution is its module (from distributions/) plus a `<name>-<version>.dist-info`
folder holding METADATA and entry_points.txt, written into a temporary folder that a
subprocess gets on PYTHONPATH: exactly what `importlib.metadata` finds for an installed
wheel. Plugin state is process-wide and loaded once, so every scenario runs in a fresh
interpreter.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

SOURCES = Path(__file__).parent / "distributions"


@dataclass(frozen=True)
class Distribution:
    name: str
    version: str
    entry_point: str  # the plugin's name in the group `ember.plugins`
    module: str


TOY = Distribution("ember-toy", "0.2.0", "toy", "ember_toy")
TOY_EXTRAS = Distribution("ember-toy-extras", "0.1.0", "toy_extras", "ember_toy_extras")
BROKEN_IMPORT = Distribution("ember-broken-import", "0.0.1", "broken_import", "ember_broken_import")
BROKEN_DEVICES = Distribution(
    "ember-broken-devices", "0.0.1", "broken_devices", "ember_broken_devices"
)
BROKEN_KERNELS = Distribution(
    "ember-broken-kernels", "0.0.1", "broken_kernels", "ember_broken_kernels"
)
GOOD = (TOY, TOY_EXTRAS)
BROKEN = (BROKEN_IMPORT, BROKEN_DEVICES, BROKEN_KERNELS)


def install(site: Path, distributions: Iterable[Distribution]) -> Path:
    """Write each distribution's module and .dist-info into `site`."""
    site.mkdir(parents=True, exist_ok=True)
    for dist in distributions:
        shutil.copy(SOURCES / f"{dist.module}.py", site / f"{dist.module}.py")
        info = site / f"{dist.name.replace('-', '_')}-{dist.version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {dist.name}\nVersion: {dist.version}\n"
        )
        (info / "entry_points.txt").write_text(
            f"[ember.plugins]\n{dist.entry_point} = {dist.module}\n"
        )
    return site


@pytest.fixture(scope="session")
def good_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the working throwaway plugins installed."""
    return install(tmp_path_factory.mktemp("good-site"), GOOD)


@pytest.fixture(scope="session")
def full_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the working and every kind of broken throwaway plugin installed."""
    return install(tmp_path_factory.mktemp("full-site"), GOOD + BROKEN)


Runner = Callable[..., subprocess.CompletedProcess[str]]


def _other_installed_plugins() -> list[str]:
    """Plugins installed in this environment besides cpu (the opencl device, say)."""
    from importlib.metadata import entry_points

    return sorted(ep.name for ep in entry_points(group="ember.plugins") if ep.name != "cpu")


def _run(args: list[str], site: Path | None, env: dict[str, str]) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("EMBER_")}
    # The scenarios describe cpu plus their own throwaway plugins: other devices installed
    # here stay out unless a scenario names its own allow- or deny-list.
    others = _other_installed_plugins()
    if others and "EMBER_PLUGINS" not in env and "EMBER_DISABLE_PLUGINS" not in env:
        env = {**env, "EMBER_DISABLE_PLUGINS": ",".join(others)}
    if site is not None:
        full_env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(site), os.environ.get("PYTHONPATH")) if p
        )
    full_env.update(env)
    return subprocess.run(
        [sys.executable, *args], env=full_env, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def run_code() -> Runner:
    """Run Python source in a fresh interpreter: run_code(source, site=None, **env)."""

    def run(source: str, site: Path | None = None, **env: str) -> subprocess.CompletedProcess:
        return _run(["-c", textwrap.dedent(source)], site, env)

    return run


@pytest.fixture
def run_ember() -> Runner:
    """Run `python -m ember ARGS...` in a fresh interpreter: run_ember(*args, site=None, **env)."""

    def run(*args: str, site: Path | None = None, **env: str) -> subprocess.CompletedProcess:
        return _run(["-m", "ember", *args], site, env)

    return run


@pytest.fixture
def check_code(run_code: Runner) -> Runner:
    """Like run_code, but fail the test with the subprocess's stderr unless it exits 0."""

    def run(source: str, site: Path | None = None, **env: str) -> subprocess.CompletedProcess:
        result = run_code(source, site, **env)
        assert result.returncode == 0, f"subprocess failed:\n{result.stderr}"
        return result

    return run
