"""One rank of a job started by `python -m ember.distributed.run`: sets torchrun's rank
variables from MPI, then runs the user's script or module as `python -m mpi4py` does.

mpiexec runs this file by its path (`python .../_worker.py [-m module | script] args...`),
not as `-m ember.distributed._worker`: that would import the whole `ember` package (seconds)
before the user's code, and before the user's code could set anything ember reads when it is
imported. So this module imports only the standard library and mpi4py, never `ember`.
"""

from __future__ import annotations

import os
import sys

from mpi4py import MPI
from mpi4py.run import run_command_line, set_abort_status


def rank_variables(world: MPI.Comm) -> dict[str, str]:
    """torchrun's RANK, WORLD_SIZE, LOCAL_RANK and LOCAL_WORLD_SIZE for this process; local
    means the ranks that share this node's memory (MPI_COMM_TYPE_SHARED)."""
    local = world.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        return {
            "RANK": str(world.Get_rank()),
            "WORLD_SIZE": str(world.Get_size()),
            "LOCAL_RANK": str(local.Get_rank()),
            "LOCAL_WORLD_SIZE": str(local.Get_size()),
        }
    finally:
        local.Free()


def main(argv: list[str]) -> None:
    """Run `argv` (`[script, args...]` or `["-m", module, args...]`) as this rank's program.

    An exception that escapes it, in any rank, prints that rank's traceback and then ends the
    whole job through MPI_Abort (mpi4py's `python -m mpi4py` rule: without it the other ranks
    would wait for the failed one forever); `sys.exit(n)` with n != 0 aborts with status n.
    """
    os.environ.update(rank_variables(MPI.COMM_WORLD))
    try:
        run_command_line(argv)
    except SystemExit as exc:
        set_abort_status(exc)
        raise
    except KeyboardInterrupt as exc:
        set_abort_status(exc)
        raise
    except BaseException:
        set_abort_status(1)
        raise


def restore_sys_path() -> None:
    """Run by path, Python put this file's folder first on sys.path, where the modules beside
    it would shadow the user's (an `import run` would find ember's launcher): put back what
    `python -m module` has there, the working directory. A script's own folder replaces it
    in `run_command_line`, as `python script.py` has."""
    here = os.path.dirname(os.path.realpath(__file__))
    # Under PYTHONSAFEPATH / -P Python added no such entry, and sys.path[0] is the user's.
    if sys.path and sys.path[0] == here:
        sys.path[0] = os.getcwd()


if __name__ == "__main__":
    restore_sys_path()
    main(sys.argv[1:])
