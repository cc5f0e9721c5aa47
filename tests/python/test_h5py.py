"""h5py through tagg: serial with HDF5_DRIVER=tagg (no launcher), and parallel
under mpiexec with driver='mpio' redirected by the tagg VOL connector."""
import os

import h5py
import numpy as np
import pytest

from conftest import field, summary_lines


def test_serial_h5py_with_hdf5_driver(tmp_path, tagg_env, run_script):
    env = dict(tagg_env, HDF5_DRIVER="tagg")
    out = tmp_path / "serial.h5"
    r = run_script("roundtrip.py", [out, "serial"], env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "roundtrip ok" in r.stdout
    lines = summary_lines(env, "serial.h5")
    assert len(lines) == 2, lines  # the write phase and the read phase
    assert int(field(lines[0], "raw_write_bytes")) > 0
    assert int(field(lines[1], "raw_read_bytes")) > 0
    assert field(lines[0], "ranks") == "1"
    # The file is plain HDF5: stock h5py (sec2) reads it here too.
    with h5py.File(out, "r") as f:
        assert f["arrays/f8_1d"].shape == (1001,)
        expect = ((np.arange(5) * 7 + sum(map(ord, "i1_1d"))) % 251).astype(np.int8)
        assert np.array_equal(f["arrays/i1_1d"][:5], expect)


def test_serial_rereads_kept_but_not_for_swmr_readers(tmp_path, tagg_env, run_script):
    """A read-only open whose large reads go direct keeps them (rcache.h): the
    second read of a 2 MiB dataset comes from memory (rc_hits). A SWMR
    reader's open (H5F_ACC_SWMR_READ reaches the driver) keeps nothing: a
    writer's new bytes must reach its re-reads."""
    env = dict(tagg_env, HDF5_DRIVER="tagg", TAGG_CONFIG="direct_io=on")
    r = run_script("reread.py", [tmp_path / "reread.h5"], env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "reread ok" in r.stdout
    lines = summary_lines(env, "reread.h5")
    assert len(lines) == 3, lines  # the write, the read-only open, the SWMR reader
    assert int(field(lines[1], "rc_hits")) >= 1, lines[1]
    assert int(field(lines[1], "rc_fills")) >= 1, lines[1]
    assert "rc_hits=" not in lines[2] and "rc_fills=" not in lines[2], lines[2]
    assert int(field(lines[2], "raw_read_bytes")) >= 2 * (2 << 20), lines[2]


@pytest.mark.parametrize("nranks", [1, 4])
def test_parallel_h5py_mpio_through_vol(tmp_path, tagg_env, run_script, nranks):
    """h5py with driver='mpio' redirected to tagg, collective and independent
    writes. One rank too: a one-rank MPI job's collective transfers work with
    MPI-IO, so they must through tagg (until session 53 HDF5 refused them:
    "collective access for MPI-based driver only")."""
    env = dict(tagg_env, HDF5_VOL_CONNECTOR="tagg under_vol=0;under_info={}")
    out = tmp_path / "parallel.h5"
    r = run_script("roundtrip.py", [out, "mpio"], env, nranks=nranks)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"on {nranks} ranks" in r.stdout
    lines = summary_lines(env, "parallel.h5")
    assert len(lines) == 2, lines
    assert field(lines[0], "ranks") == str(nranks)
    assert int(field(lines[0], "raw_write_bytes")) > 0
    assert int(field(lines[0], "coll_write_calls")) > 0
    assert int(field(lines[1], "raw_read_bytes")) > 0


def test_parallel_h5py_without_vol_is_not_tagg(tmp_path, tagg_env, run_script):
    """The control: with no connector the same script runs on MPI-IO and tagg
    writes no summary, so the summary checks above tell the two apart."""
    out = tmp_path / "control.h5"
    r = run_script("roundtrip.py", [out, "mpio"], tagg_env, nranks=2)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not os.path.exists(tagg_env["TAGG_SUMMARY"]), "tagg wrote a summary without the VOL connector"


@pytest.mark.parametrize("nranks", [None, 2])
def test_compound_fields_written_by_name(tmp_path, tagg_env, run_script, nranks):
    """dset['x', a:b] = ...: HDF5's read-modify-write of whole records for every
    field; tagg keeps those rewrites (write_behind) and serves the reads that
    follow from them. Serial with HDF5_DRIVER=tagg, and 2 ranks through the VOL."""
    if nranks:
        env = dict(tagg_env, HDF5_VOL_CONNECTOR="tagg under_vol=0;under_info={}")
    else:
        env = dict(tagg_env, HDF5_DRIVER="tagg")
    out = tmp_path / "fields.h5"
    r = run_script("fields.py", [out, "mpio" if nranks else "serial"], env, nranks=nranks)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "fields ok" in r.stdout
    lines = summary_lines(env, "fields.h5")
    assert len(lines) == 2, lines
    assert field(lines[0], "ranks") == str(nranks or 1)
    # every field's rewrite was kept, and the reads after them came from memory
    assert int(field(lines[0], "wb_calls")) >= 6 * (nranks or 1), lines[0]
    assert int(field(lines[0], "wb_read_bytes")) > 0, lines[0]
    # what reached the store: the records once per rank, not once per field
    assert int(field(lines[0], "raw_write_bytes")) < 2 * 28 * 40000 * (nranks or 1), lines[0]
