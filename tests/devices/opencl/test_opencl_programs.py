"""The program cache: one build per (context, source, options), binaries kept on disk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import ember
from ember_opencl import _programs
from ember_opencl.backend import BACKEND

BUILD_AND_REPORT = """
import json, sys
import ember
from ember_opencl import _launch, _programs
dev = ember.device("opencl:0")
k = _launch.kernel(dev, sys.argv[1], "probe")
print(json.dumps({**_programs.STATS, "name": k.function_name}))
"""


def _source() -> str:
    # A unique source per test run, so that neither our cache nor PoCL's has seen it.
    token = uuid.uuid4().hex
    return f"__kernel void probe(__global int* out) {{ /* {token} */ out[0] = 7; }}\n"


def _build_in_new_process(cache: Path, source: str) -> dict[str, int]:
    env = {**os.environ, "EMBER_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", BUILD_AND_REPORT, source],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, int] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_new_process_loads_the_binary_from_disk(tmp_path: Path) -> None:
    source = _source()
    first = _build_in_new_process(tmp_path, source)
    assert (first["source_builds"], first["disk_hits"]) == (1, 0)
    stored = list((tmp_path / "opencl").glob("*.bin"))
    assert len(stored) == 1 and stored[0].stat().st_size > 0
    second = _build_in_new_process(tmp_path, source)
    assert (second["source_builds"], second["disk_hits"]) == (0, 1)


def test_a_corrupt_binary_is_rebuilt_silently(tmp_path: Path) -> None:
    source = _source()
    _build_in_new_process(tmp_path, source)
    (stored,) = (tmp_path / "opencl").glob("*.bin")
    stored.write_bytes(b"not a program binary")
    again = _build_in_new_process(tmp_path, source)
    assert (again["source_builds"], again["disk_hits"]) == (1, 0)
    assert stored.read_bytes() != b"not a program binary"  # rewritten with a good binary
    assert _build_in_new_process(tmp_path, source)["disk_hits"] == 1


def test_memory_cache_returns_the_same_program(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    dev = ember.device("opencl:0")
    context = BACKEND.context(dev.index)
    source = _source()
    first = _programs.build(context, source)
    before = dict(_programs.STATS)
    assert _programs.build(context, source) is first
    assert _programs.STATS["memory_hits"] == before["memory_hits"] + 1
    assert _programs.build(context, source, "-DOTHER=1") is not first  # options are in the key


def test_build_errors_carry_the_build_log(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    dev = ember.device("opencl:0")
    context = BACKEND.context(dev.index)
    with pytest.raises(RuntimeError, match="undeclared_name_in_probe") as error:
        _programs.build(
            context, "__kernel void f(__global int* o) { o[0] = undeclared_name_in_probe; }"
        )
    assert "building an OpenCL program failed" in str(error.value)
    assert not list((tmp_path / "opencl").glob("*.bin"))


def test_unwritable_cache_only_costs_a_rebuild(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("EMBER_CACHE_DIR", str(blocker))
    dev = ember.device("opencl:0")
    program = _programs.build(BACKEND.context(dev.index), _source())
    assert program is not None
