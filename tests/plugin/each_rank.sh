#!/bin/sh
# each_rank.sh PREFIX CMD...: run CMD with its stderr in PREFIX.R, R this
# process's MPI rank (MPICH's PMI_RANK, Open MPI's OMPI_COMM_WORLD_RANK), so a
# test can check every rank's error stack without the ranks' output interleaving.
p=$1; shift
exec "$@" 2> "$p.${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-unknown}}"
