"""`python -m ember info`, `tour` and `demo`: what they print and how they fail."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from ember.__main__ import main


def section(output: str, title: str) -> list[str]:
    """The lines of the block whose first line starts with `title`."""
    for block in output.split("\n\n"):
        lines = block.splitlines()
        if lines and lines[0].startswith(title):
            return lines
    raise AssertionError(f"no section {title!r} in:\n{output}")


def row(lines: list[str], first_cell: str) -> str:
    matches = [line for line in lines if line.split() and line.split()[0] == first_cell]
    assert len(matches) == 1, f"{first_cell!r} in {lines}"
    return matches[0]


def assert_aligned(lines: list[str]) -> None:
    """Every row's cells start where the header's column titles start (notes excepted)."""
    cell = re.compile(r"\S+(?: \S+)*")  # cells are separated by two spaces or more
    columns = [m.start() for m in cell.finditer(lines[1])]
    for line in lines[2:]:
        if line[columns[0]] == " ":
            continue  # a note, indented under its row
        starts = [m.start() for m in cell.finditer(line)]
        assert starts == columns[: len(starts)], f"misaligned:\n{lines[1]}\n{line}"


def test_info_reports_every_plugin_device_type_and_kernel_table(run_ember, full_site):
    result = run_ember("info", site=full_site)
    assert result.returncode == 0, result.stderr
    out = result.stdout

    plugins = section(out, "Plugins")
    assert plugins[1].split() == ["NAME", "VERSION", "DISTRIBUTION", "STATUS", "DEVICE", "TYPES"]
    assert row(plugins, "toy").split() == [
        "toy",
        "0.2.0",
        "ember-toy",
        "loaded",
        "toydev,",
        "toyoff",
    ]
    assert row(plugins, "toy_extras").split()[1:4] == ["0.1.0", "ember-toy-extras", "loaded"]
    assert row(plugins, "cpu").split()[2:4] == ["ember-cpu", "loaded"]
    for name, dist, error in [
        ("broken_import", "ember-broken-import", "ImportError: libtoy.so: cannot open shared"),
        ("broken_devices", "ember-broken-devices", "RuntimeError: toy firmware did not answer"),
        ("broken_kernels", "ember-broken-kernels", "ValueError: kernel table corrupt"),
    ]:
        line = row(plugins, name)
        assert line.split()[1:4] == ["0.0.1", dist, "failed"]
        note = plugins[plugins.index(line) + 1]
        assert note.strip().startswith(f"error: {error}")
    assert_aligned(plugins)

    devices = section(out, "Device types")
    assert row(devices, "toydev").split() == ["toydev", "toy", "2", "yes"]
    toyoff = row(devices, "toyoff")
    assert toyoff.split() == ["toyoff", "toy", "0", "no"]
    assert devices[devices.index(toyoff) + 1].strip() == "why: no toy hardware attached"
    assert row(devices, "cpu").split() == ["cpu", "cpu", "1", "yes"]
    assert_aligned(devices)

    kernels = section(out, "Kernels")
    toydev = row(kernels, "toydev").split()
    assert toydev[1] == "3"  # fill_, copy_ and the third-party neg
    assert toydev[2] == "0"  # nothing rendered from the expression table
    assert int(toydev[3]) > 0 and int(toydev[4]) > 0  # composites, missing primitives
    missing = kernels[kernels.index(row(kernels, "toydev")) + 1].strip()
    assert missing.startswith("missing primitives: arange_,")
    assert "neg," not in missing.replace("(", " ")
    assert row(kernels, "toyoff").split()[1] == "0"
    assert "halfdev" not in out
    assert all(len(line) <= 100 for line in out.splitlines())


def test_info_shows_settings_and_disabled_plugins(run_ember, full_site):
    result = run_ember(
        "info", site=full_site, EMBER_DISABLE_PLUGINS="broken_import", EMBER_DEVICE="toydev:1"
    )
    assert result.returncode == 0, result.stderr
    assert "settings: EMBER_DISABLE_PLUGINS=broken_import EMBER_DEVICE=toydev:1" in result.stdout
    assert "default device: toydev:1" in result.stdout
    line = row(section(result.stdout, "Plugins"), "broken_import")
    assert line.split()[1:] == ["0.0.1", "ember-broken-import", "disabled"]


def test_info_reports_an_unusable_default_device(run_ember, good_site):
    result = run_ember("info", site=good_site, EMBER_DEVICE="toyoff")
    assert result.returncode == 0, result.stderr
    assert "default device: none (device toyoff is unavailable: no toy hardware" in result.stdout


def test_info_in_strict_mode_fails_with_the_plugin_error(run_ember, full_site):
    result = run_ember("info", site=full_site, EMBER_STRICT_PLUGINS="1")
    assert result.returncode == 1
    assert result.stdout == ""
    assert re.fullmatch(r"ember: plugin 'broken_\w+' failed to load: \w+Error: .+\n", result.stderr)


def test_tour_on_an_unavailable_device_says_why(run_ember, good_site):
    result = run_ember("tour", "--device", "toyoff", site=good_site)
    assert result.returncode == 1
    assert "Plugins" in result.stdout  # info comes first
    assert "device toyoff:0 is unavailable: no toy hardware attached" in result.stderr


def test_tour_on_a_device_without_kernels_names_the_missing_kernel(run_ember, good_site):
    result = run_ember("tour", "--device", "toydev", site=good_site)
    assert result.returncode == 1
    assert "Tensor tour on toydev:0" in result.stdout
    assert "stopped: arange_: no kernel for device toydev:0 (dtype ember.float32)" in result.stderr


def test_tour_runs_the_tensor_tour_on_cpu(run_ember):
    result = run_ember("tour", "--device", "cpu")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Tensor tour on cpu" in out
    assert ">>> a + b  # broadcasting: (2, 3) with (3,)\ntensor([[10., 21., 32.],\n" in out
    assert ">>> a.sum(dim=1)  # a reduction\ntensor([ 3., 12.])" in out
    assert ">>> a @ a.T  # matmul: (2, 3) @ (3, 2)\ntensor([[ 5., 14.],\n" in out
    assert re.search(r"timing on cpu: .* us per op; .* GFLOP/s", out)


def test_demo_prefers_an_available_accelerator_and_says_why_it_stops(run_ember, good_site):
    result = run_ember("demo", "--epochs", "1", site=good_site)
    assert result.returncode == 1
    assert "training on toydev:0" in result.stdout  # toydev is available: preferred to cpu
    assert "no kernel for device toydev:0" in result.stderr


def test_demo_on_an_unavailable_device_says_why(run_ember, good_site):
    result = run_ember("demo", "--device", "toyoff", site=good_site)
    assert result.returncode == 1
    assert "digits: device toyoff is unavailable: no toy hardware attached" in result.stderr


def test_main_in_process(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert row(section(out, "Device types"), "cpu").split()[:2] == ["cpu", "cpu"]


def test_a_command_is_required(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code == 2
    assert "COMMAND" in capsys.readouterr().err


def test_console_script_is_installed(run_code):
    script = shutil.which("ember", path=str(Path(sys.executable).parent))
    assert script is not None, "the `ember` console script is missing: reinstall ember"
    result = run_code(f"import subprocess; subprocess.run([{script!r}, 'info'], check=True)")
    assert result.returncode == 0, result.stderr
    assert "Plugins (entry-point group 'ember.plugins')" in result.stdout
