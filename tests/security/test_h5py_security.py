"""Security cases of the subfile layout through h5py (HDF5_DRIVER=tagg):
hostile indexes, links, damage and 'state open' files must raise a clear
OSError and leave the outside file byte-identical; h5py's own view of a
subfiled file (is_hdf5) with and without tagg. Run by ctest (security.h5py)."""
import os
import socket
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import craft  # noqa: E402

HEAD = b"tagg subfiled HDF5 file, use tagg-fuse IN OUT for one HDF5 file\n"


def _need(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run these tests through ctest (label security)")
    return value


def run_py(code, cwd, tagg=True, config="", nranks=None, timeout=60):
    """Runs code in a fresh interpreter (HDF5 reads its variables at start):
    serial through HDF5_DRIVER=tagg, parallel (driver='mpio') through the tagg
    VOL connector, configured by TAGG_CONFIG."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HDF5_", "TAGG_"))}
    if tagg and nranks:
        env.update(HDF5_PLUGIN_PATH=_need("TAGG_PLUGIN_DIR"), HDF5_VOL_CONNECTOR="tagg under_vol=0;under_info={}",
                   TAGG_CONFIG=config)
    elif tagg:
        env.update(HDF5_PLUGIN_PATH=_need("TAGG_PLUGIN_DIR"), HDF5_DRIVER="tagg", HDF5_DRIVER_CONFIG=config)
    cmd = [sys.executable, "-c", code]
    if nranks:
        cmd = [_need("MPIEXEC"), _need("MPIEXEC_NUMPROC_FLAG"), str(nranks), *cmd]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


OPEN = """
import h5py, sys
try:
    with h5py.File(sys.argv[1] if len(sys.argv) > 1 else {path!r}, {mode!r}) as f:
        data = f["d"][...] if "d" in f else None
        print("OPENED", None if data is None else int(data.sum()))
except OSError as e:
    print("REFUSED", e)
"""

WRITE = """
import h5py, numpy
with h5py.File({path!r}, "w") as f:
    f["d"] = numpy.arange(4096, dtype="i4")
print("WROTE")
"""


@pytest.fixture
def outside(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    p = home / "thesis.txt"
    p.write_bytes(b"my thesis, 8 years of work\n")
    return p


def seal(path, body):
    path.write_bytes(craft.seal(body))


def test_index_naming_outside_file(tmp_path, outside):
    keep = outside.read_bytes()
    (tmp_path / "evil.h5.tagg.meta").write_bytes(b"")
    body = HEAD + (b"format 2\nlayout subfiles\ndestination nvr\nstate open\nstripe_size 4096\nsubfile_count 1\n"
                   b"logical_size 27\nchecksum crc64-xz\nmetadata 0 0000000000000000 evil.h5.tagg.meta\n"
                   b"subfile 0 27 %016x %s\nnode 0 %s\n" % (craft.crc64(keep), str(outside).encode(),
                                                         socket.gethostname().encode()))
    seal(tmp_path / "evil.h5", body)
    for mode in ("r", "r+"):
        r = run_py(OPEN.format(path="evil.h5", mode=mode), tmp_path)
        assert "REFUSED" in r.stdout and "is not a path tagg derives" in r.stdout, (mode, r.stdout, r.stderr)
    r = run_py(OPEN.format(path="evil.h5", mode="a"), tmp_path)  # open r+, else create exclusive: both refused
    assert "REFUSED" in r.stdout, r.stdout
    assert outside.read_bytes() == keep


def test_sibling_name_format1(tmp_path):
    sib = tmp_path / "notes.txt"
    sib.write_bytes(b"sibling\n")
    body = HEAD + (b"format 1\nlayout subfiles\nstate closed\nstripe_size 4096\nsubfile_count 1\nlogical_size 8\n"
                   b"checksum crc64-xz\nsubfile 0 8 %016x notes.txt\n" % craft.crc64(b"sibling\n"))
    seal(tmp_path / "s.h5", body)
    r = run_py(OPEN.format(path="s.h5", mode="r+"), tmp_path)
    assert "REFUSED" in r.stdout and "tagg only uses 's.h5.tagg.0of1'" in r.stdout, r.stdout
    assert sib.read_bytes() == b"sibling\n"


def test_links_fifo_damage_state_open(tmp_path, outside):
    keep = outside.read_bytes()
    cfg = "layout=subfiles;stripe_size=4K;subfiles=2"
    assert "WROTE" in run_py(WRITE.format(path="x.h5"), tmp_path, config=cfg).stdout
    r = run_py(OPEN.format(path="x.h5", mode="r"), tmp_path)
    assert r.stdout.startswith("OPENED %d" % (4095 * 4096 // 2)), r.stdout
    sub = tmp_path / "x.h5.tagg.1of2"
    saved = sub.read_bytes()
    # a link to the outside file
    sub.unlink()
    sub.symlink_to(outside)
    r = run_py(OPEN.format(path="x.h5", mode="r+"), tmp_path)
    assert "REFUSED" in r.stdout and "is a symbolic link: refused" in r.stdout, r.stdout
    assert outside.read_bytes() == keep
    # a FIFO: refused, no hang (the timeout would raise)
    sub.unlink()
    os.mkfifo(sub)
    r = run_py(OPEN.format(path="x.h5", mode="r"), tmp_path)
    assert "REFUSED" in r.stdout and "a FIFO" in r.stdout, r.stdout
    # a flipped byte
    sub.unlink()
    damaged = bytearray(saved)
    damaged[100] ^= 0x40
    sub.write_bytes(bytes(damaged))
    r = run_py(OPEN.format(path="x.h5", mode="r"), tmp_path)
    assert "CHECKSUM MISMATCH subfile 1" in r.stdout + r.stderr, (r.stdout, r.stderr)
    assert "OPENED %d" % (4095 * 4096 // 2) not in r.stdout
    # state open
    sub.write_bytes(saved)
    craft_main = [sys.executable, os.path.join(HERE, "craft.py"), "reopen", str(tmp_path / "x.h5")]
    subprocess.run(craft_main, check=True)
    r = run_py(OPEN.format(path="x.h5", mode="r"), tmp_path)
    assert "REFUSED" in r.stdout and "state open" in r.stdout and "salvage=1" in r.stdout, r.stdout
    r = run_py(OPEN.format(path="x.h5", mode="r"), tmp_path, config="salvage=1")
    assert r.stdout.startswith("OPENED %d" % (4095 * 4096 // 2)), r.stdout


POKE = """
import h5py, sys
try:
    with h5py.File({path!r}, "r+") as f:
        f["d"][0] = 7
    print("CLOSED")
except (OSError, RuntimeError) as e:
    print("REFUSED", e)
"""


def test_rewrite_over_damage(tmp_path):
    """A partial rewrite in an 'r+' open must not bless a damaged stripe: the
    close fails with the stripe named, and later reads still fail."""
    cfg = "layout=subfiles;stripe_size=4K;subfiles=2"
    assert "WROTE" in run_py(WRITE.format(path="x.h5"), tmp_path, config=cfg).stdout
    # the intact file takes the same rewrite and reads back verified
    r = run_py(POKE.format(path="x.h5"), tmp_path)
    assert "CLOSED" in r.stdout, (r.stdout, r.stderr)
    r = run_py(OPEN.format(path="x.h5", mode="r"), tmp_path)
    assert r.stdout.startswith("OPENED %d" % (4095 * 4096 // 2 + 7)), r.stdout
    # d[1] damaged in the stripe that d[0] is rewritten in
    where = "import h5py\nwith h5py.File('x.h5','r') as f: print(f['d'].id.get_offset())"
    addr = int(run_py(where, tmp_path).stdout.split()[-1]) + 4
    j = addr // 4096
    sub = tmp_path / ("x.h5.tagg.%dof2" % (j % 2))
    data = bytearray(sub.read_bytes())
    data[(j // 2) * 4096 + addr % 4096] ^= 0x21
    sub.write_bytes(bytes(data))
    r = run_py(POKE.format(path="x.h5"), tmp_path)
    assert "REFUSED" in r.stdout and "CHECKSUM MISMATCH found at close" in r.stdout, (r.stdout, r.stderr)
    r = run_py(OPEN.format(path="x.h5", mode="r"), tmp_path)
    assert "CHECKSUM MISMATCH subfile %d" % (j % 2) in r.stdout + r.stderr, (r.stdout, r.stderr)


def test_planted_link_before_create(tmp_path, outside):
    keep = outside.read_bytes()
    (tmp_path / "new.h5.tagg.0of1").symlink_to(outside)
    r = run_py(WRITE.format(path="new.h5"), tmp_path, config="layout=subfiles;subfiles=1")
    assert "WROTE" not in r.stdout and "is a symbolic link: refused" in r.stdout + r.stderr, (r.stdout, r.stderr)
    assert outside.read_bytes() == keep


def test_is_hdf5(tmp_path):
    """A subfiled file is HDF5 to h5py through tagg; without tagg the signature
    at byte 512 makes is_hdf5 true (what netCDF needs), but opening fails clearly."""
    assert "WROTE" in run_py(WRITE.format(path="y.h5"), tmp_path, config="layout=subfiles;subfiles=2").stdout
    code = "import h5py; print(h5py.is_hdf5('y.h5'))"
    assert run_py(code, tmp_path).stdout.strip() == "True"
    r = run_py(OPEN.format(path="y.h5", mode="r"), tmp_path, tagg=False)
    assert "REFUSED" in r.stdout and "bad superblock version number" in r.stdout, r.stdout


def test_parallel_h5py_damage(tmp_path):
    """2 ranks, mpio + tagg: a damaged stripe fails the collective read on both ranks."""
    cfg = "layout=subfiles;stripe_size=4K;subfiles=2"
    code = """
import h5py, numpy, sys
from mpi4py import MPI
c = MPI.COMM_WORLD
with h5py.File('p.h5', 'w', driver='mpio', comm=c) as f:
    d = f.create_dataset('d', (8192,), 'i4')
    with d.collective:
        d[c.rank * 4096:(c.rank + 1) * 4096] = numpy.arange(c.rank * 4096, (c.rank + 1) * 4096, dtype='i4')
print('rank', c.rank, 'wrote', flush=True)
"""
    assert run_py(code, tmp_path, config=cfg, nranks=2).stdout.count("wrote") == 2
    sub = tmp_path / "p.h5.tagg.0of2"
    b = bytearray(sub.read_bytes())
    b[4096 + 10] ^= 1
    sub.write_bytes(bytes(b))
    read = """
import h5py
from mpi4py import MPI
c = MPI.COMM_WORLD
try:
    with h5py.File('p.h5', 'r', driver='mpio', comm=c) as f:
        d = f['d']
        with d.collective:
            x = d[...]
    print('rank', c.rank, 'READ', int(x.sum()), flush=True)
except OSError as e:
    print('rank', c.rank, 'REFUSED', e, flush=True)
"""
    r = run_py(read, tmp_path, nranks=2)
    assert r.stdout.count("REFUSED") == 2 and "READ" not in r.stdout, (r.stdout, r.stderr[-2000:])


def test_len_big_sparse(tmp_path):
    """h5py's TestLen::test_len_big on layout=subfiles: a 2^33 x 15 float32
    contiguous dataset (480 GiB of address space) created and never written
    closes without reading or writing the extent; reopened, it reads fill values."""
    code = """
import h5py, numpy
with h5py.File('big.h5', 'w') as f:
    d = f.create_dataset('x', (2 ** 33, 15), dtype='<f4')
    assert len(d) == 2 ** 33
with h5py.File('big.h5', 'r') as f:
    x = f['x']
    print('READ', float(abs(x[0:3]).sum() + abs(x[-3:]).sum()), len(x))
"""
    r = run_py(code, tmp_path, config="layout=subfiles;subfiles=2", timeout=120)
    assert r.stdout.strip() == "READ 0.0 %d" % 2 ** 33, (r.stdout, r.stderr[-2000:])
    assert (tmp_path / "big.h5").stat().st_size < 65536


def test_reopen_by_its_own_writer(tmp_path):
    """'state open' of a file this very process writes is not a crash: a
    second, read-only open in the writer's process works; another process is
    refused while the writer holds it."""
    code = """
import h5py, numpy, subprocess, sys, os
f = h5py.File('w.h5', 'w')
f['d'] = numpy.arange(10)
f.flush()
g = h5py.File('w.h5', 'r')
print('SECOND', int(g['d'][3]))
g.close()
r = subprocess.run([sys.executable, '-c', "import h5py\\ntry:\\n h5py.File('w.h5','r')\\n print('OTHER OPENED')\\nexcept OSError as e:\\n print('OTHER REFUSED', e)"],
                   capture_output=True, text=True)
print(r.stdout.strip())
f.close()
"""
    r = run_py(code, tmp_path, config="layout=subfiles;subfiles=2")
    assert "SECOND 3" in r.stdout, (r.stdout, r.stderr[-2000:])
    assert "OTHER REFUSED" in r.stdout and "state open" in r.stdout, r.stdout


@pytest.mark.parametrize("file_io", ["auto", "mpiio"])
def test_shared_not_a_regular_file(tmp_path, file_io):
    """The shared layout at a path that holds a FIFO, a socket or a directory:
    a clear OSError on every rank (HDF5's POSIX drivers' errno wording, so
    h5py raises IsADirectoryError for the directory), no hang (the timeout
    would raise), nothing created or removed; serial and 2 ranks, with POSIX
    descriptors and with MPI-IO handles (a FIFO would block ROMIO's open)."""
    cfg = f"file_io={file_io}"
    fifo, sock, d = tmp_path / "f.h5", tmp_path / "s.h5", tmp_path / "d.h5"
    os.mkfifo(fifo)
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sock))
    d.mkdir()
    par = """
import h5py, sys
from mpi4py import MPI
c = MPI.COMM_WORLD
out = []
for name in ('f.h5', 's.h5', 'd.h5'):
    for mode in ('r', 'r+', 'w', 'a'):
        try:
            with h5py.File(name, mode, driver='mpio', comm=c):
                out.append(f'rank {c.rank} {name} {mode} OPENED')
        except IsADirectoryError as e:
            out.append(f'rank {c.rank} {name} {mode} ISDIR {e}')
        except OSError as e:
            out.append(f'rank {c.rank} {name} {mode} REFUSED {e}')
every = c.gather(out)
if c.rank == 0:
    print('\\n'.join(line for lines in every for line in lines), flush=True)
"""
    try:
        for name in ("f.h5", "s.h5", "d.h5"):
            for mode in ("r", "r+"):
                r = run_py(OPEN.format(path=name, mode=mode), tmp_path, config=cfg, timeout=30)
                assert r.stdout.startswith("REFUSED"), (name, mode, r.stdout, r.stderr[-1500:])
                want = "errno = 21" if name == "d.h5" else "not a regular file"
                assert want in r.stdout, (name, mode, r.stdout)
        r = run_py(par, tmp_path, config=cfg, nranks=2, timeout=90)
        lines = [ln for ln in r.stdout.splitlines() if ln.startswith("rank ")]
        assert len(lines) == 24, (r.stdout, r.stderr[-2000:])
        for ln in lines:
            name = ln.split()[2]
            assert (" ISDIR " if name == "d.h5" else " REFUSED ") in ln, ln
            assert "OPENED" not in ln, ln
    finally:
        s.close()
    assert stat_kind(fifo) == "fifo" and stat_kind(sock) == "socket" and d.is_dir() and not any(d.iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.h5", "f.h5", "s.h5"]


def stat_kind(p):
    import stat
    m = os.lstat(p).st_mode
    return "fifo" if stat.S_ISFIFO(m) else "socket" if stat.S_ISSOCK(m) else "other"
