/* Tier tests: one HDF5 program run through the tagg driver with a given
 * configuration (see tiers.sh for the cases).
 *
 *   test_tiers write PATH CONFIG EXPECT   create PATH, write dataset "x" collectively
 *   test_tiers read PATH CONFIG EXPECT    open PATH, read "x" back and check every element
 *   test_tiers midwrite PATH CONFIG EXPECT
 *       create PATH, write "x" (acknowledged), then write "y" with
 *       TAGG_FAULT=tier_write:rank=1:after=2 (the test tier's memWrite fails in
 *       the middle of the call), close; then reopen and check "x" is intact
 * EXPECT is "ok" or "fail:TEXT": the create/open, or the first collective
 * transfer (where the tier is set up), or the faulty write must fail
 * on every rank and TEXT must be on the error stack of at least one rank.
 * Prints "RESULT ok" on rank 0 when everything held; exits 1 otherwise. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N (192 * 1024) /* doubles per rank: 1.5 MiB */
static char stack_text[16384];
static int  rank, size, captured; /* stack_text already holds the failing call's stack */

static herr_t collect(unsigned n, const H5E_error2_t *e, void *data)
{
    (void)n, (void)data;
    size_t used = strlen(stack_text);
    snprintf(stack_text + used, sizeof stack_text - used, "%s\n", e->desc ? e->desc : "");
    return 0;
}

/* Every rank failed, and want is on some rank's stack. */
static int check_failure(int failed, const char *want, const char *what)
{
    int all = 0, seen = 0, mine;
    if (!captured) {
        stack_text[0] = '\0';
        H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect, NULL);
    }
    captured = 0;
    mine = failed && strstr(stack_text, want) != NULL;
    MPI_Allreduce(&failed, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &seen, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (failed)
        fprintf(stderr, "rank %d: %s failed as expected; stack:\n%s", rank, what, stack_text);
    if (!all && rank == 0)
        fprintf(stderr, "%s: did not fail on every rank\n", what);
    if (!seen && rank == 0)
        fprintf(stderr, "%s: no rank has '%s' on its error stack\n", what, want);
    return all && seen;
}

static hid_t fapl_for(const char *cfg)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_mpi_params(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    if (H5Pset_driver_by_name(fapl, "tagg", cfg) < 0) {
        fprintf(stderr, "rank %d: cannot load the tagg driver\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return fapl;
}

static double value(const char *name, hsize_t i) { return (double)i * 3 + (name[0] == 'x' ? 0.5 : 0.25); }

static int write_ds(hid_t f, const char *name, hid_t dxpl)
{
    hsize_t dims = (hsize_t)N * size, start = (hsize_t)N * rank, count = N;
    double *buf = malloc(N * sizeof *buf);
    for (hsize_t i = 0; i < N; i++)
        buf[i] = value(name, start + i);
    hid_t  fs = H5Screate_simple(1, &dims, NULL), ms = H5Screate_simple(1, &count, NULL);
    hid_t  d  = H5Dcreate2(f, name, H5T_IEEE_F64LE, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = -1;
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);
    if (d >= 0) {
        H5E_BEGIN_TRY { rc = H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl, buf); }
        H5E_END_TRY
        if (rc < 0) { /* before the next call clears it */
            stack_text[0] = '\0';
            H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect, NULL);
            captured = 1;
        }
    }
    if (d >= 0)
        H5Dclose(d);
    H5Sclose(fs), H5Sclose(ms), free(buf);
    return rc < 0 ? -1 : 0;
}

static int read_ds(hid_t f, const char *name, hid_t dxpl)
{
    hsize_t start = (hsize_t)N * rank, count = N, bad = 0;
    double *buf = calloc(N, sizeof *buf);
    hid_t   d = H5Dopen2(f, name, H5P_DEFAULT), fs = H5Dget_space(d), ms = H5Screate_simple(1, &count, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);
    herr_t rc = -1;
    H5E_BEGIN_TRY { rc = H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl, buf); }
    H5E_END_TRY
    if (rc < 0) {
        stack_text[0] = '\0';
        H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect, NULL);
        captured = 1;
    }
    for (hsize_t i = 0; i < N && rc >= 0; i++)
        bad += buf[i] != value(name, start + i);
    if (bad)
        fprintf(stderr, "rank %d: %llu wrong elements in %s\n", rank, (unsigned long long)bad, name);
    H5Dclose(d), H5Sclose(fs), H5Sclose(ms), free(buf);
    return rc < 0 || bad ? -1 : 0;
}

int main(int argc, char **argv)
{
    int ok = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 5) {
        if (rank == 0)
            fprintf(stderr, "usage: test_tiers write|read|midwrite PATH CONFIG ok|fail:TEXT\n");
        MPI_Finalize();
        return 2;
    }
    const char *mode = argv[1], *path = argv[2], *cfg = argv[3], *expect = argv[4];
    int         want_fail = !strncmp(expect, "fail:", 5);
    hid_t       fapl = fapl_for(cfg), dxpl = H5Pcreate(H5P_DATASET_XFER), f;
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    H5E_BEGIN_TRY
    {
        f = !strcmp(mode, "read") ? H5Fopen(path, H5F_ACC_RDONLY, fapl) : H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    }
    H5E_END_TRY
    if (want_fail && strcmp(mode, "midwrite")) {
        /* A bad configuration fails the open; the tier itself is set up at the
         * file's first collective transfer, which then fails on every rank. */
        int open_failed = f < 0, any_failed = 0;
        MPI_Allreduce(&open_failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (any_failed)
            ok = check_failure(open_failed, expect + 5, "opening the file");
        else {
            int failed = (!strcmp(mode, "read") ? read_ds(f, "x", dxpl) : write_ds(f, "x", dxpl)) < 0;
            ok         = check_failure(failed, expect + 5, "the first collective transfer");
        }
        if (f >= 0) {
            H5E_BEGIN_TRY { H5Fclose(f); }
            H5E_END_TRY
        }
    }
    else if (f < 0) {
        fprintf(stderr, "rank %d: opening %s failed\n", rank, path);
        H5Eprint2(H5E_DEFAULT, stderr);
        ok = 0;
    }
    else if (!strcmp(mode, "write"))
        ok = write_ds(f, "x", dxpl) == 0 && H5Fclose(f) >= 0;
    else if (!strcmp(mode, "read"))
        ok = read_ds(f, "x", dxpl) == 0 && H5Fclose(f) >= 0;
    else { /* midwrite */
        ok = write_ds(f, "x", dxpl) == 0;
        setenv("TAGG_FAULT", "tier_write:rank=1:after=2", 1);
        int failed = write_ds(f, "y", dxpl) < 0;
        unsetenv("TAGG_FAULT");
        ok &= check_failure(failed, want_fail ? expect + 5 : "injected", "writing y with a failing tier");
        ok &= H5Fclose(f) >= 0;
        hid_t rf = H5Fopen(path, H5F_ACC_RDONLY, fapl);
        ok &= rf >= 0 && read_ds(rf, "x", dxpl) == 0 && H5Fclose(rf) >= 0;
    }
    int all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0)
        printf("RESULT %s\n", all ? "ok" : "FAILED");
    H5Pclose(dxpl), H5Pclose(fapl);
    MPI_Finalize();
    return all ? 0 : 1;
}
