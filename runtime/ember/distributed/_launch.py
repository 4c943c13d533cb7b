"""The launcher's machinery: find mpiexec, tell which MPI it belongs to, build its command
line, and run the job under a deadline. Imports no mpi4py: only the ranks load MPI."""

from __future__ import annotations

import math
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from types import FrameType
from typing import Final, Literal

__all__ = [
    "KILL_GRACE_SECONDS",
    "MPIEXEC_ENV",
    "MPIEXEC_TIMEOUT_MARGIN_SECONDS",
    "NO_MPIEXEC_EXIT_CODE",
    "TIMEOUT_EXIT_CODE",
    "WORKER",
    "LaunchError",
    "find_mpiexec",
    "hostfile_hosts",
    "mpi_flavour",
    "mpiexec_command",
    "run_job",
    "worker_program",
]

Flavour = Literal["hydra", "openmpi"]

#: the environment variable naming the mpiexec to use (after --mpiexec)
MPIEXEC_ENV: Final = "EMBER_MPIEXEC"
#: `timeout(1)`'s status for a job it had to kill
TIMEOUT_EXIT_CODE: Final = 124
#: the shell's status for a command it cannot find
NO_MPIEXEC_EXIT_CODE: Final = 127
#: how long mpiexec gets to tear its job down after SIGTERM before it is killed outright
KILL_GRACE_SECONDS: Final = 5.0
#: MPICH's (and Open MPI's) own MPIEXEC_TIMEOUT fires this much after ours, as a backstop
#: that still ends the ranks on every node if the launcher itself is killed
MPIEXEC_TIMEOUT_MARGIN_SECONDS: Final = 5

WORKER: Final = Path(__file__).with_name("_worker.py")
_FORWARDED_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class LaunchError(Exception):
    """A job that cannot start; the message says why and what to do about it."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def _executable(candidate: str) -> str | None:
    """`candidate` as a runnable path (a bare name is looked up on PATH), or None."""
    found = shutil.which(candidate)
    return os.path.abspath(found) if found is not None else None


def find_mpiexec(explicit: str | None = None) -> str:
    """The mpiexec to run: `explicit` (--mpiexec), else $EMBER_MPIEXEC, else the one installed
    beside this Python (the `mpich` wheel of `ember[mpi]` puts it there), else PATH's."""
    for source, candidate in (("--mpiexec", explicit), (MPIEXEC_ENV, os.environ.get(MPIEXEC_ENV))):
        if candidate:
            found = _executable(candidate)
            if found is None:
                raise LaunchError(
                    f"{source} names {candidate!r}, which is not an executable file",
                    NO_MPIEXEC_EXIT_CODE,
                )
            return found
    # sys.executable's folder, not its resolved target's: a venv's python links elsewhere.
    beside_python = Path(sys.executable).parent / "mpiexec"
    found = _executable(str(beside_python)) or _executable("mpiexec")
    if found is None:
        raise LaunchError(
            f"no mpiexec found (looked at --mpiexec, ${MPIEXEC_ENV}, {beside_python} and "
            "PATH); install an MPI with `pip install ember[mpi]` (mpi4py and MPICH), or name "
            f"your cluster's with --mpiexec PATH or {MPIEXEC_ENV}=PATH",
            NO_MPIEXEC_EXIT_CODE,
        )
    return found


def mpi_flavour(mpiexec: str) -> Flavour:
    """Which launcher `mpiexec` is, from its `--version`: MPICH's Hydra (also Intel MPI's and
    MVAPICH's) or Open MPI's; their options for host files differ."""
    try:
        result = subprocess.run(
            [mpiexec, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LaunchError(f"`{mpiexec} --version` failed: {exc}") from exc
    text = result.stdout + result.stderr
    if "Open MPI" in text or "OpenRTE" in text:
        return "openmpi"
    if any(marker in text for marker in ("HYDRA", "MPICH", "Intel(R) MPI", "MVAPICH")):
        return "hydra"
    raise LaunchError(
        f"cannot tell from `{mpiexec} --version` which MPI it belongs to; --hostfile knows "
        "MPICH/Hydra (mpiexec -f FILE) and Open MPI (mpiexec --hostfile FILE)"
    )


def hostfile_hosts(path: str) -> list[str]:
    """The distinct hosts a host file lists, in order: the first word of each line, less a
    Hydra `:slots` suffix (Open MPI writes `host slots=N`); `#` starts a comment."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise LaunchError(f"cannot read the host file {path!r}: {exc}") from exc
    hosts: dict[str, None] = {}
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if words:
            hosts[words[0].split(":", 1)[0]] = None
    if not hosts:
        raise LaunchError(f"the host file {path!r} lists no hosts")
    return list(hosts)


def worker_program(module: bool, target: str, args: Sequence[str]) -> list[str]:
    """The command each rank runs: this Python on the worker, then the user's program."""
    program = ["-m", target] if module else [target]
    return [sys.executable, str(WORKER), *program, *args]


def mpiexec_command(
    mpiexec: str,
    nproc_per_node: int,
    program: Sequence[str],
    hostfile: str | None = None,
    flavour: Flavour | None = None,
) -> list[str]:
    """mpiexec's command line: `nproc_per_node` ranks here, or on each host of `hostfile`."""
    if hostfile is None:
        return [mpiexec, "-n", str(nproc_per_node), *program]
    world_size = str(nproc_per_node * len(hostfile_hosts(hostfile)))
    if flavour == "hydra":
        placement = ["-f", hostfile, "-ppn", str(nproc_per_node)]
    elif flavour == "openmpi":
        placement = ["--hostfile", hostfile, "--map-by", f"ppr:{nproc_per_node}:node"]
    else:
        raise LaunchError(f"a host file needs the MPI flavour (hydra or openmpi), got {flavour}")
    return [mpiexec, *placement, "-n", world_size, *program]


@contextmanager
def _forwarding_signals(process: subprocess.Popen[bytes]) -> Iterator[None]:
    """Pass Ctrl-C, SIGTERM and SIGHUP on to mpiexec, which tears its job down; it runs in
    its own session, so the terminal's signals no longer reach it directly."""

    def forward(signum: int, frame: FrameType | None) -> None:
        if process.poll() is None:
            process.send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in _FORWARDED_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End the job: SIGTERM to mpiexec's process group (mpiexec then kills its ranks, which
    Hydra starts in sessions of their own), then SIGKILL to the group after a grace."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=KILL_GRACE_SECONDS)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _exit_code(returncode: int) -> int:
    """A shell's status for a process: its own, or 128 + the signal that killed it."""
    return returncode if returncode >= 0 else 128 - returncode


def run_job(command: Sequence[str], timeout: float | None = None) -> int:
    """Run mpiexec's `command` and return the job's exit status; after `timeout` seconds,
    kill the job, say so on stderr and return 124."""
    env = dict(os.environ)
    if timeout is not None:
        env["MPIEXEC_TIMEOUT"] = str(math.ceil(timeout) + MPIEXEC_TIMEOUT_MARGIN_SECONDS)
    started = time.monotonic()
    # A session of its own, so that a timeout can signal mpiexec's whole process group.
    process = subprocess.Popen(list(command), env=env, start_new_session=True)
    with _forwarding_signals(process):
        try:
            return _exit_code(process.wait(timeout=timeout))
        except subprocess.TimeoutExpired:
            _stop(process)
    print(
        f"ember.distributed.run: the job ran past --timeout {timeout:g} s and was killed "
        f"after {time.monotonic() - started:.1f} s (exit status {TIMEOUT_EXIT_CODE})",
        file=sys.stderr,
        flush=True,
    )
    return TIMEOUT_EXIT_CODE
