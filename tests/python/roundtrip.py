"""Writes and reads numpy arrays of several dtypes and shapes with h5py, serial
or parallel (under mpiexec, driver='mpio'), checks them, and checks the driver
the application sees (tagg for HDF5_DRIVER=tagg; MPI-IO for driver='mpio', also
when tagg's VOL connector redirected the file). Exit code 0 when every check
passed; whether the file went through tagg is for the caller to check in
tagg's summary."""
import ctypes
import ctypes.util
import sys

import h5py
import numpy as np

path, mode = sys.argv[1], sys.argv[2]  # mode: serial | mpio

if mode == "mpio":
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank, size = comm.rank, comm.size
else:
    comm, rank, size = None, 0, 1

failures = []


def check(cond, what):
    if not cond:
        failures.append(f"rank {rank}: {what}")


def tagg_driver_id():
    """The HDF5 id of the tagg driver, from the same libhdf5 h5py uses."""
    lib = ctypes.CDLL("libhdf5.so", mode=ctypes.RTLD_GLOBAL)
    hid = ctypes.c_int64
    lib.H5open()
    lib.H5Pcreate.restype = hid
    lib.H5Pcreate.argtypes = [hid]
    lib.H5Pset_driver_by_name.argtypes = [hid, ctypes.c_char_p, ctypes.c_char_p]
    lib.H5Pget_driver.restype = hid
    lib.H5Pget_driver.argtypes = [hid]
    lib.H5Pclose.argtypes = [hid]
    fapl = lib.H5Pcreate(hid.in_dll(lib, "H5P_CLS_FILE_ACCESS_ID_g").value)
    if lib.H5Pset_driver_by_name(fapl, b"tagg", b"") < 0:
        raise RuntimeError("the tagg driver cannot be loaded (HDF5_PLUGIN_PATH?)")
    driver = lib.H5Pget_driver(fapl)
    lib.H5Pclose(fapl)
    return driver


compound = np.dtype([("id", "<i8"), ("pos", "<f4", (3,)), ("tag", "S5")])
cases = {
    "i1_1d": (np.int8, (997,)),
    "u2_2d": (np.uint16, (size * 13, 7)),
    "i4_3d": (np.int32, (size * 3, 5, 4)),
    "f4_2d": (np.float32, (size * 9 + 1, 11)),
    "f8_1d": (np.float64, (size * 1001,)),
    "c16_2d": (np.complex128, (size * 4, 6)),
    "compound_1d": (compound, (size * 17,)),
}


def make(name, dtype, shape):
    n = int(np.prod(shape))
    seed = sum(map(ord, name))
    if dtype is compound:
        a = np.zeros(n, dtype)
        a["id"] = np.arange(n) + seed
        a["pos"] = np.arange(3 * n, dtype=np.float32).reshape(n, 3) / 7
        a["tag"] = [f"t{i % 997}".encode() for i in range(n)]
        return a.reshape(shape)
    a = (np.arange(n) * 7 + seed) % 251
    if np.issubdtype(np.dtype(dtype), np.complexfloating):
        return (a + 1j * a[::-1]).astype(dtype).reshape(shape)
    return a.astype(dtype).reshape(shape)


kwargs = {"driver": "mpio", "comm": comm} if mode == "mpio" else {}
# The driver the application sees: tagg for HDF5_DRIVER=tagg; for a file it
# opened with MPI-IO, MPI-IO, also when the tagg VOL connector redirected it to
# tagg underneath (that it went through tagg shows in tagg's summary, which the
# callers check).
expected_driver = (lambda: h5py.h5fd.MPIO) if mode == "mpio" else tagg_driver_id
with h5py.File(path, "w", **kwargs) as f:
    check(f.id.get_access_plist().get_driver() == expected_driver(), "file driver is not the expected one")
    check(f.driver == ("mpio" if mode == "mpio" else "unknown"), f"File.driver is {f.driver!r}")
    g = f.create_group("arrays")
    g.attrs["ranks"] = size
    for i, (name, (dtype, shape)) in enumerate(cases.items()):
        full = make(name, dtype, shape)
        d = g.create_dataset(name, shape, dtype=dtype)
        # rows split unevenly over ranks: rank r gets a slice of the first axis
        edges = [shape[0] * r // size for r in range(size + 1)]
        lo, hi = edges[rank], edges[rank + 1]
        if mode == "mpio" and i % 2 == 0:
            with d.collective:
                d[lo:hi] = full[lo:hi]
        elif lo < hi:
            d[lo:hi] = full[lo:hi]
    chunked = g.create_dataset("chunked_f8", (size * 10, 12), dtype="f8", chunks=(3, 5))
    edges = [size * 10 * r // size for r in range(size + 1)]
    chunked[edges[rank]:edges[rank + 1]] = make("chunked_f8", np.float64, (size * 10, 12))[edges[rank]:edges[rank + 1]]

with h5py.File(path, "r", **kwargs) as f:
    check(f.id.get_access_plist().get_driver() == expected_driver(), "reopened file driver is not the expected one")
    check(f["arrays"].attrs["ranks"] == size, "attribute differs")
    for name, (dtype, shape) in cases.items():
        got = f["arrays"][name][...]
        check(got.dtype == np.dtype(dtype), f"{name}: dtype {got.dtype}")
        check(np.array_equal(got, make(name, dtype, shape)), f"{name}: data differ")
    got = f["arrays/chunked_f8"][...]
    check(np.array_equal(got, make("chunked_f8", np.float64, (size * 10, 12))), "chunked_f8: data differ")

bad = failures
if comm is not None:
    bad = sum(comm.allgather(failures), [])
if rank == 0:
    print("\n".join(bad) if bad else f"roundtrip ok: {len(cases) + 1} datasets on {size} ranks")
sys.exit(1 if bad else 0)
