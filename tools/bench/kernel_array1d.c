/* array1d: the 1D-array benchmark of MA-TAPIOCA (seeds/002, section 4.2).
 *
 * Each rank owns one contiguous block of a 1D byte dataset "array"; blocks are
 * placed in rank order. The block size per rank follows --dist:
 *   uniform  every rank --size bytes (the paper: 25K integers, 100 KB)
 *   random   uniform in [0, --size] bytes (the paper: 0-100 KB)
 *   normal   N(--mean, --sd) bytes, clipped at 0
 * Sizes are a function of --seed and the world rank only, so every variant and
 * every repetition moves the same data ("distributions preserved between
 * experiments", as in the paper). Sizes are in bytes, so blocks start and end at
 * arbitrary, unaligned offsets. */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    uint64_t off, total, min, max;
} array1d_t;

static array1d_t state_;

/* Uniform in [0, 1) from 53 bits of the mix. */
static double unit(uint64_t x)
{
    return (double)(bench_mix(x) >> 11) * (1.0 / 9007199254740992.0);
}

static uint64_t block_size(const bench_opts_t *o, int wrank)
{
    uint64_t key = o->seed * 0x100000001b3ULL + (uint64_t)wrank;
    switch (o->dist) {
    case DIST_RANDOM:
        return (uint64_t)(unit(key) * (double)(o->size + 1));
    case DIST_NORMAL: {
        double u1 = unit(key ^ 0x5bd1e995ULL), u2 = unit(key ^ 0x2545f4914f6cdd1dULL);
        double z  = sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2); /* Box-Muller */
        double v  = o->mean + o->sd * z;
        return v <= 0 ? 0 : (uint64_t)llround(v);
    }
    case DIST_UNIFORM:
    default:
        return o->size;
    }
}

static int setup(bench_ctx_t *ctx, char *err, size_t len)
{
    array1d_t *s = &state_;
    ctx->state   = NULL; /* static: nothing for the driver to free */
    ctx->bytes   = block_size(ctx->opts, ctx->wrank);
    bench_offsets(ctx->comm, ctx->bytes, &s->off, &s->total);
    MPI_Allreduce(&ctx->bytes, &s->min, 1, MPI_UINT64_T, MPI_MIN, ctx->comm);
    MPI_Allreduce(&ctx->bytes, &s->max, 1, MPI_UINT64_T, MPI_MAX, ctx->comm);
    if (bench_alloc_buffers(ctx, err, len) < 0)
        return -1;
    /* Byte g of the file: byte (g mod 8) of mix(seed, g / 8). */
    for (uint64_t i = 0; i < ctx->bytes; i++) {
        uint64_t g    = s->off + i;
        ctx->wbuf[i] = (unsigned char)(bench_mix(ctx->opts->seed ^ (g >> 3)) >> ((g & 7) * 8));
    }
    return 0;
}

static int write_(bench_ctx_t *ctx, hid_t file, hid_t dxpl, char *err, size_t len)
{
    return bench_write_1d(file, "array", H5T_NATIVE_UCHAR, state_.total, state_.off, ctx->bytes, dxpl, ctx->wbuf,
                          err, len);
}

static int read_(bench_ctx_t *ctx, hid_t file, hid_t dxpl, char *err, size_t len)
{
    return bench_read_1d(file, "array", H5T_NATIVE_UCHAR, state_.off, ctx->bytes, dxpl, ctx->rbuf, err, len);
}

static void describe(const bench_ctx_t *ctx, char *buf, size_t len)
{
    static const char *const dists[] = {"uniform", "random", "normal"};
    const bench_opts_t      *o       = ctx->opts;
    int                      n       = snprintf(buf, len, "array1d dist=%s ", dists[o->dist]);
    if (o->dist == DIST_NORMAL)
        n += snprintf(buf + n, len - (size_t)n, "mean=%.0f sd=%.0f", o->mean, o->sd);
    else
        n += snprintf(buf + n, len - (size_t)n, "size=%llu", (unsigned long long)o->size);
    snprintf(buf + n, len - (size_t)n, " seed=%llu: block per rank %llu..%llu bytes (file of rank 0)",
             (unsigned long long)o->seed, (unsigned long long)state_.min, (unsigned long long)state_.max);
}

const bench_kernel_t bench_kernel_array1d = {
    "array1d",
    "1D byte array, one block per rank; --dist uniform|random|normal, --size, --mean, --sd, --seed",
    setup, write_, read_, describe,
};
