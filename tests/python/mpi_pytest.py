"""Runs pytest in one MPI rank with a per-rank JUnit report, for h5py's MPI
tests under mpiexec:  mpiexec -n N python mpi_pytest.py <report prefix> [pytest args]
writes <report prefix>.<rank>.xml."""
import os
import sys

import pytest
from mpi4py import MPI

prefix = sys.argv[1]
sys.exit(pytest.main([*sys.argv[2:], f"--junitxml={prefix}.{MPI.COMM_WORLD.rank}.xml"]))
