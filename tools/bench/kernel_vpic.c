/* vpic: h5bench's VPIC-IO write patterns (h5bench_write, MEM_PATTERN=CONTIG),
 * so that they run on every variant and are checked, without h5bench.
 *
 * Every rank owns --particles particles of 8 variables, x y z px py pz (float32),
 * id_1 (int32), id_2 (float32): 32 bytes; memory holds one array per variable
 * (h5bench's CONTIG memory pattern). Particles are placed in rank order.
 *   --layout soa  FILE_PATTERN=CONTIG: eight 1D datasets, one per variable,
 *                 written one after another;
 *   --layout aos  FILE_PATTERN=INTERLEAVED: one 1D compound dataset "particles"
 *                 of 32-byte records, written (and read) member by member, one
 *                 H5Dwrite per member with a one-member compound memory type, as
 *                 h5bench does (HDF5 then reads and rewrites the records around
 *                 each member).
 * With --timesteps N every timestep writes the same pattern into its group. */
#include "bench.h"

#include <stdio.h>
#include <string.h>

#define NVARS 8

static const char *const names[NVARS] = {"x", "y", "z", "px", "py", "pz", "id_1", "id_2"};

static hid_t native(int v)
{
    return v == 6 ? H5T_NATIVE_INT : H5T_NATIVE_FLOAT;
}

typedef struct {
    uint64_t n, off, total; /* particles: mine, before me, in the file */
} vpic_t;

static vpic_t state_;

static int setup(bench_ctx_t *ctx, char *err, size_t len)
{
    vpic_t *s  = &state_;
    s->n       = ctx->opts->particles;
    ctx->state = NULL;
    ctx->bytes = s->n * 4 * NVARS;
    bench_offsets(ctx->comm, s->n, &s->off, &s->total);
    if (bench_alloc_buffers(ctx, err, len) < 0)
        return -1;
    for (int v = 0; v < NVARS; v++)
        for (uint64_t i = 0; i < s->n; i++) {
            uint64_t g = s->off + i, r = bench_mix(ctx->opts->seed ^ (g * NVARS + (uint64_t)v));
            unsigned char *at = ctx->wbuf + ((uint64_t)v * s->n + i) * 4;
            if (v == 6) {
                int32_t id = (int32_t)(g & 0x7fffffff);
                memcpy(at, &id, 4);
            } else {
                float f = (float)(r >> 40) / 16777216.0f; /* exact: 24 bits */
                memcpy(at, &f, 4);
            }
        }
    return 0;
}

/* The file's 32-byte record, and the memory type of member v alone. */
static hid_t record_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, 4 * NVARS);
    for (int v = 0; t >= 0 && v < NVARS; v++)
        if (H5Tinsert(t, names[v], (size_t)v * 4, native(v)) < 0) {
            H5Tclose(t);
            return H5I_INVALID_HID;
        }
    return t;
}

static hid_t member_type(int v)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, 4);
    if (t >= 0 && H5Tinsert(t, names[v], 0, native(v)) < 0) {
        H5Tclose(t);
        return H5I_INVALID_HID;
    }
    return t;
}

/* The compound dataset, member by member. */
static int interleaved(bench_ctx_t *ctx, hid_t file, hid_t dxpl, int write, char *err, size_t len)
{
    const vpic_t *s = &state_;
    hsize_t       dims = s->total, start = s->off, count = s->n, mdims = s->n ? s->n : 1;
    hid_t         fs = H5Screate_simple(1, &dims, NULL), ms = H5Screate_simple(1, &mdims, NULL), d = H5I_INVALID_HID;
    hid_t         rec = record_type();
    int           rc  = -1;
    if (fs < 0 || ms < 0 || rec < 0)
        goto done;
    d = write ? H5Dcreate2(file, "particles", rec, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
              : H5Dopen2(file, "particles", H5P_DEFAULT);
    if (d < 0)
        goto done;
    if (s->n == 0 ? (H5Sselect_none(fs) < 0 || H5Sselect_none(ms) < 0)
                  : H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL) < 0)
        goto done;
    for (int v = 0; v < NVARS; v++) {
        hid_t  mt  = member_type(v);
        size_t at  = (size_t)v * (size_t)s->n * 4;
        herr_t hrc = mt < 0 ? -1
                     : write ? H5Dwrite(d, mt, ms, fs, dxpl, ctx->wbuf + at)
                             : H5Dread(d, mt, ms, fs, dxpl, ctx->rbuf + at);
        if (mt >= 0)
            H5Tclose(mt);
        if (hrc < 0)
            goto done;
    }
    rc = 0;
done:
    if (rec >= 0)
        H5Tclose(rec);
    return bench_h5_finish(rc, d, ms, fs, err, len);
}

static int io(bench_ctx_t *ctx, hid_t file, hid_t dxpl, int write, char *err, size_t len)
{
    const vpic_t *s = &state_;
    if (ctx->opts->layout == LAYOUT_AOS)
        return interleaved(ctx, file, dxpl, write, err, len);
    for (int v = 0; v < NVARS; v++) {
        size_t at = (size_t)v * (size_t)s->n * 4;
        int    rc = write ? bench_write_1d(file, names[v], native(v), s->total, s->off, s->n, dxpl, ctx->wbuf + at,
                                           err, len)
                          : bench_read_1d(file, names[v], native(v), s->off, s->n, dxpl, ctx->rbuf + at, err, len);
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
    snprintf(buf, len,
             "vpic (h5bench VPIC-IO, memory CONTIG) file pattern %s particles/rank=%llu record=32 bytes "
             "(x y z px py pz id_2: f32, id_1: i32)",
             ctx->opts->layout == LAYOUT_AOS ? "INTERLEAVED (one compound dataset, written member by member)"
                                             : "CONTIG (eight 1D datasets)",
             (unsigned long long)state_.n);
}

const bench_kernel_t bench_kernel_vpic = {
    "vpic",
    "h5bench's VPIC-IO write patterns, 8 variables (32 bytes); --particles N per rank, --layout soa (CONTIG: 8 "
    "datasets) | aos (INTERLEAVED: one compound, member by member), --timesteps",
    setup, write_, read_, describe,
};
