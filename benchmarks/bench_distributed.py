"""The distributed suite: 2-rank jobs under `mpiexec`, their JSON read back, rows and verdicts.

Three jobs, one after the other, each `mpiexec -n N python -m mpi4py -m
benchmarks.distributed_worker PART` (distributed_worker.py), each bounded by a timeout:
the all-reduce bandwidth at 2 ranks, then the training steps at 1 and at 2 ranks. Skipped,
with the reason, when mpi4py or an `mpiexec` is missing. A job that fails is reported
with the end of its output; what it wrote before failing is kept.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

__all__ = [
    "CASE_NAMES",
    "TARGET_RATIO",
    "DistributedSuite",
    "bandwidth_verdict",
    "distributed_unavailable",
    "run_distributed_suite",
]

CASE_NAMES: Final = ("allreduce_bandwidth", "ddp_steps")
TARGET_RATIO: Final = 0.9  # Ember's bus bandwidth over raw mpi4py's, every size
_RANKS: Final = 2
_JOB_TIMEOUT_S: Final = 90
_REPOSITORY: Final = Path(__file__).resolve().parent.parent
_OUTPUT_TAIL: Final = 1500


@dataclass
class DistributedSuite:
    """The suite's outcome: the jobs' results by part, the failures, or why it was skipped."""

    skipped: str | None
    ranks: int = _RANKS
    mpi: str | None = None
    bandwidth: list[dict[str, Any]] = field(default_factory=list)
    profile: dict[str, Any] | None = None
    training: dict[int, dict[str, Any]] = field(default_factory=dict)  # by world size
    errors: list[str] = field(default_factory=list)
    duration_s: float = 0.0


def distributed_unavailable() -> str | None:
    """Why the suite cannot run here, or None."""
    if importlib.util.find_spec("mpi4py") is None:
        return "mpi4py is not installed (pip install -e '.[mpi]')"
    if _mpiexec() is None:
        return "no mpiexec beside the interpreter or on PATH (pip install mpich)"
    return None


def bandwidth_verdict(entry: dict[str, Any], *, best: bool = False) -> str | None:
    """PASS/MISS on Ember's bus bandwidth over raw mpi4py's; ERROR when a result was wrong."""
    if entry["ember"]["error"]:
        return "ERROR"
    if entry["raw"]["error"]:
        return "NO-REF"
    ratio = bandwidth_ratio(entry, best=best)
    return "PASS" if ratio >= TARGET_RATIO else "MISS"


def bandwidth_ratio(entry: dict[str, Any], *, best: bool = False) -> float:
    key = "busbw_gbs_from_min" if best else "busbw_gbs"
    return float(entry["ember"][key] / entry["raw"][key])


def run_distributed_suite(*, quick: bool, only: Collection[str] = ()) -> DistributedSuite:
    """Run the parts that `only` selects (all when empty)."""
    reason = distributed_unavailable()
    if reason is not None:
        print(f"distributed suite skipped: {reason}", file=sys.stderr)
        return DistributedSuite(reason)
    suite = DistributedSuite(None)
    clock = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ember-bench-distributed-") as directory:
        if not only or "allreduce_bandwidth" in only:
            document = _job(suite, "bandwidth", _RANKS, Path(directory), quick)
            suite.bandwidth = document.get("bandwidth", [])
            suite.profile = document.get("profile")
        if not only or "ddp_steps" in only:
            for ranks in (1, _RANKS):
                document = _job(suite, "training", ranks, Path(directory), quick)
                if "training" in document:
                    suite.training[ranks] = document["training"]
    suite.duration_s = time.perf_counter() - clock
    return suite


def _job(
    suite: DistributedSuite, part: str, ranks: int, directory: Path, quick: bool
) -> dict[str, Any]:
    """One worker job; its JSON (possibly partial), its failure recorded in the suite."""
    mpiexec = _mpiexec()
    assert mpiexec is not None
    output = directory / f"{part}-{ranks}.json"
    command = [
        mpiexec, "-n", str(ranks), sys.executable, "-m", "mpi4py",
        "-m", "benchmarks.distributed_worker", part, "--output", str(output),
    ]  # fmt: skip
    if quick:
        command.append("--quick")
    print(f"running the distributed suite: {part} at {ranks} rank(s)...", file=sys.stderr)
    failure = None
    try:
        done = subprocess.run(
            command,
            cwd=_REPOSITORY,
            env=_environment(),
            capture_output=True,
            text=True,
            timeout=_JOB_TIMEOUT_S + 10,
            check=False,
        )
        if done.returncode != 0:
            tail = (done.stdout + done.stderr)[-_OUTPUT_TAIL:]
            failure = f"{part} at {ranks} rank(s): exit {done.returncode}: {tail.strip()}"
    except subprocess.TimeoutExpired:
        failure = f"{part} at {ranks} rank(s): no result within {_JOB_TIMEOUT_S + 10} s"
    if failure is not None:
        print(f"  [distributed] {failure}", file=sys.stderr)
        suite.errors.append(failure)
    if not output.exists():
        return {}
    document: dict[str, Any] = json.loads(output.read_text())
    suite.mpi = suite.mpi or document.get("mpi")
    return document


def _environment() -> dict[str, str]:
    """The workers' environment: this checkout importable, one thread per rank, a bound."""
    environment = dict(os.environ)
    paths = [str(_REPOSITORY), *filter(None, environment.get("PYTHONPATH", "").split(os.pathsep))]
    environment["PYTHONPATH"] = os.pathsep.join(paths)
    for variable in (
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
        "EMBER_NUM_THREADS",
    ):
        environment[variable] = "1"
    environment["MPIEXEC_TIMEOUT"] = str(_JOB_TIMEOUT_S)  # MPICH ends a stalled job
    environment["MASTER_ADDR"] = "127.0.0.1"  # torch's gloo rendezvous, for its column
    environment["MASTER_PORT"] = str(_free_port())
    return environment


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _mpiexec() -> str | None:
    """The venv's own mpiexec (the MPICH wheel's) first, then PATH's."""
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.exists():
        return str(beside)
    return shutil.which("mpiexec")
