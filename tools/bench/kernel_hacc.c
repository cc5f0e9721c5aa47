/* hacc: the HACC-IO kernel (seeds/000 and seeds/002, section 4.4).
 *
 * Every rank owns --particles particles; a particle is 9 variables: position
 * x, y, z, velocity vx, vy, vz, potential phi (float32), particle id pid (int64)
 * and a state mask (uint16): 38 bytes, as in HACC-IO. Particles are placed in rank
 * order.
 *   --layout aos  one compound dataset "particles" of 38-byte records (the paper's
 *                 array-of-structures layout); memory holds the same packed records,
 *                 so HDF5 does no type conversion;
 *   --layout soa  nine 1D datasets, one per variable, written one after another.
 * pid is the particle's global index; the other variables are derived from it. */
#include "bench.h"

#include <stdio.h>
#include <string.h>

#define NVARS 9

static const struct {
    const char *name;
    size_t      size;
} vars[NVARS] = {{"x", 4},  {"y", 4},   {"z", 4},   {"vx", 4},  {"vy", 4},
                 {"vz", 4}, {"phi", 4}, {"pid", 8}, {"mask", 2}};

static hid_t native(int v) /* the memory type of variable v */
{
    return v < 7 ? H5T_NATIVE_FLOAT : v == 7 ? H5T_NATIVE_INT64 : H5T_NATIVE_UINT16;
}

typedef struct {
    uint64_t n, off, total; /* particles: mine, before me, in the file */
    size_t   record;        /* 38 */
    size_t   field_off[NVARS];
} hacc_t;

static hacc_t state_;

/* The value of variable v of particle g, as its bytes. */
static void value(uint64_t seed, uint64_t g, int v, unsigned char *out)
{
    uint64_t r = bench_mix(seed ^ (g * NVARS + (uint64_t)v));
    if (v < 7) {
        float f = (float)(r >> 40) / 16777216.0f; /* exact: 24 bits */
        if (v < 3)
            f *= 256.0f; /* positions in a 256^3 box */
        memcpy(out, &f, 4);
    } else if (v == 7) {
        int64_t pid = (int64_t)g;
        memcpy(out, &pid, 8);
    } else {
        uint16_t m = (uint16_t)r;
        memcpy(out, &m, 2);
    }
}

/* Where variable v of local particle i lives in the buffers. */
static size_t where(const hacc_t *s, const bench_opts_t *o, uint64_t i, int v)
{
    if (o->layout == LAYOUT_AOS)
        return (size_t)i * s->record + s->field_off[v];
    size_t before = 0; /* soa: nine arrays back to back */
    for (int k = 0; k < v; k++)
        before += vars[k].size * (size_t)s->n;
    return before + (size_t)i * vars[v].size;
}

static int setup(bench_ctx_t *ctx, char *err, size_t len)
{
    hacc_t *s = &state_;
    s->record = 0;
    for (int v = 0; v < NVARS; v++)
        s->field_off[v] = s->record, s->record += vars[v].size;
    s->n       = ctx->opts->particles;
    ctx->bytes = s->n * s->record;
    bench_offsets(ctx->comm, s->n, &s->off, &s->total);
    if (bench_alloc_buffers(ctx, err, len) < 0)
        return -1;
    for (uint64_t i = 0; i < s->n; i++)
        for (int v = 0; v < NVARS; v++)
            value(ctx->opts->seed, s->off + i, v, ctx->wbuf + where(s, ctx->opts, i, v));
    return 0;
}

/* The packed 38-byte compound, for file and memory alike. */
static hid_t record_type(const hacc_t *s)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, s->record);
    for (int v = 0; t >= 0 && v < NVARS; v++)
        if (H5Tinsert(t, vars[v].name, s->field_off[v], native(v)) < 0) {
            H5Tclose(t);
            return H5I_INVALID_HID;
        }
    return t;
}

static int io(bench_ctx_t *ctx, hid_t file, hid_t dxpl, int write, char *err, size_t len)
{
    const hacc_t *s = &state_;
    if (ctx->opts->layout == LAYOUT_AOS) {
        hid_t t = record_type(s);
        if (t < 0) {
            bench_h5_reason(err, len);
            return -1;
        }
        int rc = write ? bench_write_1d(file, "particles", t, s->total, s->off, s->n, dxpl, ctx->wbuf, err, len)
                       : bench_read_1d(file, "particles", t, s->off, s->n, dxpl, ctx->rbuf, err, len);
        H5Tclose(t);
        return rc;
    }
    for (int v = 0; v < NVARS; v++) {
        size_t at = where(s, ctx->opts, 0, v);
        int    rc = write ? bench_write_1d(file, vars[v].name, native(v), s->total, s->off, s->n, dxpl,
                                           ctx->wbuf + at, err, len)
                          : bench_read_1d(file, vars[v].name, native(v), s->off, s->n, dxpl, ctx->rbuf + at, err,
                                          len);
        if (rc < 0)
            return -1;
    }
    return 0;
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
    snprintf(buf, len, "hacc layout=%s particles/rank=%llu record=%zu bytes (x y z vx vy vz phi: f32, pid: i64, "
                       "mask: u16)",
             ctx->opts->layout == LAYOUT_AOS ? "aos" : "soa", (unsigned long long)state_.n, state_.record);
}

const bench_kernel_t bench_kernel_hacc = {
    "hacc",
    "HACC-IO particles, 9 variables (38 bytes); --particles N per rank, --layout aos|soa, --files shared|per-node",
    setup, write_, read_, describe,
};
