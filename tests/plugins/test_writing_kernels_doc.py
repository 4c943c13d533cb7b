"""docs/plugins/writing-kernels.md, followed as a new user would: its files written into an
empty folder, the package installed, its script run in a fresh process, the output the
page shows compared line by line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "plugins" / "writing-kernels.md"
_BLOCK = re.compile(r"^```[a-z]* (file|output-of)=(\S+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks() -> tuple[dict[str, str], dict[str, str]]:
    files, outputs = {}, {}
    for kind, name, body in _BLOCK.findall(DOC.read_text()):
        (files if kind == "file" else outputs)[name] = body
    return files, outputs


def test_the_page_names_its_files_and_output() -> None:
    files, outputs = blocks()
    assert {"pyproject.toml", "my_kernels/ops.py", "my_kernels/plugin.py", "run.py"} <= set(files)
    assert set(outputs) == {"run.py"}


def test_following_the_page_gives_an_installed_package_that_passes_opcheck(tmp_path: Path) -> None:
    files, outputs = blocks()
    package, site = tmp_path / "mykernels", tmp_path / "site"
    for name, body in files.items():
        if name != "run.py":
            (package / name).parent.mkdir(parents=True, exist_ok=True)
            (package / name).write_text(body)
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
         "--no-build-isolation", "--target", str(site), str(package)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    script = tmp_path / "run.py"
    script.write_text(files["run.py"])
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
        "EMBER_CACHE_DIR": str(tmp_path / "cache"),  # a first use: the C kernel compiles
    }
    run = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == outputs["run.py"].splitlines()
