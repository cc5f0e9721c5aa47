/* columns: the 2D column-block pattern of the demo (tools/demo/tagg_demo.c).
 *
 * A 2D float64 dataset "field" of (--rows x ranks) rows and --cols columns is
 * decomposed by columns, as a code with a 1D decomposition of its second
 * dimension does: every rank owns a block of about cols/ranks columns of every
 * row. In the file its data is one short piece per row (cols/ranks x 8 bytes:
 * 4 KiB at 2 ranks and the default 1024 columns), interleaved with the other
 * ranks' pieces: many small pieces per rank, the pattern two-phase aggregation
 * is for. One collective hyperslab per rank, written and read back. */
#include "bench.h"

#include <stdio.h>

typedef struct {
    hsize_t dims[2], start[2], count[2];
} columns_t;

static columns_t state_;

static int setup(bench_ctx_t *ctx, char *err, size_t len)
{
    columns_t          *s = &state_;
    const bench_opts_t *o = ctx->opts;
    uint64_t            size = (uint64_t)ctx->size, rank = (uint64_t)ctx->rank;
    uint64_t            base = o->cols / size, extra = o->cols % size;
    s->dims[0]  = (hsize_t)(o->rows * size);
    s->dims[1]  = (hsize_t)o->cols;
    s->start[0] = 0;
    s->start[1] = (hsize_t)(rank * base + (rank < extra ? rank : extra));
    s->count[0] = s->dims[0];
    s->count[1] = (hsize_t)(base + (rank < extra));
    ctx->state  = NULL; /* static: nothing for the driver to free */
    ctx->bytes  = 8 * (uint64_t)s->count[0] * s->count[1];
    if (bench_alloc_buffers(ctx, err, len) < 0)
        return -1;
    /* Element (r, c) holds r * cols + c plus a seed-dependent offset: any
     * misplaced piece reads back as a different value. */
    double  *w   = (double *)(void *)ctx->wbuf;
    uint64_t off = bench_mix(o->seed) >> 40, i = 0;
    for (hsize_t r = 0; r < s->count[0]; r++)
        for (hsize_t c = 0; c < s->count[1]; c++)
            w[i++] = (double)(r * s->dims[1] + s->start[1] + c + off);
    return 0;
}

static int io(bench_ctx_t *ctx, hid_t file, hid_t dxpl, int write, char *err, size_t len)
{
    columns_t *s  = &state_;
    hsize_t    mdims[2] = {s->count[0], s->count[1] ? s->count[1] : 1};
    hid_t      fs = H5Screate_simple(2, s->dims, NULL), ms = H5Screate_simple(2, mdims, NULL), d;
    int        rc = -1;
    if (write)
        d = H5Dcreate2(file, "field", H5T_IEEE_F64LE, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    else
        d = H5Dopen2(file, "field", H5P_DEFAULT);
    if (fs < 0 || ms < 0 || d < 0)
        goto done;
    if (s->count[1] == 0) { /* more ranks than columns: this rank takes part with nothing */
        if (H5Sselect_none(fs) < 0 || H5Sselect_none(ms) < 0)
            goto done;
    } else if (H5Sselect_hyperslab(fs, H5S_SELECT_SET, s->start, NULL, s->count, NULL) < 0) {
        goto done;
    }
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
    const columns_t *s = &state_;
    (void)ctx;
    snprintf(buf, len,
             "columns dataset [rows][cols]=[%llu][%llu] float64, column blocks of %llu..%llu columns per rank: "
             "one piece of ~%llu bytes per row and rank",
             (unsigned long long)s->dims[0], (unsigned long long)s->dims[1],
             (unsigned long long)(s->dims[1] / (hsize_t)ctx->size),
             (unsigned long long)((s->dims[1] + (hsize_t)ctx->size - 1) / (hsize_t)ctx->size),
             (unsigned long long)(8 * (s->dims[1] / (hsize_t)ctx->size)));
}

const bench_kernel_t bench_kernel_columns = {
    "columns",
    "2D float64 field decomposed by column blocks (the demo's pattern: one small piece per row and rank); "
    "--rows per rank, --cols",
    setup, write_, read_, describe,
};
