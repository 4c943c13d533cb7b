"""`python -m ember.distributed.run`: torchrun's command line over the environment's mpiexec.

    python -m ember.distributed.run --nproc-per-node 2 train.py --epochs 3

starts `mpiexec -n 2`; each rank sets torchrun's RANK, WORLD_SIZE, LOCAL_RANK and
LOCAL_WORLD_SIZE from MPI and runs the script (or `-m module`) as its `__main__`. See
`--help` for the options, exit statuses and multi-machine runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ember.distributed._launch import (
    MPIEXEC_ENV,
    NO_MPIEXEC_EXIT_CODE,
    TIMEOUT_EXIT_CODE,
    LaunchError,
    find_mpiexec,
    mpi_flavour,
    mpiexec_command,
    run_job,
    worker_program,
)

__all__ = ["build_parser", "main"]

PROG = "python -m ember.distributed.run"

EPILOG = f"""\
examples:
  {PROG} --nproc-per-node 4 train.py --epochs 3
  {PROG} --nproc-per-node 2 -m mypackage.train --lr 0.1
  {PROG} --nproc-per-node 8 --hostfile hosts.txt --timeout 3600 train.py

Each rank runs the program as `__main__`, with sys.argv = [program, args...] and the
environment variables RANK, WORLD_SIZE, LOCAL_RANK and LOCAL_WORLD_SIZE set from MPI
(local: the ranks on the same machine); MPI connects the ranks, so no MASTER_ADDR or
MASTER_PORT is needed. MPI is already initialised when the program starts.

An exception that escapes the program in any rank prints that rank's traceback and
aborts the whole job (MPI_Abort, as `python -m mpi4py` does), so no rank is left waiting.

mpiexec: --mpiexec PATH, else ${MPIEXEC_ENV}, else the mpiexec beside this Python
(`pip install ember[mpi]` installs mpi4py and MPICH's), else the first on PATH.

--hostfile FILE runs --nproc-per-node ranks on each host FILE lists (WORLD_SIZE is
their product). MPICH's Hydra (also Intel MPI's and MVAPICH's) gets `-f FILE -ppn N`,
with one `host[:slots]` per line; Open MPI gets `--hostfile FILE --map-by ppr:N:node`,
with lines `host slots=N`. The flavour is read from `mpiexec --version`. Every host needs
this Python at the same path, and the program's files.

exit status: the job's (non-zero when any rank failed); {TIMEOUT_EXIT_CODE} when --timeout
killed it; {NO_MPIEXEC_EXIT_CODE} when no mpiexec was found.
"""


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _positive_seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The launcher's argument parser (torchrun's option names where they overlap)."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Run a training script on several processes, data-parallel over MPI.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        # An abbreviation could swallow a misspelled option meant for the script.
        allow_abbrev=False,
    )
    parser.add_argument(
        # torchrun accepts both spellings; scripts ported from it use either.
        "--nproc-per-node",
        "--nproc_per_node",
        dest="nproc_per_node",
        type=_positive_int,
        default=1,
        metavar="N",
        help="ranks per machine (default: 1)",
    )
    parser.add_argument(
        "--hostfile", metavar="FILE", help="run on the hosts listed in FILE (see below)"
    )
    parser.add_argument(
        "--timeout",
        type=_positive_seconds,
        metavar="S",
        help=f"kill the whole job after S seconds and exit {TIMEOUT_EXIT_CODE} "
        "(also sets MPIEXEC_TIMEOUT, a few seconds later, as MPICH's own backstop)",
    )
    parser.add_argument("--mpiexec", metavar="PATH", help="the mpiexec to use (see below)")
    parser.add_argument(
        "-m",
        "--module",
        action="store_true",
        help="run PROGRAM as a module, as `python -m PROGRAM` would",
    )
    parser.add_argument("program", metavar="PROGRAM", help="the script (or module, with -m)")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the program's arguments")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Launch the job `argv` describes and return its exit status."""
    options = build_parser().parse_args(argv)
    try:
        mpiexec = find_mpiexec(options.mpiexec)
        flavour = mpi_flavour(mpiexec) if options.hostfile is not None else None
        command = mpiexec_command(
            mpiexec,
            options.nproc_per_node,
            worker_program(options.module, options.program, options.args),
            hostfile=options.hostfile,
            flavour=flavour,
        )
    except LaunchError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    return run_job(command, options.timeout)


if __name__ == "__main__":
    sys.exit(main())
