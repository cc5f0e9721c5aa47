"""h5py's MPI tests (pytest -m mpi: driver='mpio' with mpi4py) under mpiexec,
without tagg and through the tagg VOL connector (shared and subfiles layouts):
the same tests must pass on every rank, and tagg's summary must show that tagg
handled their files on all ranks. And MPI atomic mode (File.atomic) through the
VOL connector and through HDF5_DRIVER=tagg."""
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from conftest import HERE, _need, field, summary_lines

VOL = "tagg under_vol=0;under_info={}"


def run_mpi_suite(tmp_path, env, nranks, name):
    prefix = tmp_path / name
    cmd = [_need("MPIEXEC"), _need("MPIEXEC_NUMPROC_FLAG"), str(nranks), sys.executable,
           os.path.join(HERE, "mpi_pytest.py"), str(prefix),
           "--pyargs", "h5py", "--with-mpi", "-m", "mpi", "-q", "-p", "no:cacheprovider"]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    results = []
    for rank in range(nranks):
        xml = f"{prefix}.{rank}.xml"
        assert os.path.exists(xml), f"{name}: rank {rank} wrote no report\n{r.stdout}{r.stderr}"
        passed, failed = set(), set()
        for tc in ET.parse(xml).getroot().iter("testcase"):
            tid = f"{tc.get('classname')}::{tc.get('name')}"
            bad = [c for c in tc if c.tag in ("failure", "error", "skipped")]
            (failed if bad else passed).add(tid)
        results.append((passed, failed))
    return r, results


@pytest.mark.parametrize("nranks", [1, 2, 4])
def test_h5py_mpi_tests_through_vol(tmp_path, tagg_env, nranks):
    base_env = {k: v for k, v in tagg_env.items() if k != "TAGG_SUMMARY"}
    r, base = run_mpi_suite(tmp_path, base_env, nranks, "plain")
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(base[0][0]) >= 4, f"too few MPI tests ran without tagg: {base[0]}"
    for layout in ("shared", "subfiles"):
        env = dict(tagg_env, HDF5_VOL_CONNECTOR=VOL + ("" if layout == "shared" else ";layout=subfiles"),
                   TAGG_SUMMARY=str(tmp_path / f"summary-{layout}.log"))
        r, res = run_mpi_suite(tmp_path, env, nranks, layout)
        for rank in range(nranks):
            assert res[rank] == base[rank], f"{layout}, rank {rank}: {res[rank]} != {base[rank]}\n{r.stdout}{r.stderr}"
        assert r.returncode == 0, r.stdout + r.stderr
        with open(env["TAGG_SUMMARY"]) as f:
            lines = [line for line in f if line.startswith("tagg: file=")]
        # every MPI test creates one file: each must show up, on all ranks, in the layout asked for
        for tid in base[0][0]:
            test = tid.rsplit("::", 1)[1]
            mine = [line for line in lines if f"{test}>.hdf5 " in line]
            assert mine, f"{layout}: no tagg summary for {test}'s file: {lines}"
            for line in mine:
                assert field(line, "ranks") == str(nranks) and field(line, "layout") == layout, line


@pytest.mark.parametrize("driver", ["mpio", "default"])
def test_atomic_mode(tmp_path, tagg_env, run_script, driver):
    """Atomic mode through the VOL connector (mpio) and through HDF5_DRIVER=tagg
    (default), with async staging on: in atomic mode no row write is staged and
    a read after another rank's write sees it; the control (atomic off) stages."""
    env = dict(tagg_env, TAGG_CONFIG="async=1")
    if driver == "mpio":
        env["HDF5_VOL_CONNECTOR"] = VOL
    else:
        env["HDF5_DRIVER"] = "tagg"
    staged = {}
    for mode in ("on", "off"):
        out = tmp_path / f"atomic-{mode}.h5"
        r = run_script("atomic.py", [out, driver, mode], env, nranks=2)
        assert r.returncode == 0, r.stdout + r.stderr
        assert f"atomic ok: {driver} atomic={mode} on 2 ranks" in r.stdout
        lines = summary_lines(env, f"atomic-{mode}.h5")
        assert len(lines) == 1, lines
        assert field(lines[0], "ranks") == "2" and int(field(lines[0], "raw_write_bytes")) >= 2 * 8000
        assert field(lines[0], "async") == "1", lines[0]
        staged[mode] = int(field(lines[0], "staged_bytes"))
    # Each rank's row is one 8000-byte write. Atomic mode is switched off again
    # before the close, so the metadata flushed at close may be staged (a few kB).
    assert staged["on"] < 8000, f"atomic mode staged {staged['on']} bytes: a row went through the staging pool"
    assert staged["off"] >= 2 * 8000, f"the control staged {staged['off']} bytes: the check above proves nothing"


def _sealed_model(path):
    """A tuning model (model/include/tagg/tune.h) that prices reads through 4 KiB
    rounds fastest, every other read alike, and writes direct; sealed with the
    FNV-1a 64 of its body as tagg-tune seals it."""
    body = ("tagg-tune model 1\nkind decision_tree\ntarget log_seconds\ninputs 3\ninput is_read\ninput direct\n"
            "input buffer_size\ncandidates direct 0 1\ncandidates buffer_size 4096 4194304\ncombine mean\ntrees 1\n"
            "tree 0 7\nnode 0 0 0.5 1 4 0\nnode 1 1 0.5 2 3 0\nnode 2 -1 0 -1 -1 5\nnode 3 -1 0 -1 -1 0\n"
            "node 4 2 8192 5 6 0\nnode 5 -1 0 -1 -1 -5\nnode 6 -1 0 -1 -1 0\n")
    h = 0xCBF29CE484222325
    for b in body.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    path.write_text(body + "end %016x\n" % h)


def test_tuning_check_split_communicators(tmp_path, tagg_env, run_script):
    """The measured check's verdicts ride in the describe rows: a process that
    holds a verdict and one that does not, in one file, both ignore it (their
    tables' fingerprints differ), so they plan the same call; where all hold it
    (the communicator that reached it), it is followed."""
    import json
    model, rec = tmp_path / "chk.tune", tmp_path / "rec.jsonl"
    _sealed_model(model)
    env = dict(tagg_env, HDF5_VOL_CONNECTOR=VOL, TAGG_TUNING=str(model), TAGG_TUNING_CHECK="1",
               TAGG_RECORD=str(rec))
    r = run_script("check_split.py", [tmp_path], env, nranks=4, timeout=300)
    assert r.returncode == 0 and "check_split ok" in r.stdout, r.stdout + r.stderr
    reads = {}
    for line in rec.read_text().splitlines():
        t = json.loads(line)
        if t["op"] == "read" and t["bytes_per_rank"] == 32768 * 8:
            reads.setdefault(t["file"].split("-")[0], []).append(
                "direct" if t["direct"] else "aggr/%d" % t["buffer_size"])
    # A: the model's choice timed, the cost model's timed (faster by far), three rounds (an overturn
    # takes every round), then the cost model's
    assert reads.get("a") == ["aggr/4096", "direct"] * 3 + ["direct", "direct"], reads
    # the pairs: one process of each holds A's verdict, the other does not: the model's choice
    for p in ("p0", "p1"):
        assert reads.get(p) == ["aggr/4096", "aggr/4096"], reads
