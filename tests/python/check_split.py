"""The measured check of tuning= on split communicators (4 ranks): ranks 0
and 1 (communicator A) read one pattern until the check has a verdict for it;
then ranks {0, 2} and {1, 3} read the same pattern, so that in each pair one
process holds the verdict and the other does not. Every rank must still plan
the same call: there the check's table is ignored by both (the rows'
fingerprints differ) and the model's choice stands. Data checked on every
rank; argv: DIR."""
import os
import sys

import h5py
import numpy as np
from mpi4py import MPI

world = MPI.COMM_WORLD
assert world.size == 4, "run on 4 ranks"
n = 32768  # 256 KiB of doubles a rank
where = sys.argv[1]


def roundtrip(comm, name, salt):
    path = os.path.join(where, name)
    mine = slice(comm.rank * n, (comm.rank + 1) * n)
    data = np.arange(n, dtype="f8") + comm.rank * n + salt
    with h5py.File(path, "w", driver="mpio", comm=comm) as f:
        ds = f.create_dataset("x", (comm.size * n,), "f8")
        with ds.collective:
            ds[mine] = data
    with h5py.File(path, "r", driver="mpio", comm=comm) as f:
        ds = f["x"]
        got = np.empty(n, dtype="f8")
        with ds.collective:  # read_direct takes the transfer list (h5py's fast slice read does not)
            ds.read_direct(got, source_sel=mine)
    assert np.array_equal(got, data), f"{name}: wrong bytes on rank {world.rank}"


a = world.Split(world.rank // 2, world.rank)
if world.rank < 2:
    for i in range(8):  # 3 rounds of the model's choice and the cost model's (an overturn takes every round), then 2 more
        roundtrip(a, f"a-{i}.h5", i)
world.Barrier()
pair = world.Split(world.rank % 2, world.rank)
for i in range(2):
    roundtrip(pair, f"p{world.rank % 2}-{i}.h5", 10 + i)
world.Barrier()
if world.rank == 0:
    print("check_split ok")
