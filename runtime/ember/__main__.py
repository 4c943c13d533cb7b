"""`python -m ember` (also the `ember` console script): `info`, `demo`, `tour` and `convert`."""

from __future__ import annotations

import argparse
import importlib.metadata as metadata
import os
import pickle
import platform
import sys
import textwrap
from collections.abc import Sequence

import ember
from ember._dispatch import REGISTRY, describe_conflict
from ember.library._explain import table as library_table
from ember.plugins import ENTRY_POINT_GROUP, PluginError
from ember.plugins._manager import MANAGER
from ember.serialization._convert import convert

__all__ = ["format_info", "main"]

_INDENT = "  "
_WIDTH = 100
_SETTINGS = (
    "EMBER_PLUGINS",
    "EMBER_DISABLE_PLUGINS",
    "EMBER_STRICT_PLUGINS",
    "EMBER_DEVICE",
)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m ember", description="Ember: plugins, devices, a training demo, a tour."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    info = commands.add_parser("info", help="list plugins, device types and kernel coverage")
    info.add_argument(
        "--ops", action="store_true", help="also list every op's kernel per device type"
    )
    # The demo's options belong to the example; `demo --help` lists them.
    commands.add_parser(
        "demo", add_help=False, help="train a small CNN on handwritten digits (demo --help)"
    )
    tour = commands.add_parser("tour", help="show info, then run tensor work on a device")
    tour.add_argument("--device", help="device to run on (default: the default device)")
    convert = commands.add_parser(
        "convert", help="write a checkpoint's tensors (.pt, ember.save) as plain safetensors"
    )
    convert.add_argument("source", help="a checkpoint ember.load reads (torch .pt/.pth too)")
    convert.add_argument("target", help="the safetensors file to write")
    args, rest = parser.parse_known_args(argv)
    if args.command == "convert" and not rest:
        return _convert(args.source, args.target)
    if args.command == "demo":
        from ember.examples import digits

        return digits.main(rest, prog="python -m ember demo")
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    try:
        print(format_info(ops=getattr(args, "ops", False)))
        if args.command == "tour":
            from ember.examples import tensor_tour

            print()
            tensor_tour.run(args.device)
    except PluginError as exc:
        print(f"ember: {exc}", file=sys.stderr)
        return 1
    except (NotImplementedError, RuntimeError) as exc:
        print(f"ember {args.command}: stopped: {exc}", file=sys.stderr)
        return 1
    return 0


def _convert(source: str, target: str) -> int:
    try:
        skipped = convert(source, target)
    except (OSError, RuntimeError, TypeError, pickle.UnpicklingError) as exc:
        print(f"ember convert: {exc}", file=sys.stderr)
        return 1
    if skipped:
        print(f"ember convert: left out {len(skipped)} non-tensor values: {', '.join(skipped)}")
    print(f"ember convert: wrote {target}")
    return 0


def format_info(ops: bool = False) -> str:
    """The `info` report: versions, plugins, device types, kernel coverage per type and
    kernel conflicts; with `ops`, which kernel every op runs on every device type."""
    MANAGER.ensure_loaded()
    sections = [_versions(), _plugins(), _device_types(), _kernels(), _conflicts()]
    if ops:
        sections.append(_ops())
    return "\n\n".join("\n".join(lines) for lines in sections)


def _versions() -> list[str]:
    libraries = ", ".join(f"{name} {_version_of(name)}" for name in ("numpy", "pluggy"))
    lines = [f"ember {ember.__version__} on Python {platform.python_version()} ({libraries})"]
    settings = [f"{name}={os.environ[name]}" for name in _SETTINGS if name in os.environ]
    lines.append(f"settings: {' '.join(settings) or 'none (all plugins enabled)'}")
    try:
        lines.append(f"default device: {ember.get_default_device()}")
    except RuntimeError as exc:
        lines.append(f"default device: none ({exc})")
    return lines


def _version_of(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def _plugins() -> list[str]:
    statuses = ember.plugins.status()
    title = f"Plugins (entry-point group {ENTRY_POINT_GROUP!r})"
    if not statuses:
        return [title, f"{_INDENT}none found: no installed distribution declares one"]
    rows = [
        [s.name, s.version or "-", s.distribution or "-", s.status, ", ".join(s.device_types)]
        for s in statuses
    ]
    notes = [[f"error: {s.error}"] if s.error else [] for s in statuses]
    header = ["NAME", "VERSION", "DISTRIBUTION", "STATUS", "DEVICE TYPES"]
    return [title, *_table(header, rows, notes)]


def _device_types() -> list[str]:
    infos = MANAGER.device_types
    title = "Device types"
    if not infos:
        return [title, f"{_INDENT}none: no loaded plugin provides a device"]
    rows = [
        [name, info.plugin, str(info.count), "yes" if info.reason is None else "no"]
        for name, info in infos.items()
    ]
    notes = [[] if info.reason is None else [f"why: {info.reason}"] for info in infos.values()]
    return [title, *_table(["TYPE", "PLUGIN", "COUNT", "AVAILABLE"], rows, notes)]


def _kernels() -> list[str]:
    title = "Kernels (ops: hand-written / rendered from the expression table / composite / missing)"
    rows, notes = [], []
    for name in MANAGER.device_types:
        coverage = REGISTRY.coverage(name)
        rows.append([name, *(str(len(ops)) for ops in coverage)])
        missing = coverage.missing
        notes.append([f"missing primitives: {', '.join(missing)}"] if missing else [])
    if not rows:
        return [title, f"{_INDENT}none"]
    header = ["TYPE", "NATIVE", "RENDERED", "COMPOSITE", "MISSING"]
    return [title, *_table(header, rows, notes)]


def _conflicts() -> list[str]:
    title = "Kernel conflicts (plugins tied at one priority: the latest registration wins)"
    found = REGISTRY.conflicts()
    if not found:
        return [title, f"{_INDENT}none"]
    return [title, *(f"{_INDENT}{describe_conflict(c)}" for c in found)]


def _ops() -> list[str]:
    title = "Ops (the kernel each device type runs, and what it overrides)"
    rows, notes = [], []
    for entry in library_table():
        supplier = entry.supplier
        rows.append(
            [
                entry.op,
                entry.device_type,
                entry.kind,
                "-" if supplier is None else f"{supplier.plugin}: {supplier.function}",
            ]
        )
        notes.append([f"overrides {other}" for other in entry.overrides])
    if not rows:
        return [title, f"{_INDENT}none"]
    return [title, *_table(["OP", "DEVICE", "KIND", "KERNEL"], rows, notes)]


def _table(header: list[str], rows: list[list[str]], notes: list[list[str]]) -> list[str]:
    """Left-aligned columns; each row's notes are wrapped beneath it, under column two."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    note_indent = _INDENT + " " * (widths[0] + 2)

    def line(cells: list[str]) -> str:
        return (
            _INDENT + "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True))
        ).rstrip()

    lines = [line(header)]
    for row, row_notes in zip(rows, notes, strict=True):
        lines.append(line(row))
        for note in row_notes:
            lines.extend(
                textwrap.wrap(
                    note,
                    _WIDTH,
                    initial_indent=note_indent,
                    subsequent_indent=note_indent + "  ",
                    break_on_hyphens=False,
                )
            )
    return lines


if __name__ == "__main__":
    sys.exit(main())
