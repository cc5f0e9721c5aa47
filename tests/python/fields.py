"""Writes a compound dataset field by field with h5py (dset['x', a:b] = ...), as
h5bench's interleaved pattern and many analysis codes do: HDF5 reads the
records back and writes them again for every field. Each rank (serial: one;
parallel: driver='mpio' under mpiexec, independent transfers) writes its own
slice, reads it back in the same open after every field (served partly from
what tagg keeps, see the README's Write-behind), then the whole dataset is
read again after close, by every rank. Exit code 0 when every value matched."""
import sys

import h5py
import numpy as np

path, mode = sys.argv[1], sys.argv[2]  # mode: serial | mpio
if mode == "mpio":
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank, size = comm.rank, comm.size
    kw = {"driver": "mpio", "comm": comm}
else:
    comm, rank, size, kw = None, 0, 1, {}

N = 40000  # records per rank: 28 bytes each, 1.12 MB, so HDF5 converts a field in two pieces (1 MiB buffer)
rec = np.dtype([("x", "<f4"), ("y", "<f4"), ("z", "<f8"), ("id", "<i4"), ("flag", "u1"), ("pad", "S7")])
fields = [n for n in rec.names]
lo, hi = rank * N + rank * 7, (rank + 1) * N + rank * 7  # odd gaps between the ranks' slices
total = size * N + size * 7


def value(name, idx):
    if name == "pad":
        return np.array([b"r%06d" % (i % 1000000) for i in idx], dtype="S7")
    return ((idx * (fields.index(name) + 3) + 11) % 251).astype(rec[name])


failures = []
idx = np.arange(lo, hi)
with h5py.File(path, "w", **kw) as f:
    d = f.create_dataset("particles", (total,), dtype=rec)
    expect = np.zeros(hi - lo, dtype=rec)
    for name in fields:
        d[name, lo:hi] = value(name, idx)
        expect[name] = value(name, idx)
        got = d[lo:hi]
        if not np.array_equal(got, expect):
            bad = np.nonzero(got != expect)[0]
            failures.append(f"rank {rank}: after field {name}, {len(bad)} records differ (first {bad[0] + lo})")
with h5py.File(path, "r", **kw) as f:
    whole = f["particles"][:]
for r in range(size):
    ridx = np.arange(r * N + r * 7, (r + 1) * N + r * 7)
    for name in fields:
        if not np.array_equal(whole[name][ridx], value(name, ridx)):
            failures.append(f"rank {rank}: after reopening, field {name} of rank {r}'s records differs")
for gap in range(size):  # the 7 records after each rank's slice: never written, fill value 0
    g = whole[(gap + 1) * N + gap * 7:(gap + 1) * N + gap * 7 + 7]
    if len(g) != 7 or g["id"].any() or g["z"].any():
        failures.append(f"rank {rank}: the gap after rank {gap}'s records is not zero")
if comm is not None:
    failures = sum(comm.allgather(failures), [])
if failures:
    if rank == 0:
        print("\n".join(failures[:20]))
    sys.exit(1)
if rank == 0:
    print(f"fields ok on {size} ranks: {len(fields)} fields x {N} records per rank")
