"""MPI atomic mode through tagg (h5py's File.atomic = H5Fset/get_mpi_atomicity).

    mpiexec -n N python atomic.py <file> mpio|default on|off

mpio: driver='mpio' (redirected by the VOL connector); default: the default
driver (HDF5_DRIVER=tagg). With 'on' the file is switched to atomic mode right
after it is created; then every rank in turn writes its row of a dataset
independently and, after a barrier, every other rank reads that row back and
checks it (a read after another rank's write sees it); then a file closed in
atomic mode must not leave the next new file atomic. With 'off' the same
writes run in the default mode and each rank reads only its own row (the
control of the caller's staging check). Exit code 0 when every check passed."""
import sys

import h5py
import numpy as np
from mpi4py import MPI

path, driver, atomic = sys.argv[1], sys.argv[2], sys.argv[3] == "on"
comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
failures = []


def check(cond, what):
    if not cond:
        failures.append(f"rank {rank}: {what}")


kwargs = {"driver": "mpio", "comm": comm} if driver == "mpio" else {}
with h5py.File(path, "w", **kwargs) as f:
    check(f.atomic is False, f"a new file is atomic={f.atomic!r}")
    if atomic:
        f.atomic = True
        check(f.atomic is True, f"after f.atomic = True: {f.atomic!r}")
    d = f.create_dataset("rows", (size, 1000), dtype="i8")
    for writer in range(size):
        if rank == writer:
            d[writer] = np.arange(1000) * (writer + 1)
        comm.Barrier()
        if atomic or rank == writer:  # without atomic mode MPI promises nothing across ranks here
            got = d[writer]
            check(np.array_equal(got, np.arange(1000) * (writer + 1)), f"row {writer} written by rank {writer} differs")
    if atomic:
        f.atomic = False
        check(f.atomic is False, f"after f.atomic = False: {f.atomic!r}")

if atomic:
    # A file closed in atomic mode: the next file starts in the default mode
    # (tagg keeps the handle that holds the flag for the next open).
    with h5py.File(path + ".2", "w", **kwargs) as f:
        f.atomic = True
    with h5py.File(path + ".3", "w", **kwargs) as f:
        check(f.atomic is False, f"a file created after one closed in atomic mode is atomic={f.atomic!r}")

bad = sum(comm.allgather(failures), [])
if rank == 0:
    print("\n".join(bad) if bad else f"atomic ok: {driver} atomic={'on' if atomic else 'off'} on {size} ranks")
sys.exit(1 if bad else 0)
