/* s3d: the S3D-IO kernel (seeds/002, section 4.3).
 *
 * A 3D domain is decomposed in blocks over the ranks (process grid from
 * MPI_Dims_create); each rank owns --grid NX NY NZ points and --vars values per
 * point (default 11, the chemical species of S3D-IO's main array). The state of a
 * point is stored as a structure (the paper: "array of structure data layout"):
 * one shared file, one 4D dataset "state" of float64 with C-order dimensions
 * [Z][Y][X][vars], written and read with one collective hyperslab per rank. In
 * the file, each rank's block is NZ*NY runs of NX*vars values: a strided,
 * non-contiguous pattern, which is what makes S3D-IO a test of aggregation. */
#include "bench.h"

#include <stdio.h>

typedef struct {
    int     pdims[3];          /* process grid, C order: Z, Y, X */
    hsize_t gdims[4];          /* dataset */
    hsize_t start[4], count[4]; /* this rank's block */
} s3d_t;

static s3d_t state_;

static int setup(bench_ctx_t *ctx, char *err, size_t len)
{
    s3d_t              *s = &state_;
    const bench_opts_t *o = ctx->opts;
    s->pdims[0] = s->pdims[1] = s->pdims[2] = 0;
    MPI_Dims_create(ctx->size, 3, s->pdims);
    int      coord[3] = {ctx->rank / (s->pdims[1] * s->pdims[2]), (ctx->rank / s->pdims[2]) % s->pdims[1],
                         ctx->rank % s->pdims[2]};
    uint64_t local[3] = {o->grid[2], o->grid[1], o->grid[0]}; /* NZ, NY, NX */
    for (int d = 0; d < 3; d++) {
        s->gdims[d] = (hsize_t)s->pdims[d] * local[d];
        s->start[d] = (hsize_t)coord[d] * local[d];
        s->count[d] = local[d];
    }
    s->gdims[3] = s->count[3] = (hsize_t)o->vars;
    s->start[3]               = 0;
    ctx->bytes = 8 * s->count[0] * s->count[1] * s->count[2] * s->count[3];
    if (bench_alloc_buffers(ctx, err, len) < 0)
        return -1;
    /* Value: the element's global linear index, plus a seed-dependent offset. */
    double  *w    = (double *)(void *)ctx->wbuf;
    uint64_t base = bench_mix(o->seed) >> 40, i = 0;
    for (hsize_t z = 0; z < s->count[0]; z++)
        for (hsize_t y = 0; y < s->count[1]; y++)
            for (hsize_t x = 0; x < s->count[2]; x++)
                for (hsize_t v = 0; v < s->count[3]; v++) {
                    uint64_t g = (((s->start[0] + z) * s->gdims[1] + s->start[1] + y) * s->gdims[2] + s->start[2] +
                                  x) * s->gdims[3] + v;
                    w[i++]     = (double)(g + base);
                }
    return 0;
}

static int io(bench_ctx_t *ctx, hid_t file, hid_t dxpl, int write, char *err, size_t len)
{
    s3d_t *s  = &state_;
    hid_t  fs = H5Screate_simple(4, s->gdims, NULL), ms = H5Screate_simple(4, s->count, NULL), d;
    int    rc = -1;
    if (write)
        d = H5Dcreate2(file, "state", H5T_IEEE_F64LE, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    else
        d = H5Dopen2(file, "state", H5P_DEFAULT);
    if (fs < 0 || ms < 0 || d < 0)
        goto done;
    if (H5Sselect_hyperslab(fs, H5S_SELECT_SET, s->start, NULL, s->count, NULL) < 0)
        goto done;
    if ((write ? H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl, ctx->wbuf)
               : H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl, ctx->rbuf)) < 0)
        goto done;
    rc = 0;
done:
    return bench_h5_finish(rc, d, ms, fs, err, len);
}

static int write_(bench_ctx_t *ctx, hid_t file, hid_t dxpl, char *err, size_t len)
{
    return io(ctx, file, dxpl, 1, err, len);
}

static int read_(bench_ctx_t *ctx, hid_t file, hid_t dxpl, char *err, size_t len)
{
    return io(ctx, file, dxpl, 0, err, len);
}

static void describe(const bench_ctx_t *ctx, char *buf, size_t len)
{
    const s3d_t *s = &state_;
    (void)ctx;
    snprintf(buf, len, "s3d grid/rank=%llux%llux%llu vars=%llu process grid=%dx%dx%d dataset [Z][Y][X][vars]=[%llu][%llu][%llu][%llu] float64",
             (unsigned long long)s->count[2], (unsigned long long)s->count[1], (unsigned long long)s->count[0],
             (unsigned long long)s->count[3], s->pdims[2], s->pdims[1], s->pdims[0],
             (unsigned long long)s->gdims[0], (unsigned long long)s->gdims[1], (unsigned long long)s->gdims[2],
             (unsigned long long)s->gdims[3]);
}

const bench_kernel_t bench_kernel_s3d = {
    "s3d",
    "S3D-IO 4D array [Z][Y][X][vars], 3D block decomposition; --grid NX NY NZ per rank, --vars",
    setup, write_, read_, describe,
};
