/* An I/O error on one aggregator reaches every rank from the same call.
 *
 * 4 ranks write a dataset collectively through tagg with 4 aggregators (so
 * rank 2 aggregates a domain) while TAGG_FAULT makes rank 2's aggregator write
 * fail; every rank must see H5Dwrite fail, rank 2 with the injected EIO on its
 * stack and the others with the rank that failed; then the same for a read, and
 * the file still closes on every rank. CTest's timeout catches a hang. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N (64 * 1024)
static char stack_text[8192];

static herr_t collect(unsigned n, const H5E_error2_t *e, void *data)
{
    (void)n, (void)data;
    size_t used = strlen(stack_text);
    snprintf(stack_text + used, sizeof stack_text - used, "%s\n", e->desc ? e->desc : "");
    return 0;
}

static int expect_failure(herr_t rc, int rank, const char *what, const char *mine, const char *others)
{
    const char *want = rank == 2 ? mine : others;
    if (rc >= 0) {
        fprintf(stderr, "rank %d: %s succeeded, expected failure\n", rank, what);
        return 0;
    }
    stack_text[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect, NULL);
    if (!strstr(stack_text, want)) {
        fprintf(stderr, "rank %d: %s: error stack lacks '%s':\n%s", rank, what, want, stack_text);
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    int rank, size, ok = 1, cases = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *path = argc > 1 ? argv[1] : "fault.h5";
    hid_t       fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_mpi_params(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    char cfg[256]; /* argv[2]: more configuration (buffers=3: the helper thread runs ahead) */
    snprintf(cfg, sizeof cfg, "backend=tapioca;aggregators=4;buffer_size=16K;block=4K%s%s", argc > 2 ? ";" : "",
             argc > 2 ? argv[2] : "");
    if (H5Pset_driver_by_name(fapl, "tagg", cfg) < 0) {
        fprintf(stderr, "rank %d: cannot load the tagg driver\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    hsize_t dims = (hsize_t)N * size, start = (hsize_t)N * rank, count = N;
    double *buf = malloc(N * sizeof *buf);
    for (int i = 0; i < N; i++)
        buf[i] = rank * N + i;

    hid_t f  = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hid_t fs = H5Screate_simple(1, &dims, NULL), ms = H5Screate_simple(1, &count, NULL);
    hid_t d  = H5Dcreate2(f, "x", H5T_IEEE_F64LE, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);

    setenv("TAGG_FAULT", "aggregator_write:rank=2", 1);
    herr_t rc;
    H5E_BEGIN_TRY { rc = H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl, buf); }
    H5E_END_TRY
    ok &= expect_failure(rc, rank, "H5Dwrite", "injected by TAGG_FAULT", "failed on rank 2");
    cases++;
    unsetenv("TAGG_FAULT");
    /* the same call without the fault works, so nothing was left half-done */
    if (H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl, buf) < 0) {
        fprintf(stderr, "rank %d: H5Dwrite after the fault failed\n", rank);
        ok = 0;
    }
    cases++;
    setenv("TAGG_FAULT", "aggregator_read:rank=2", 1);
    double *back = calloc(N, sizeof *back);
    H5E_BEGIN_TRY { rc = H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl, back); }
    H5E_END_TRY
    ok &= expect_failure(rc, rank, "H5Dread", "injected by TAGG_FAULT", "failed on rank 2");
    cases++;
    unsetenv("TAGG_FAULT");
    if (H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl, back) < 0 || memcmp(back, buf, N * sizeof *buf)) {
        fprintf(stderr, "rank %d: read-back after the fault failed or differs\n", rank);
        ok = 0;
    }
    cases++;
    /* a later round: reads are not throttled, so its file access runs on the
     * helper thread (overlap=1, engine_move.c), whose error text must still
     * reach rank 2's stack */
    setenv("TAGG_FAULT", "aggregator_read:rank=2:after=3", 1);
    H5E_BEGIN_TRY { rc = H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl, back); }
    H5E_END_TRY
    ok &= expect_failure(rc, rank, "H5Dread (a later round)", "injected by TAGG_FAULT", "failed on rank 2");
    cases++;
    unsetenv("TAGG_FAULT");
    H5Dclose(d), H5Sclose(fs), H5Sclose(ms);
    if (H5Fclose(f) < 0) {
        fprintf(stderr, "rank %d: H5Fclose failed\n", rank);
        ok = 0;
    }
    cases++;
    int all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%d passed, %d failed\n", all ? cases : 0, all ? 0 : cases);
    free(buf), free(back);
    H5Pclose(dxpl), H5Pclose(fapl);
    MPI_Finalize();
    return all ? 0 : 1;
}
