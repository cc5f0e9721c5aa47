"""Writes a 2 MiB dataset, then reads it twice through a read-only open and
twice through a SWMR reader's open (one process, HDF5_DRIVER=tagg)."""
import sys

import h5py
import numpy as np

path = sys.argv[1]
data = np.arange(1 << 18, dtype=np.float64)
with h5py.File(path, "w", libver="latest") as f:
    f.create_dataset("x", data=data)
for swmr in (False, True):
    with h5py.File(path, "r", swmr=swmr) as f:
        for _ in range(2):
            assert np.array_equal(f["x"][:], data), f"swmr={swmr}: wrong bytes"
print("reread ok")
