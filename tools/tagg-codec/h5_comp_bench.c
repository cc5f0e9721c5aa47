/* h5-comp-bench: write and read bandwidth of one HDF5 dataset of data shaped
 * like a seed kernel (data.h: hacc, s3d, random), for the compression
 * benchmark of issue 15 (tools/tagg-codec/comp-bench.sh).
 *
 *   mpiexec -n P h5-comp-bench FILE KIND MIB_PER_RANK mpio|default [fsync]
 *
 * Each rank fills MIB_PER_RANK MiB with KIND (seed: its rank) and writes it
 * collectively as its block of a 1D byte dataset (create + write + close,
 * timed, max over ranks), then reads it back collectively (open + read +
 * close, timed) and compares. "mpio" uses H5Pset_fapl_mpio (MPI-IO
 * collective); "default" leaves the driver to HDF5_DRIVER (tagg). With
 * "fsync" the write flushes the file to storage before closing (H5Fflush:
 * MPI_File_sync, or tagg's fsync of every file it wrote), inside the write
 * time, and rank 0 then drops the page cache (sync; 3 > drop_caches, untimed;
 * says so on stderr when not permitted) so that the read comes from storage.
 * Prints one line: "kind=K bytes=B write_s=T read_s=T bad=N" on rank 0. */
#include "data.h"
#include "drop_caches.h"

#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void drop_caches(void)
{
    char err[256];
    if (tagg_drop_caches("/proc/sys/vm/drop_caches", err, sizeof err) < 0)
        fprintf(stderr, "h5-comp-bench: could not drop the page cache (%s): reads may come from it\n", err);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int dosync = argc == 6 && !strcmp(argv[5], "fsync");
    if (argc != 5 && !dosync) {
        if (!rank)
            fprintf(stderr, "usage: %s FILE hacc|s3d|random MIB_PER_RANK mpio|default [fsync]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    size_t         n   = (size_t)atol(argv[3]) << 20;
    unsigned char *buf = malloc(n), *back = malloc(n);
    if (!buf || !back || tagg_data_fill(argv[2], buf, n, 1000 + (uint64_t)rank) < 0) {
        fprintf(stderr, "rank %d: bad kind or out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (!strcmp(argv[4], "mpio"))
        H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    hsize_t dim = (hsize_t)n * (hsize_t)size, start = (hsize_t)n * (hsize_t)rank, cnt = n;
    int     fail = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    hid_t  f  = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hid_t  fs = H5Screate_simple(1, &dim, NULL), ms = H5Screate_simple(1, &cnt, NULL);
    hid_t  ds = f < 0 ? -1 : H5Dcreate2(f, "data", H5T_NATIVE_UCHAR, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &cnt, NULL);
    if (ds < 0 || H5Dwrite(ds, H5T_NATIVE_UCHAR, ms, fs, dxpl, buf) < 0)
        fail = 1;
    H5Dclose(ds);
    if (dosync && f >= 0 && H5Fflush(f, H5F_SCOPE_GLOBAL) < 0)
        fail = 1;
    if (f < 0 || H5Fclose(f) < 0)
        fail = 1;
    double tw = MPI_Wtime() - t0, w, r;
    MPI_Barrier(MPI_COMM_WORLD);
    if (dosync && !rank)
        drop_caches();
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    f  = H5Fopen(argv[1], H5F_ACC_RDONLY, fapl);
    ds = f < 0 ? -1 : H5Dopen2(f, "data", H5P_DEFAULT);
    if (ds < 0 || H5Dread(ds, H5T_NATIVE_UCHAR, ms, fs, dxpl, back) < 0)
        fail = 1;
    H5Dclose(ds);
    if (f < 0 || H5Fclose(f) < 0)
        fail = 1;
    double tr = MPI_Wtime() - t0;
    long   bad = memcmp(buf, back, n) != 0 || fail, allbad;
    MPI_Reduce(&tw, &w, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&tr, &r, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad, &allbad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (!rank)
        printf("kind=%s bytes=%llu write_s=%.4f read_s=%.4f bad=%ld\n", argv[2], (unsigned long long)dim, w, r, allbad);
    H5Sclose(fs), H5Sclose(ms), H5Pclose(fapl), H5Pclose(dxpl);
    free(buf), free(back);
    MPI_Finalize();
    return allbad ? 1 : 0;
}
