/* libtagg-mpicount: counts the MPI calls that synchronise ranks (collectives,
 * collective file and window calls) and the time spent in them, per process,
 * through the MPI profiling interface. LD_PRELOAD it into any MPI program;
 * at MPI_Finalize rank 0 prints the counts summed over ranks and the time of
 * the slowest rank. Used to explain where tagg-bench's time goes.
 *
 * In a program that calls HDF5 it also attributes every counted call to the
 * HDF5 call it happened in (H5Fcreate, H5Fopen, the first H5Dwrite after an
 * open and the later ones, H5Fclose ...; H5Fcreate of a path that does not
 * exist yet apart from one over an existing file, which HDF5 opens first: the outermost of the calls wrapped
 * below, which forward to HDF5 through dlsym(RTLD_NEXT)) and to the library
 * that made it (hdf5, tagg's plugins, the MPI library itself, the program),
 * and prints one line per HDF5 call kind with the synchronising calls per
 * occurrence, on the rank that made most:
 *   mpicount-phase H5Fopen n=2 sync=12 per_call=6.0 time=0.012s hdf5=4 tagg=8 mpi=0 app=0 | MPI_Bcast=4 ...
 * These counts do not depend on the machine's load; the tests pin them. */
#define _GNU_SOURCE /* dladdr, RTLD_NEXT */
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
#define C(name, sync) K_##name,
#include "mpicount.def"
#undef C
    K_N
};
static const char *const names[K_N] = {
#define C(name, sync) #name,
#include "mpicount.def"
#undef C
};
static const int is_sync[K_N] = {
#define C(name, sync) sync,
#include "mpicount.def"
#undef C
};
static double calls[K_N], secs[K_N];

/* ---- phases: the HDF5 call a counted MPI call happened in */
enum { P_OTHER, P_FCREATE, P_FCREATE_OLD, P_FOPEN, P_DCREATE, P_DOPEN, P_DWRITE1, P_DWRITE, P_DREAD1, P_DREAD, P_DCLOSE, P_FCLOSE, P_N };
static const char *const phase_names[P_N] = {"outside-HDF5", "H5Fcreate(new)", "H5Fcreate(existing)", "H5Fopen",         "H5Dcreate",
                                             "H5Dopen",      "H5Dwrite(first)", "H5Dwrite(later)", "H5Dread(first)",
                                             "H5Dread(later)", "H5Dclose",     "H5Fclose"};
enum { W_HDF5, W_TAGG, W_MPI, W_APP, W_N };
static const char *const who_names[W_N] = {"hdf5", "tagg", "mpi", "app"};
static double pcount[P_N][W_N][K_N]; /* calls per phase, caller, kind */
static double pn[P_N], ptime[P_N];   /* occurrences and wall time of each phase (this rank) */
static int    phase = P_OTHER, depth = 0;
static int    wrote_since_open = 0, read_since_open = 0;

static int who_of(const void *ret)
{
    Dl_info d;
    if (!dladdr(ret, &d) || !d.dli_fname)
        return W_APP;
    const char *s = strrchr(d.dli_fname, '/');
    s             = s ? s + 1 : d.dli_fname;
    if (!strncmp(s, "libhdf5", 7))
        return W_HDF5;
    if (strstr(s, "tagg") && !strstr(s, "mpicount"))
        return W_TAGG;
    if (!strncmp(s, "libmpi", 6) || strstr(s, "romio"))
        return W_MPI;
    return W_APP;
}

#define WRAP(name, sig, args)                                                                                         \
    int name sig                                                                                                      \
    {                                                                                                                 \
        double t0 = PMPI_Wtime();                                                                                     \
        int    rc_ = P##name args;                                                                                     \
        secs[K_##name] += PMPI_Wtime() - t0;                                                                          \
        calls[K_##name] += 1;                                                                                         \
        pcount[phase][who_of(__builtin_return_address(0))][K_##name] += 1;                                            \
        return rc_;                                                                                                   \
    }

WRAP(MPI_Barrier, (MPI_Comm c), (c))
WRAP(MPI_Bcast, (void *b, int n, MPI_Datatype t, int r, MPI_Comm c), (b, n, t, r, c))
WRAP(MPI_Allreduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c), (s, r, n, t, o, c))
WRAP(MPI_Reduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, int root, MPI_Comm c), (s, r, n, t, o, root, c))
WRAP(MPI_Allgather, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c), (s, sn, st, r, rn, rt, c))
WRAP(MPI_Allgatherv, (const void *s, int sn, MPI_Datatype st, void *r, const int *rc, const int *rd, MPI_Datatype rt, MPI_Comm c), (s, sn, st, r, rc, rd, rt, c))
WRAP(MPI_Gather, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root, MPI_Comm c), (s, sn, st, r, rn, rt, root, c))
WRAP(MPI_Gatherv, (const void *s, int sn, MPI_Datatype st, void *r, const int *rc, const int *rd, MPI_Datatype rt, int root, MPI_Comm c), (s, sn, st, r, rc, rd, rt, root, c))
WRAP(MPI_Scatter, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root, MPI_Comm c), (s, sn, st, r, rn, rt, root, c))
WRAP(MPI_Alltoall, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c), (s, sn, st, r, rn, rt, c))
WRAP(MPI_Alltoallv, (const void *s, const int *sc, const int *sd, MPI_Datatype st, void *r, const int *rc, const int *rd, MPI_Datatype rt, MPI_Comm c), (s, sc, sd, st, r, rc, rd, rt, c))
WRAP(MPI_Exscan, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c), (s, r, n, t, o, c))
WRAP(MPI_Scan, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c), (s, r, n, t, o, c))
WRAP(MPI_Iallreduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c, MPI_Request *q), (s, r, n, t, o, c, q))
WRAP(MPI_Iallgather, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c, MPI_Request *q), (s, sn, st, r, rn, rt, c, q))
WRAP(MPI_Ialltoall, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c, MPI_Request *q), (s, sn, st, r, rn, rt, c, q))
WRAP(MPI_Ialltoallv, (const void *s, const int *sc, const int *sd, MPI_Datatype st, void *r, const int *rc, const int *rd, MPI_Datatype rt, MPI_Comm c, MPI_Request *q), (s, sc, sd, st, r, rc, rd, rt, c, q))
WRAP(MPI_Ibarrier, (MPI_Comm c, MPI_Request *q), (c, q))
WRAP(MPI_Ibcast, (void *b, int n, MPI_Datatype t, int r, MPI_Comm c, MPI_Request *q), (b, n, t, r, c, q))
WRAP(MPI_Igather, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root, MPI_Comm c, MPI_Request *q), (s, sn, st, r, rn, rt, root, c, q))
WRAP(MPI_Igatherv, (const void *s, int sn, MPI_Datatype st, void *r, const int *rc, const int *rd, MPI_Datatype rt, int root, MPI_Comm c, MPI_Request *q), (s, sn, st, r, rc, rd, rt, root, c, q))
WRAP(MPI_Ireduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, int root, MPI_Comm c, MPI_Request *q), (s, r, n, t, o, root, c, q))
WRAP(MPI_Comm_dup, (MPI_Comm c, MPI_Comm *n), (c, n))
WRAP(MPI_Comm_split, (MPI_Comm c, int col, int key, MPI_Comm *n), (c, col, key, n))
WRAP(MPI_Comm_split_type, (MPI_Comm c, int ty, int key, MPI_Info i, MPI_Comm *n), (c, ty, key, i, n))
WRAP(MPI_Comm_create, (MPI_Comm c, MPI_Group g, MPI_Comm *n), (c, g, n))
WRAP(MPI_Comm_free, (MPI_Comm *c), (c))
/* File opens, closes and atomicity changes on a one-process communicator
 * (MPI_COMM_SELF) synchronise nothing: counted apart. */
#define SELF_MAX 256
static MPI_File self_files[SELF_MAX];
static int      nself;
#define COUNT(kind, t0)                                                                                               \
    do {                                                                                                              \
        secs[kind] += PMPI_Wtime() - (t0);                                                                            \
        calls[kind] += 1;                                                                                             \
        pcount[phase][who_of(__builtin_return_address(0))][kind] += 1;                                                \
    } while (0)
int MPI_File_open(MPI_Comm c, const char *p, int a, MPI_Info i, MPI_File *f)
{
    int    n  = 0;
    double t0 = PMPI_Wtime();
    int    rc = PMPI_File_open(c, p, a, i, f);
    PMPI_Comm_size(c, &n);
    if (n == 1 && rc == MPI_SUCCESS && nself < SELF_MAX)
        self_files[nself++] = *f;
    COUNT(n == 1 ? K_MPI_File_open_on_one_process : K_MPI_File_open, t0);
    return rc;
}
static int self_slot(MPI_File f) /* -1: not a one-process file */
{
    for (int k = 0; k < nself; k++)
        if (self_files[k] == f)
            return k;
    return -1;
}
int MPI_File_close(MPI_File *f)
{
    int k = self_slot(*f), self = k >= 0;
    if (self)
        self_files[k] = self_files[--nself];
    double t0 = PMPI_Wtime();
    int    rc = PMPI_File_close(f);
    COUNT(self ? K_MPI_File_close_on_one_process : K_MPI_File_close, t0);
    return rc;
}
WRAP(MPI_File_sync, (MPI_File f), (f))
WRAP(MPI_File_set_view, (MPI_File f, MPI_Offset d, MPI_Datatype e, MPI_Datatype ft, const char *rep, MPI_Info i), (f, d, e, ft, rep, i))
WRAP(MPI_File_set_size, (MPI_File f, MPI_Offset s), (f, s))
int MPI_File_set_atomicity(MPI_File f, int flag)
{
    int    self = self_slot(f) >= 0;
    double t0   = PMPI_Wtime();
    int    rc   = PMPI_File_set_atomicity(f, flag);
    COUNT(self ? K_MPI_File_set_atomicity_on_one_process : K_MPI_File_set_atomicity, t0);
    return rc;
}
WRAP(MPI_File_write_at_all, (MPI_File f, MPI_Offset o, const void *b, int n, MPI_Datatype t, MPI_Status *st), (f, o, b, n, t, st))
WRAP(MPI_File_read_at_all, (MPI_File f, MPI_Offset o, void *b, int n, MPI_Datatype t, MPI_Status *st), (f, o, b, n, t, st))
WRAP(MPI_File_write_at, (MPI_File f, MPI_Offset o, const void *b, int n, MPI_Datatype t, MPI_Status *st), (f, o, b, n, t, st))
WRAP(MPI_File_read_at, (MPI_File f, MPI_Offset o, void *b, int n, MPI_Datatype t, MPI_Status *st), (f, o, b, n, t, st))
WRAP(MPI_Win_allocate, (MPI_Aint s, int d, MPI_Info i, MPI_Comm c, void *b, MPI_Win *w), (s, d, i, c, b, w))
WRAP(MPI_Win_create, (void *b, MPI_Aint s, int d, MPI_Info i, MPI_Comm c, MPI_Win *w), (b, s, d, i, c, w))
WRAP(MPI_Win_free, (MPI_Win *w), (w))
WRAP(MPI_Win_fence, (int a, MPI_Win w), (a, w))
WRAP(MPI_Win_flush, (int r, MPI_Win w), (r, w))
WRAP(MPI_Win_lock_all, (int a, MPI_Win w), (a, w))
WRAP(MPI_Win_unlock_all, (MPI_Win w), (w))

/* ---- the HDF5 calls that delimit phases (hid_t is int64_t, herr_t int in HDF5 1.14) */
typedef int64_t hid_;
static void *next_sym(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    if (!p) {
        fprintf(stderr, "mpicount: %s not found after the preloaded library\n", name);
        abort();
    }
    return p;
}
static int enter(int p)
{
    if (depth++ == 0)
        phase = p, pn[p] += 1, ptime[p] -= PMPI_Wtime();
    return depth == 1;
}
static void leave(int outer, int p)
{
    depth--;
    if (outer)
        ptime[p] += PMPI_Wtime(), phase = P_OTHER;
}
#define H5WRAP(ret, name, sig, args, ph, pre)                                                                         \
    ret name sig                                                                                                      \
    {                                                                                                                 \
        static ret(*real) sig;                                                                                        \
        if (!real)                                                                                                    \
            *(void **)&real = next_sym(#name);                                                                        \
        int p = (ph);                                                                                                 \
        pre;                                                                                                          \
        int outer = enter(p);                                                                                         \
        ret r_    = real args;                                                                                        \
        leave(outer, p);                                                                                              \
        return r_;                                                                                                    \
    }
H5WRAP(hid_, H5Fcreate, (const char *n, unsigned fl, hid_ fcpl, hid_ fapl), (n, fl, fcpl, fapl),
       access(n, F_OK) == 0 ? P_FCREATE_OLD : P_FCREATE,
       (wrote_since_open = read_since_open = 0))
H5WRAP(hid_, H5Fopen, (const char *n, unsigned fl, hid_ fapl), (n, fl, fapl), P_FOPEN,
       (wrote_since_open = read_since_open = 0))
H5WRAP(int, H5Fclose, (hid_ f), (f), P_FCLOSE, (void)0)
H5WRAP(hid_, H5Dcreate2, (hid_ l, const char *n, hid_ t, hid_ s, hid_ lc, hid_ dc, hid_ da), (l, n, t, s, lc, dc, da),
       P_DCREATE, (void)0)
H5WRAP(hid_, H5Dopen2, (hid_ l, const char *n, hid_ da), (l, n, da), P_DOPEN, (void)0)
H5WRAP(int, H5Dclose, (hid_ d), (d), P_DCLOSE, (void)0)
H5WRAP(int, H5Dwrite, (hid_ d, hid_ mt, hid_ ms, hid_ fs, hid_ dx, const void *b), (d, mt, ms, fs, dx, b),
       depth ? P_OTHER : wrote_since_open++ ? P_DWRITE : P_DWRITE1, (void)0)
H5WRAP(int, H5Dread, (hid_ d, hid_ mt, hid_ ms, hid_ fs, hid_ dx, void *b), (d, mt, ms, fs, dx, b),
       depth ? P_OTHER : read_since_open++ ? P_DREAD : P_DREAD1, (void)0)

int MPI_Finalize(void)
{
    int    rank;
    double sc[K_N], mt[K_N];
    static double pc[P_N][W_N][K_N], pt[P_N], pnn[P_N];
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Reduce(calls, sc, K_N, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    PMPI_Reduce(secs, mt, K_N, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    PMPI_Reduce(pcount, pc, P_N * W_N * K_N, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    PMPI_Reduce(ptime, pt, P_N, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    PMPI_Reduce(pn, pnn, P_N, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        FILE *out = stderr;
        const char *path = getenv("MPICOUNT_OUT");
        if (path && *path && !(out = fopen(path, "a")))
            out = stderr;
        for (int k = 0; k < K_N; k++)
            if (sc[k] > 0)
                fprintf(out, "mpicount %-22s calls(sum over ranks) %8.0f  time(slowest rank) %8.3f s\n", names[k], sc[k], mt[k]);
        for (int p = 1; p < P_N; p++) {
            if (pnn[p] == 0)
                continue;
            double by[W_N] = {0}, tot = 0;
            for (int w = 0; w < W_N; w++)
                for (int k = 0; k < K_N; k++)
                    if (is_sync[k])
                        by[w] += pc[p][w][k], tot += pc[p][w][k];
            fprintf(out, "mpicount-phase %s n=%.0f sync=%.0f per_call=%.1f time=%.4fs", phase_names[p], pnn[p], tot,
                    tot / pnn[p], pt[p]);
            for (int w = 0; w < W_N; w++)
                fprintf(out, " %s=%.0f", who_names[w], by[w]);
            fprintf(out, " |");
            for (int k = 0; k < K_N; k++) {
                double n = 0;
                for (int w = 0; w < W_N; w++)
                    n += pc[p][w][k];
                if (n > 0 && is_sync[k]) {
                    fprintf(out, " %s=%.0f", names[k] + 4, n);
                    for (int w = 0; w < W_N; w++)
                        if (pc[p][w][k] > 0 && pc[p][w][k] < n)
                            fprintf(out, "(%s:%.0f)", who_names[w], pc[p][w][k]);
                }
            }
            fprintf(out, "\n");
        }
        if (out != stderr)
            fclose(out);
    }
    return PMPI_Finalize();
}
