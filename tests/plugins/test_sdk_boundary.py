"""Devices and plugins use only Ember's public SDK: no file under devices/ or plugins/
imports a private `ember._*` module (or names one in an import string)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(
    path
    for folder in ("devices", "plugins")
    for path in (ROOT / folder).rglob("*.py")
    if ".venv" not in path.parts and "build" not in path.parts
)
_PRIVATE = re.compile(r"^ember(\.[a-z0-9_]+)*\._")


def _private_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value] if node.value.startswith("ember.") else []
        else:
            continue
        found += [f"line {node.lineno}: {name}" for name in names if _PRIVATE.match(name)]
    return found


def test_there_are_device_sources() -> None:
    assert any("cpu" in path.parts for path in SOURCES)
    assert any("opencl" in path.parts for path in SOURCES)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_ember_imports(path: Path) -> None:
    assert _private_imports(path) == [], f"{path.relative_to(ROOT)} reaches into ember._*"


def test_the_check_catches_private_imports(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import ember._tensor\nfrom ember._dispatch import X\nfrom ember.plugins import _m\n"
        "from ember.plugins.sdk import Storage\nimport ember\n"
    )
    assert [line.split(": ")[1] for line in _private_imports(sample)] == [
        "ember._tensor", "ember._dispatch", "ember._dispatch.X", "ember.plugins._m",
    ]  # fmt: skip
