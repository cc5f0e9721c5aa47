/* tagg-demo: an ordinary parallel HDF5 program, written the way applications
 * are (H5Pset_fapl_mpio, collective H5Dwrite), with nothing tagg-specific in it.
 * Run it with the tagg VOL connector in the environment and the data goes
 * through tagg; the summary line tagg prints at close says so.
 *
 * The 2D field is decomposed by columns, as a code with a 1D decomposition of
 * its second dimension does: every rank owns a block of columns of every row,
 * so in the file its data is a strided set of short pieces, interleaved with
 * the other ranks' (the pattern aggregation is for).
 *
 *   mpiexec -n 4 tagg-demo [FILE] [ROWS_PER_RANK]   (the field has ROWS_PER_RANK x ranks rows)
 * Exits 0 when every rank read back exactly what was written. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define COLS 1024

int main(int argc, char **argv)
{
    int rank, size, bad = 0, allbad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *path = argc > 1 ? argv[1] : "tagg-demo.h5";
    long        rows = argc > 2 ? strtol(argv[2], NULL, 10) : 256;
    if (rows <= 0) {
        if (rank == 0)
            fprintf(stderr, "tagg-demo: ROWS_PER_RANK must be a positive number\n");
        MPI_Finalize();
        return 2;
    }
    long    ncols = COLS / size + (rank < COLS % size), c0 = rank * (COLS / size) + (rank < COLS % size ? rank : COLS % size);
    long    nrows = rows * size, n = nrows * ncols;
    hsize_t dims[2] = {(hsize_t)nrows, COLS}, start[2] = {0, (hsize_t)c0}, count[2] = {(hsize_t)nrows, (hsize_t)ncols};
    double *buf = malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (long i = 0; i < n; i++) /* element (r, c0 + j) holds r * COLS + c0 + j */
        buf[i] = (double)((i / (ncols ? ncols : 1)) * COLS + c0 + i % (ncols ? ncols : 1));

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);

    double t0 = MPI_Wtime();
    hid_t  f  = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (f < 0) {
        MPI_Abort(MPI_COMM_WORLD, 1); /* the demo has nothing sensible left to do */
    }
    hid_t fs = H5Screate_simple(2, dims, NULL);
    hid_t d  = H5Dcreate2(f, "temperature", H5T_IEEE_F64LE, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t ms = H5Screate_simple(2, count, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    if (H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl, buf) < 0)
        bad++;
    H5Dclose(d), H5Fclose(f);
    double t1 = MPI_Wtime();

    for (long i = 0; i < n; i++)
        buf[i] = -1;
    f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    d = H5Dopen2(f, "temperature", H5P_DEFAULT);
    if (H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl, buf) < 0)
        bad++;
    for (long i = 0; i < n; i++)
        if (buf[i] != (double)((i / ncols) * COLS + c0 + i % ncols))
            bad++;
    H5Dclose(d), H5Fclose(f);
    double t2 = MPI_Wtime();

    MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("tagg-demo: %d ranks wrote and read %.1f MiB in %s: write %.3f s, read %.3f s, %s\n", size,
               (double)dims[0] * COLS * 8 / 1048576.0, path, t1 - t0, t2 - t1,
               allbad ? "DATA MISMATCH" : "data verified");
    H5Sclose(ms), H5Sclose(fs), H5Pclose(dxpl), H5Pclose(fapl), free(buf);
    MPI_Finalize();
    return allbad ? 1 : 0;
}
