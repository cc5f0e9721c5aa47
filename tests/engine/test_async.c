/* Asynchronous mode (async=1) through HDF5 and the tagg driver.
 *
 *   test_async MODE PATH CONFIG     (CONFIG: "key=value,key=value" or with ';')
 *
 * MODE
 *   order   every rank writes its block of a dataset 12 times (value k in pass
 *           k), independently and collectively in turn, and an overlapping
 *           slice of a neighbour's block; without a flush in between it reads
 *           back (the staged writes must be seen), then closes and checks the
 *           file through a fresh synchronous open: the last write wins.
 *   fault   TAGG_FAULT (set by CTest) makes a staged write fail on a worker
 *           thread of rank 2: some later call on the file (at the latest
 *           H5Fclose) must fail on every rank, rank 2 with the injected text,
 *           the others naming rank 2.
 *   fault_late  the same, with rank 2's worker recording its failure late
 *           (TAGG_FAULT_ASYNC_LATE_MS) and 50 ms between the writes: the
 *           other ranks have recorded the failed collective job when a later
 *           write agrees on it, rank 2 not yet; the reports must still name
 *           rank 2 (and rank 2 its own text), not the first rank to notice;
 *           the failure must surface at an H5Dwrite.
 *   pool    a tiny staging pool (CONFIG): writes wait for space and resume, a
 *           write larger than the pool goes synchronously; the data is checked
 *           and the summary (TAGG_SUMMARY, set by CTest) must show async=1,
 *           stalls > 0 and oversize > 0.
 *   cycles  100 open-write-close cycles; the worker threads exist while a file
 *           is open and are gone after each close (threads counted in
 *           /proc/self/task). Run under AddressSanitizer for leaks.
 * Prints "N passed, M failed"; exits non-zero on any failure. */
#include <dirent.h>
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 4096 /* doubles per rank */

static int  rank, size;
static char stack_text[16384];

static herr_t collect(unsigned n, const H5E_error2_t *e, void *data)
{
    (void)n, (void)data;
    size_t used = strlen(stack_text);
    snprintf(stack_text + used, sizeof stack_text - used, "%s\n", e->desc ? e->desc : "");
    return 0;
}

static void grab_stack(void)
{
    stack_text[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect, NULL);
    H5Eclear2(H5E_DEFAULT);
}

static hid_t make_fapl(const char *cfg)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_mpi_params(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    if (H5Pset_driver_by_name(fapl, "tagg", cfg) < 0) {
        fprintf(stderr, "rank %d: cannot load the tagg driver\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return fapl;
}

static int count_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    int  n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Writes [start, start+count) of dataset d with value v + index, collectively or not. */
static herr_t put(hid_t d, hsize_t start, hsize_t count, double v, int coll, double *buf)
{
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, &count, NULL), dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, coll ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);
    for (hsize_t i = 0; i < count; i++)
        buf[i] = v + (double)(start + i);
    herr_t rc = H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl, buf);
    if (rc < 0) /* now: the next API call (the closes below) clears the stack */
        grab_stack();
    for (hsize_t i = 0; i < count; i++) /* the caller's buffer is free again: scribble on it */
        buf[i] = -1;
    H5Pclose(dxpl), H5Sclose(ms), H5Sclose(fs);
    return rc;
}

static int check(hid_t d, hsize_t start, hsize_t count, double v, int coll, const char *what)
{
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, &count, NULL), dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, coll ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);
    double *back = malloc(count * sizeof *back);
    int     ok   = H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl, back) >= 0;
    for (hsize_t i = 0; ok && i < count; i++)
        if (back[i] != v + (double)(start + i)) {
            fprintf(stderr, "rank %d: %s: element %llu is %g, expected %g\n", rank, what,
                    (unsigned long long)(start + i), back[i], v + (double)(start + i));
            ok = 0;
        }
    free(back);
    H5Pclose(dxpl), H5Sclose(ms), H5Sclose(fs);
    return ok;
}

static hid_t create(const char *path, hid_t fapl, hid_t *d)
{
    hsize_t dims = (hsize_t)N * size;
    hid_t   f    = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hid_t   fs   = H5Screate_simple(1, &dims, NULL);
    *d           = f < 0 ? -1 : H5Dcreate2(f, "x", H5T_IEEE_F64LE, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Sclose(fs);
    return f;
}

static int mode_order(const char *path, const char *cfg, int *cases)
{
    int     ok = 1;
    hid_t   fapl = make_fapl(cfg), d;
    double *buf = malloc(N * sizeof *buf);
    hid_t   f   = create(path, fapl, &d);
    hsize_t mine = (hsize_t)N * rank;
    for (int k = 1; k <= 12; k++) {
        int coll = k % 3 != 1; /* independent, collective, collective, ... */
        if (put(d, mine, N, 1000.0 * k, coll, buf) < 0)
            ok = 0;
    }
    (*cases)++;
    /* read back before any flush: must see pass 12 */
    ok &= check(d, mine, N, 12000.0, 1, "collective read of staged data");
    (*cases)++;
    /* overlapping writes on one rank: three staged writes to overlapping ranges */
    if (put(d, mine, N / 2, 50000.0, 0, buf) < 0 || put(d, mine + N / 4, N / 2, 60000.0, 0, buf) < 0 ||
        put(d, mine + N / 8, N / 8, 70000.0, 0, buf) < 0)
        ok = 0;
    ok &= check(d, mine + N / 8, N / 8, 70000.0, 0, "overlap: last write");
    ok &= check(d, mine, N / 8, 50000.0, 0, "overlap: first write's head");
    ok &= check(d, mine + N / 4, N / 2, 60000.0, 0, "overlap: second write");
    ok &= check(d, mine + 3 * N / 4, N / 4, 12000.0, 0, "overlap: untouched tail");
    (*cases)++;
    /* more passes after the reads, then close without reading */
    for (int k = 13; k <= 20; k++)
        if (put(d, mine, N, 1000.0 * k, k % 2, buf) < 0)
            ok = 0;
    /* across ranks: a later collective call of rank r overwrites the first
     * quarter of rank r+1's block, which rank r+1 wrote in earlier calls */
    hsize_t next = (hsize_t)N * ((rank + 1) % size);
    if (put(d, next, N / 4, 99000.0, 1, buf) < 0)
        ok = 0;
    H5Dclose(d);
    if (H5Fclose(f) < 0) {
        fprintf(stderr, "rank %d: H5Fclose failed\n", rank);
        ok = 0;
    }
    (*cases)++;
    /* a fresh, synchronous open sees the last pass everywhere */
    hid_t sfapl = make_fapl("async=0");
    f           = H5Fopen(path, H5F_ACC_RDONLY, sfapl);
    d           = H5Dopen2(f, "x", H5P_DEFAULT);
    ok &= f >= 0 && d >= 0 && check(d, mine + N / 4, N - N / 4, 20000.0, 1, "file after close");
    ok &= f >= 0 && d >= 0 && check(d, mine, N / 4, 99000.0, 1, "file after close (other rank's later write)");
    (*cases)++;
    H5Dclose(d), H5Fclose(f), H5Pclose(sfapl), H5Pclose(fapl);
    free(buf);
    return ok;
}

static int mode_fault(const char *path, const char *cfg, int pace_ms, int *cases)
{
    int     failed_at = 0, ok = 1;
    hid_t   fapl = make_fapl(cfg), d;
    double *buf  = malloc(N * sizeof *buf);
    hid_t   f    = create(path, fapl, &d);
    hsize_t mine = (hsize_t)N * rank;
    char    where[64] = "";
    H5E_BEGIN_TRY
    {
        /* the stack is read right after the failing call (put() does it for
         * H5Dwrite): the next API call clears it */
        for (int k = 1; k <= 10 && !failed_at; k++) {
            if (put(d, mine, N, k, 1, buf) < 0)
                failed_at = k, snprintf(where, sizeof where, "H5Dwrite %d", k);
            nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = pace_ms * 1000000L}, NULL);
        }
        H5Dclose(d);
        if (!failed_at && H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) {
            failed_at = 11, snprintf(where, sizeof where, "H5Fflush");
            grab_stack();
        }
        if (H5Fclose(f) < 0 && !failed_at) {
            failed_at = 12, snprintf(where, sizeof where, "H5Fclose");
            grab_stack();
        }
    }
    H5E_END_TRY
    (*cases)++;
    int first[2] = {failed_at, -failed_at}, agree[2];
    MPI_Allreduce(first, agree, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!failed_at) {
        fprintf(stderr, "rank %d: the injected background failure never surfaced (not even at close)\n", rank);
        ok = 0;
    }
    else if (pace_ms && failed_at > 10) {
        fprintf(stderr, "rank %d: the failure surfaced only at %s, after rank 2 recorded it: the late record was "
                        "not exercised\n", rank, where);
        ok = 0;
    }
    else if (agree[0] != -agree[1]) {
        fprintf(stderr, "rank %d: ranks saw the failure at different calls (mine: %s)\n", rank, where);
        ok = 0;
    }
    const char *want = rank == 2 ? "injected by TAGG_FAULT" : "on rank 2";
    if (failed_at && !strstr(stack_text, want)) {
        fprintf(stderr, "rank %d: %s failed but the error stack lacks '%s':\n%s", rank, where, want, stack_text);
        ok = 0;
    }
    (*cases)++;
    if (rank == 0)
        printf("background failure reported by %s on every rank\n", where);
    H5Pclose(fapl);
    free(buf);
    return ok;
}

static int mode_pool(const char *path, const char *cfg, int *cases)
{
    int     ok   = 1;
    hid_t   fapl = make_fapl(cfg), d;
    double *buf  = malloc(N * sizeof *buf);
    hid_t   f    = create(path, fapl, &d);
    hsize_t mine = (hsize_t)N * rank;
    /* 1 KiB pieces into a 4 KiB pool: a few fit, then writes wait */
    for (int k = 0; k < 32; k++)
        if (put(d, mine + (hsize_t)k * 128, 128, 1.0, 0, buf) < 0)
            ok = 0;
    /* the whole block (32 KiB) is larger than the pool: written synchronously */
    if (put(d, mine, N, 2.0, 1, buf) < 0)
        ok = 0;
    for (int k = 0; k < 16; k++)
        if (put(d, mine + (hsize_t)k * 256, 256, 3.0, 1, buf) < 0)
            ok = 0;
    H5Dclose(d);
    if (H5Fclose(f) < 0)
        ok = 0;
    (*cases)++;
    hid_t sfapl = make_fapl("async=0");
    f           = H5Fopen(path, H5F_ACC_RDONLY, sfapl);
    d           = H5Dopen2(f, "x", H5P_DEFAULT);
    ok &= f >= 0 && d >= 0 && check(d, mine, N, 3.0, 1, "after the pool runs");
    H5Dclose(d), H5Fclose(f), H5Pclose(sfapl), H5Pclose(fapl);
    (*cases)++;
    const char *sum = getenv("TAGG_SUMMARY");
    if (rank == 0 && sum) { /* the first line is the async file's */
        char  line[4096] = "";
        FILE *in         = fopen(sum, "r");
        if (!in || !fgets(line, sizeof line, in)) {
            fprintf(stderr, "no summary in %s\n", sum);
            ok = 0;
        }
        else {
            unsigned long long stalls = 0, oversize = 0;
            const char        *s = strstr(line, " stalls="), *o = strstr(line, " oversize=");
            if (!strstr(line, " async=1 ") || !s || !o || sscanf(s, " stalls=%llu", &stalls) != 1 ||
                sscanf(o, " oversize=%llu", &oversize) != 1 || stalls == 0 || oversize == 0) {
                fprintf(stderr, "summary lacks async=1 with stalls > 0 and oversize > 0:\n%s", line);
                ok = 0;
            }
            else
                printf("pool: stalls=%llu oversize=%llu\n", stalls, oversize);
        }
        if (in)
            fclose(in);
    }
    (*cases)++;
    free(buf);
    return ok;
}

static int mode_cycles(const char *path, const char *cfg, int *cases)
{
    int     ok = 1, base = -1, during = 0;
    hid_t   fapl = make_fapl(cfg), d;
    double *buf  = malloc(N * sizeof *buf);
    for (int c = 0; c < 100; c++) {
        hid_t f = create(path, fapl, &d);
        if (f < 0 || d < 0 || put(d, (hsize_t)N * rank, N, c, 1, buf) < 0)
            ok = 0;
        int n = count_threads();
        if (n > during)
            during = n;
        H5Dclose(d);
        if (H5Fclose(f) < 0)
            ok = 0;
        if (c == 0)
            base = count_threads(); /* MPI may start threads of its own at the first file */
    }
    int end = count_threads();
    (*cases)++;
    if (end != base || during <= base) {
        fprintf(stderr, "rank %d: threads: %d after the first cycle, %d at most while open, %d at the end\n", rank,
                base, during, end);
        ok = 0;
    }
    else if (rank == 0)
        printf("threads: %d after the first cycle, %d while a file is open, %d after 100 cycles\n", base, during,
               end);
    (*cases)++;
    H5Pclose(fapl);
    free(buf);
    return ok;
}

int main(int argc, char **argv)
{
    int provided, ok = 1, cases = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 4) {
        if (rank == 0)
            fprintf(stderr, "usage: %s order|fault|pool|cycles PATH CONFIG\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    const char *mode = argv[1], *path = argv[2];
    char       *cfg  = argv[3];
    for (char *c = cfg; *c; c++) /* CTest passes ',' for the config string's ';' */
        if (*c == ',')
            *c = ';';
    if (!strcmp(mode, "order"))
        ok = mode_order(path, cfg, &cases);
    else if (!strcmp(mode, "fault"))
        ok = size > 2 && mode_fault(path, cfg, 0, &cases);
    else if (!strcmp(mode, "fault_late"))
        ok = size > 2 && mode_fault(path, cfg, 50, &cases);
    else if (!strcmp(mode, "pool"))
        ok = mode_pool(path, cfg, &cases);
    else if (!strcmp(mode, "cycles"))
        ok = mode_cycles(path, cfg, &cases);
    else {
        if (rank == 0)
            fprintf(stderr, "unknown mode '%s'\n", mode);
        ok = 0;
    }
    int all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d passed, %d failed\n", mode, all ? cases : 0, all ? 0 : (cases ? cases : 1));
    MPI_Finalize();
    return all ? 0 : 1;
}
