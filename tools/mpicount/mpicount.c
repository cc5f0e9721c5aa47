/* libtagg-mpicount: counts the MPI calls that synchronise ranks (collectives,
 * collective file and window calls) and the time spent in them, per process,
 * through the MPI profiling interface. LD_PRELOAD it into any MPI program;
 * at MPI_Finalize rank 0 prints the counts summed over ranks and the time of
 * the slowest rank. Used to explain where tagg-bench's time goes. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
#define C(name) K_##name,
#include "mpicount.def"
#undef C
    K_N
};
static const char *const names[K_N] = {
#define C(name) #name,
#include "mpicount.def"
#undef C
};
static double calls[K_N], secs[K_N];

#define WRAP(name, sig, args)                                                                                         \
    int name sig                                                                                                      \
    {                                                                                                                 \
        double t0 = PMPI_Wtime();                                                                                     \
        int    rc_ = P##name args;                                                                                     \
        secs[K_##name] += PMPI_Wtime() - t0;                                                                          \
        calls[K_##name] += 1;                                                                                         \
        return rc_;                                                                                                   \
    }

WRAP(MPI_Barrier, (MPI_Comm c), (c))
WRAP(MPI_Bcast, (void *b, int n, MPI_Datatype t, int r, MPI_Comm c), (b, n, t, r, c))
WRAP(MPI_Allreduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c), (s, r, n, t, o, c))
WRAP(MPI_Reduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, int root, MPI_Comm c), (s, r, n, t, o, root, c))
WRAP(MPI_Allgather, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c), (s, sn, st, r, rn, rt, c))
WRAP(MPI_Gather, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root, MPI_Comm c), (s, sn, st, r, rn, rt, root, c))
WRAP(MPI_Alltoall, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c), (s, sn, st, r, rn, rt, c))
WRAP(MPI_Alltoallv, (const void *s, const int *sc, const int *sd, MPI_Datatype st, void *r, const int *rc, const int *rd, MPI_Datatype rt, MPI_Comm c), (s, sc, sd, st, r, rc, rd, rt, c))
WRAP(MPI_Comm_dup, (MPI_Comm c, MPI_Comm *n), (c, n))
WRAP(MPI_Comm_split, (MPI_Comm c, int col, int key, MPI_Comm *n), (c, col, key, n))
WRAP(MPI_Comm_split_type, (MPI_Comm c, int ty, int key, MPI_Info i, MPI_Comm *n), (c, ty, key, i, n))
WRAP(MPI_File_open, (MPI_Comm c, const char *p, int a, MPI_Info i, MPI_File *f), (c, p, a, i, f))
WRAP(MPI_File_close, (MPI_File *f), (f))
WRAP(MPI_File_sync, (MPI_File f), (f))
WRAP(MPI_File_set_view, (MPI_File f, MPI_Offset d, MPI_Datatype e, MPI_Datatype ft, const char *rep, MPI_Info i), (f, d, e, ft, rep, i))
WRAP(MPI_File_set_size, (MPI_File f, MPI_Offset s), (f, s))
WRAP(MPI_File_write_at_all, (MPI_File f, MPI_Offset o, const void *b, int n, MPI_Datatype t, MPI_Status *st), (f, o, b, n, t, st))
WRAP(MPI_File_read_at_all, (MPI_File f, MPI_Offset o, void *b, int n, MPI_Datatype t, MPI_Status *st), (f, o, b, n, t, st))
WRAP(MPI_File_write_at, (MPI_File f, MPI_Offset o, const void *b, int n, MPI_Datatype t, MPI_Status *st), (f, o, b, n, t, st))
WRAP(MPI_File_read_at, (MPI_File f, MPI_Offset o, void *b, int n, MPI_Datatype t, MPI_Status *st), (f, o, b, n, t, st))
WRAP(MPI_Win_allocate, (MPI_Aint s, int d, MPI_Info i, MPI_Comm c, void *b, MPI_Win *w), (s, d, i, c, b, w))
WRAP(MPI_Win_create, (void *b, MPI_Aint s, int d, MPI_Info i, MPI_Comm c, MPI_Win *w), (b, s, d, i, c, w))
WRAP(MPI_Win_free, (MPI_Win *w), (w))
WRAP(MPI_Win_flush, (int r, MPI_Win w), (r, w))
WRAP(MPI_Win_lock_all, (int a, MPI_Win w), (a, w))
WRAP(MPI_Win_unlock_all, (MPI_Win w), (w))

int MPI_Finalize(void)
{
    int    rank;
    double sc[K_N], mt[K_N];
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Reduce(calls, sc, K_N, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    PMPI_Reduce(secs, mt, K_N, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        FILE *out = stderr;
        const char *path = getenv("MPICOUNT_OUT");
        if (path && *path && !(out = fopen(path, "a")))
            out = stderr;
        for (int k = 0; k < K_N; k++)
            if (sc[k] > 0)
                fprintf(out, "mpicount %-22s calls(sum over ranks) %8.0f  time(slowest rank) %8.3f s\n", names[k], sc[k], mt[k]);
        if (out != stderr)
            fclose(out);
    }
    return PMPI_Finalize();
}
