/* The fixed costs of a tagg file in synchronising MPI calls, per HDF5 call.
 * An ordinary MPI-IO HDF5 program (run through the tagg VOL connector by
 * sync_calls.sh, with libtagg-mpicount preloaded, which attributes every
 * collective to the HDF5 call and the library that made it): H5Fcreate of a
 * new file, then of the same file again (HDF5 probes an existing file first),
 * the demo's column-block pattern written three times with the same selection
 * (the first write makes the engine's resources, the later ones reuse the
 * plan), H5Fclose, H5Fopen read-only, two reads, H5Fclose. With "direct",
 * the same calls on one contiguous block per rank (1 MiB rows of the field),
 * which the cost model sends direct: every call of a shape seen before is
 * accessed before its plan (speculative direct access). Exits 1 when the data
 * read back differs.
 *   mpiexec -n N sync_calls DIR [direct] */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COLS 256
#define ROWS 64 /* per rank */

static int write_file(const char *path, hid_t fapl, hid_t dxpl, double *buf, hsize_t *dims, hsize_t *start,
                      hsize_t *count, int writes)
{
    int   bad = 0;
    hid_t f   = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (f < 0)
        return 1;
    hid_t fs = H5Screate_simple(2, dims, NULL), ms = H5Screate_simple(2, count, NULL);
    hid_t d  = H5Dcreate2(f, "field", H5T_IEEE_F64LE, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    for (int w = 0; w < writes; w++)
        bad += H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl, buf) < 0;
    H5Dclose(d), H5Sclose(ms), H5Sclose(fs);
    bad += H5Fclose(f) < 0;
    return bad;
}

int main(int argc, char **argv)
{
    int rank, size, bad = 0, allbad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: sync_calls DIR [direct]\n");
        MPI_Finalize();
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/sync_calls.h5", argv[1]);
    if (rank == 0)
        remove(path);
    MPI_Barrier(MPI_COMM_WORLD);
    int     direct = argc > 2 && !strcmp(argv[2], "direct");
    long    ncols = COLS / size, c0 = rank * ncols, nrows = (long)ROWS * size, n = nrows * ncols;
    hsize_t dims[2] = {(hsize_t)nrows, COLS}, start[2] = {0, (hsize_t)c0}, count[2] = {(hsize_t)nrows, (hsize_t)ncols};
    if (direct) { /* rank r: rows [r x ROWS, (r + 1) x ROWS) whole, one run of ROWS x COLS doubles */
        ncols = COLS, c0 = 0, n = (long)ROWS * COLS;
        start[0] = (hsize_t)rank * ROWS, start[1] = 0, count[0] = ROWS, count[1] = COLS;
    }
    double *buf = malloc(sizeof(double) * (size_t)n);
    for (long i = 0; i < n; i++)
        buf[i] = (double)(((long)start[0] + i / ncols) * COLS + c0 + i % ncols);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);

    bad += write_file(path, fapl, dxpl, buf, dims, start, count, 1); /* a new file */
    bad += write_file(path, fapl, dxpl, buf, dims, start, count, 3); /* over an existing one */

    for (long i = 0; i < n; i++)
        buf[i] = -1;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    hid_t d = H5Dopen2(f, "field", H5P_DEFAULT);
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(2, count, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    for (int r = 0; r < 2; r++)
        bad += H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl, buf) < 0;
    for (long i = 0; i < n; i++)
        bad += buf[i] != (double)(((long)start[0] + i / ncols) * COLS + c0 + i % ncols);
    H5Sclose(ms), H5Sclose(fs), H5Dclose(d);
    bad += H5Fclose(f) < 0;
    MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("sync_calls: %d ranks, %s\n", size, allbad ? "DATA MISMATCH or failed call" : "data verified");
    H5Pclose(dxpl), H5Pclose(fapl), free(buf);
    MPI_Finalize();
    return allbad ? 1 : 0;
}
