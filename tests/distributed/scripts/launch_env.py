"""Prints what a launched rank sees: torchrun's variables, argv and __name__ (no ember)."""

import os
import sys

names = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")
values = " ".join(f"{name}={os.environ.get(name)}" for name in names)
print(f"{values} argv={sys.argv[1:]} main={__name__ == '__main__'}", flush=True)
if "--exit" in sys.argv and os.environ["RANK"] == "1":
    sys.exit(int(sys.argv[sys.argv.index("--exit") + 1]))
if "--stall" in sys.argv:
    from mpi4py import MPI

    if os.environ["RANK"] == "1":
        import time

        time.sleep(600)  # never reaches the barrier rank 0 waits in
    MPI.COMM_WORLD.Barrier()
