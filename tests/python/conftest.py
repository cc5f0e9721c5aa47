"""Shared set-up for tagg's Python tests.

The HDF5 environment variables are read when the HDF5 library starts, so every
case runs its h5py code in a fresh interpreter (serial) or under mpiexec
(parallel) with the environment it needs, and asserts on the result here."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def _need(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run these tests through ctest (label python)")
    return value


@pytest.fixture
def tagg_env(tmp_path):
    """Environment for a child process: plugin path, summary file, clean HDF5 variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HDF5_", "TAGG_"))}
    env["HDF5_PLUGIN_PATH"] = _need("TAGG_PLUGIN_DIR")
    env["TAGG_SUMMARY"] = str(tmp_path / "summary.log")
    return env


@pytest.fixture
def run_script():
    def run(script, args, env, nranks=None, timeout=300):
        cmd = [sys.executable, os.path.join(HERE, script), *map(str, args)]
        if nranks:
            cmd = [_need("MPIEXEC"), _need("MPIEXEC_NUMPROC_FLAG"), str(nranks), *cmd]
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)

    return run


def summary_lines(env, name):
    path = env["TAGG_SUMMARY"]
    assert os.path.exists(path), "tagg wrote no summary: the data did not go through tagg"
    with open(path) as f:
        return [line for line in f if line.startswith(f"tagg: file={name} ")]


def field(line, key):
    for token in line.split():
        if token.startswith(key + "="):
            return token.split("=", 1)[1]
    raise AssertionError(f"{key} missing in summary: {line}")
