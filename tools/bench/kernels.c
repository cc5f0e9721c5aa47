/* tagg-bench kernels: the table, and the 1D hyperslab helpers they share. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>

const bench_kernel_t *const bench_kernels[] = {&bench_kernel_array1d, &bench_kernel_hacc, &bench_kernel_s3d,
                                               &bench_kernel_columns, &bench_kernel_vpic, NULL};

void bench_offsets(MPI_Comm comm, uint64_t mine, uint64_t *off, uint64_t *total)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    *off = 0;
    MPI_Exscan(&mine, off, 1, MPI_UINT64_T, MPI_SUM, comm);
    if (rank == 0) /* MPI_Exscan leaves rank 0's result undefined */
        *off = 0;
    MPI_Allreduce(&mine, total, 1, MPI_UINT64_T, MPI_SUM, comm);
}

int bench_alloc_buffers(bench_ctx_t *ctx, char *err, size_t len)
{
    size_t n  = ctx->bytes ? (size_t)ctx->bytes : 1;
    ctx->wbuf = malloc(n);
    ctx->rbuf = malloc(n);
    if (!ctx->wbuf || !ctx->rbuf) {
        snprintf(err, len, "out of memory allocating 2 x %llu bytes", (unsigned long long)n);
        return -1;
    }
    return 0;
}

/* File and memory spaces for [off, off + count) of a 1D dataset. */
static int spaces(hid_t dset_space, uint64_t off, uint64_t count, hid_t *mem)
{
    hsize_t start = off, n = count;
    *mem          = H5Screate_simple(1, &n, NULL);
    if (*mem < 0)
        return -1;
    if (count == 0)
        return H5Sselect_none(dset_space) < 0 || H5Sselect_none(*mem) < 0 ? -1 : 0;
    return H5Sselect_hyperslab(dset_space, H5S_SELECT_SET, &start, NULL, &n, NULL) < 0 ? -1 : 0;
}

int bench_write_1d(hid_t file, const char *name, hid_t type, uint64_t total, uint64_t off, uint64_t count,
                   hid_t dxpl, const void *buf, char *err, size_t len)
{
    hsize_t dims = total;
    hid_t   fs = H5Screate_simple(1, &dims, NULL), ms = H5I_INVALID_HID, d = H5I_INVALID_HID;
    int     rc = -1;
    if (fs < 0)
        goto done;
    if ((d = H5Dcreate2(file, name, type, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0)
        goto done;
    if (spaces(fs, off, count, &ms) < 0 || H5Dwrite(d, type, ms, fs, dxpl, buf) < 0)
        goto done;
    rc = 0;
done:
    return bench_h5_finish(rc, d, ms, fs, err, len);
}

int bench_read_1d(hid_t file, const char *name, hid_t type, uint64_t off, uint64_t count, hid_t dxpl, void *buf,
                  char *err, size_t len)
{
    hid_t d = H5Dopen2(file, name, H5P_DEFAULT), fs = H5I_INVALID_HID, ms = H5I_INVALID_HID;
    int   rc = -1;
    if (d < 0 || (fs = H5Dget_space(d)) < 0)
        goto done;
    if (spaces(fs, off, count, &ms) < 0 || H5Dread(d, type, ms, fs, dxpl, buf) < 0)
        goto done;
    rc = 0;
done:
    if (rc < 0)
        bench_h5_reason(err, len);
    if (ms >= 0)
        H5Sclose(ms);
    if (fs >= 0)
        H5Sclose(fs);
    if (d >= 0)
        H5Dclose(d);
    return rc;
}
