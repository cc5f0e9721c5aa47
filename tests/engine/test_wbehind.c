/* Write-behind (core/src/wbehind.h), byte for byte against a reference image.
 *
 *   test_wbehind CONFIG DIR SEED     random operations, then the file checked
 *   test_wbehind fault DIR           failed write-outs (TAGG_FAULT=wb_flush, set here;
 *                                    needs a build with fault injection)
 *
 * Random mode: rank q owns bytes [q R, (q+1) R) of the file. OPS steps, the
 * kind of each drawn from a generator all ranks share, its ranges and bytes
 * from rank q's own generator, which every rank also runs for the others so
 * that each holds the image of the whole file:
 *   rewrite   read a range of its own (checked), write back 1-3 pieces inside
 *             it (some reaching past it: those go through, after what is kept);
 *   write     pieces anywhere in its own region, no read before (go through);
 *   read      a range of its own, checked (what it kept overlays the store);
 *   metadata  an independent metadata write into its own region;
 *   coll-w    a collective write of pieces of its own region;
 *   coll-r    a collective read of the next rank's region, checked (what that
 *             rank kept must have reached the store before);
 *   sync, size  tagg_file_sync, tagg_file_set_size (shorter or longer);
 *   coll-rewrite  a collective read of a range of its own, a collective write
 *             of pieces inside it (some reaching past: then no rank keeps it),
 *             then (a third each) nothing, the whole range read again
 *             collectively, or the pieces written (from memory when every
 *             rank kept its rewrite);
 *   handoff   a plain write into its own region, a barrier, and the previous
 *             rank reads those pieces independently (a write that is not a
 *             rewrite must not be kept: HDF5's fill-then-barrier relies on it).
 * After close, the file is opened again read-only and every rank reads and
 * checks all of it. With write_behind > 0 the summary must show kept writes
 * and reads served from them (so the feature was exercised, not bypassed).
 * Prints "N passed, M failed"; exits non-zero on any failure. */
#include "config.h"
#include "error.h"
#include "io.h"
#include "mpi_check.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define R (48 * 1024)
#define OPS 400
#define MAXLEN 9000

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}
static uint64_t below(uint64_t *s, uint64_t n) { return next(s) % n; }

typedef struct {
    uint64_t off, len;
} range_t;

/* One rank's draw for a step: up to 3 pieces, and the read range of a rewrite. */
typedef struct {
    range_t read, piece[3];
    int     npieces;
} draw_t;

/* Up to 3 pieces in [lo, hi), each in its own third: disjoint and in file
 * order, as HDF5 hands a request to the driver (the layer sorts a request by
 * offset, so overlapping pieces of ONE request have no program order). */
static void draw_pieces(uint64_t *g, uint64_t lo, uint64_t hi, draw_t *d)
{
    d->npieces       = 1 + (int)below(g, 3);
    uint64_t part    = (hi - lo) / (uint64_t)d->npieces;
    for (int p = 0; p < d->npieces; p++) {
        uint64_t plo = lo + (uint64_t)p * part, room = part < MAXLEN / 3 ? part : MAXLEN / 3;
        uint64_t len = 1 + below(g, room);
        d->piece[p].off = plo + below(g, part - len + 1);
        d->piece[p].len = len;
    }
}

/* Rank q's ranges for a step of this kind (the same on every rank). */
static void draw(uint64_t *g, int kind, int q, draw_t *d)
{
    uint64_t base = (uint64_t)q * R;
    memset(d, 0, sizeof *d);
    uint64_t len = 3 + below(g, MAXLEN - 2), off = base + below(g, R - len + 1);
    d->read = (range_t){off, len};
    if (kind == 0 || kind == 9) { /* rewrite: pieces inside the read range, one in 8 reaching past it */
        draw_pieces(g, off, off + len, d);
        range_t *last = &d->piece[d->npieces - 1];
        if (below(g, 8) == 0 && off + len + 100 <= base + R)
            last->len = off + len + 100 - last->off;
    }
    else
        draw_pieces(g, base, base + R, d);
}

static unsigned char *image; /* the whole file as it must be */
static uint64_t       image_size;

static void fill(uint64_t *g, unsigned char *mem, uint64_t len)
{
    for (uint64_t k = 0; k < len; k++)
        mem[k] = (unsigned char)(next(g) >> 24);
}

static int compare(const unsigned char *got, uint64_t off, uint64_t len, const char *what, int step)
{
    for (uint64_t k = 0; k < len; k++)
        if (got[k] != (off + k < image_size ? image[off + k] : 0)) {
            fprintf(stderr, "rank %d step %d %s: byte %llu is %u, want %u\n", rank, step, what,
                    (unsigned long long)(off + k), got[k], off + k < image_size ? image[off + k] : 0);
            return 0;
        }
    return 1;
}

/* Reads [off, off + len) into buf (collectively or not) and compares it with
 * the image; 1 when equal. */
static int read_check(tagg_file_t *f, uint64_t off, uint64_t len, int coll, unsigned char *buf, const char *what,
                      int step)
{
    tagg_extents_t rx;
    tagg_extents_init(&rx);
    tagg_extents_push(&rx, off, len, buf);
    int ok = tagg_io_read(f, &rx, TAGG_RAW, coll) == 0 && compare(buf, off, len, what, step);
    tagg_extents_free(&rx);
    return ok;
}

static int random_mode(const char *cfgtext, const char *dir, uint64_t seed)
{
    char path[4096], sum[4096], full[8192];
    /* one file per test (the seed): the tests of one rank count may run at once */
    snprintf(path, sizeof path, "%s/wbehind-%d-%llu.bin", dir, nranks, (unsigned long long)seed);
    snprintf(sum, sizeof sum, "%s/wbehind-%d-%llu.sum", dir, nranks, (unsigned long long)seed);
    with_summary(full, sizeof full, cfgtext, sum);
    tagg_config_t cfg;
    tagg_file_t  *f = open_file(path, full, TAGG_OPEN_RDWR | TAGG_OPEN_CREAT | TAGG_OPEN_TRUNC, &cfg);
    long          limit = (long)cfg.write_behind;
    image_size          = (uint64_t)nranks * R;
    image               = calloc(image_size, 1);
    uint64_t  shared = seed * 2654435761u + 1, *gen = malloc((size_t)nranks * sizeof *gen);
    for (int q = 0; q < nranks; q++)
        gen[q] = seed * 7919u + (uint64_t)q * 104729u + 17;
    unsigned char *mem = malloc(3 * MAXLEN + 200), *back = malloc(R > MAXLEN ? R : MAXLEN);
    tagg_extents_t x;
    tagg_extents_init(&x);
    int     ok = 1, counts[10] = {0}, handoffs = 0;
    range_t next_read = {0, 0};
    for (int step = 0; step < OPS && ok; step++) {
        uint64_t u = below(&shared, 100);
        int kind = u < 32 ? 0 : u < 40 ? 9 : u < 57 ? 1 : u < 69 ? 2 : u < 74 ? 3 : u < 82 ? 4 : u < 90 ? 5 : u < 93 ? 6
                 : u < 96 ? 7 : 8;
        int reread = (int)below(&shared, 3); /* kind 9 then: 0 nothing, 1 the whole range again, 2 the pieces written */
        draw_t  handed = {0};         /* kind 8: the next rank's plain write, read here after a barrier */
        range_t before = next_read;   /* the next rank's independent read, when it was its last call */
        next_read      = (range_t){0, 0};
        counts[kind]++;
        uint64_t grow = below(&shared, image_size / 2 + 4096);
        for (int q = 0; q < nranks; q++) {
            draw_t d;
            draw(&gen[q], kind, q, &d);
            if (kind == 8 && q == (rank + 1) % nranks)
                handed = d;
            if (kind == 2 || kind == 5 || kind == 6 || kind == 7)
                continue; /* no bytes change */
            /* the bytes of this step's pieces, from rank q's generator on every rank */
            unsigned char *m = mem;
            tagg_extents_reset(&x);
            if (q == rank && (kind == 0 || kind == 9)) { /* read first, checked against the image before the write */
                ok &= read_check(f, d.read.off, d.read.len, kind == 9, back,
                                 kind == 9 ? "collective rewrite's read" : "rewrite's read", step);
            }
            for (int p = 0; p < d.npieces; p++) {
                fill(&gen[q], m, d.piece[p].len);
                tagg_extents_push(&x, d.piece[p].off, d.piece[p].len, m);
                m += d.piece[p].len;
            }
            if (q == rank && kind != 4 && kind != 9) { /* 0: the rewrite; 1 and 8: plain; 3: metadata */
                if (tagg_io_write(f, &x, kind == 3 ? TAGG_META : TAGG_RAW, false) < 0)
                    ok = 0, fprintf(stderr, "rank %d step %d: write failed\n", rank, step);
            }
            if (q == rank && (kind == 4 || kind == 9)) {
                if (tagg_io_write(f, &x, TAGG_RAW, true) < 0)
                    ok = 0, fprintf(stderr, "rank %d step %d: collective write failed\n", rank, step);
            }
            for (size_t i = 0; i < x.n; i++) /* the pieces are disjoint */
                memcpy(image + x.v[i].off, x.v[i].mem, x.v[i].len);
            if (q == rank && kind == 9 && reread == 1) { /* the whole range again: more than was kept */
                ok &= read_check(f, d.read.off, d.read.len, 1, back, "collective read of the range after the rewrite",
                                 step);
            }
            if (q == rank && kind == 9 && reread == 2) { /* the pieces written: from memory when every rank kept */
                tagg_extents_t rx;
                tagg_extents_init(&rx);
                unsigned char *b = back;
                for (size_t i = 0; i < x.n; b += x.v[i].len, i++)
                    tagg_extents_push(&rx, x.v[i].off, x.v[i].len, b);
                int rok = tagg_io_read(f, &rx, TAGG_RAW, true) == 0;
                b = back;
                for (size_t i = 0; rok && i < x.n; b += x.v[i].len, i++)
                    rok = compare(b, x.v[i].off, x.v[i].len, "collective read of the pieces after the rewrite", step);
                ok &= rok;
                tagg_extents_free(&rx);
            }
        }
        if (kind == 2 || kind == 5) { /* reads: own region, or the next rank's collectively */
            /* the range from the shared generator: the same offset in every rank's region */
            uint64_t len = 1 + below(&shared, MAXLEN), owner = kind == 2 ? (uint64_t)rank : (uint64_t)((rank + 1) % nranks);
            uint64_t off = owner * R + below(&shared, R - len + 1);
            if (kind == 2) /* what the next rank read likewise */
                next_read = (range_t){(uint64_t)((rank + 1) % nranks) * R + (off - owner * R), len};
            ok &= read_check(f, off, len, kind == 5, back, kind == 5 ? "collective read of the next rank's" : "read",
                             step);
        }
        if (kind == 8) { /* a plain write is not kept: after a barrier, another rank reads it (HDF5 relies on that) */
            MPI_Barrier(MPI_COMM_WORLD);
            int rewrite = 1; /* every piece inside the read just before: a rewrite, kept (not checked) */
            for (int p = 0; p < handed.npieces; p++)
                rewrite &= handed.piece[p].off >= before.off &&
                           handed.piece[p].off + handed.piece[p].len <= before.off + before.len;
            handoffs += !rewrite;
            for (int p = 0; p < handed.npieces && !rewrite; p++) {
                ok &= read_check(f, handed.piece[p].off, handed.piece[p].len, 0, back,
                                 "the next rank's plain write after a barrier", step);
            }
        }
        if (kind == 6 && tagg_file_sync(f) < 0)
            ok = 0, fprintf(stderr, "rank %d step %d: sync failed\n", rank, step);
        if (kind == 7) { /* shorter or longer: what was kept beyond the new end must not come back */
            uint64_t size = image_size / 2 + grow;
            if (tagg_file_set_size(f, size) < 0)
                ok = 0, fprintf(stderr, "rank %d step %d: set_size failed\n", rank, step);
            if (size < image_size)
                memset(image + size, 0, image_size - size);
        }
        int all = 0; /* a failed rank stops every rank (collective steps follow) */
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        ok = all;
    }
    char what[512];
    snprintf(what, sizeof what, "%d steps (rewrites %d, writes %d, reads %d, metadata %d, collective writes %d, "
             "collective reads %d, syncs %d, size changes %d, plain writes read by another rank %d of %d): every "
             "read equals the image; collective rewrites %d", OPS, counts[0], counts[1], counts[2], counts[3], counts[4],
             counts[5], counts[6], counts[7], handoffs, counts[8], counts[9]);
    check(ok, what);
    check(tagg_file_close(f) == 0, "close");
    tagg_config_clear(&cfg);
    long v[4] = {-1, -1, -1, -1}, kept, served, ckept, cread;
    if (rank == 0)
        v[0] = summary_field(sum, "wb_calls="), v[1] = summary_field(sum, "wb_read_bytes="),
        v[2] = summary_field(sum, "wb_coll_kept="), v[3] = summary_field(sum, "wb_coll_read=");
    MPI_Bcast(v, 4, MPI_LONG, 0, MPI_COMM_WORLD);
    kept = v[0], served = v[1], ckept = v[2], cread = v[3];
    if (limit > 0) {
        snprintf(what, sizeof what, "write_behind=%ld: writes kept %ld (want > 0), bytes read from them %ld (want > 0), "
                 "collective rewrites kept %ld and collective reads served from them %ld (want > 0)",
                 limit, kept, served, ckept, cread);
        check(kept > 0 && served > 0 && ckept > 0 && cread > 0, what);
    }
    else {
        snprintf(what, sizeof what, "write_behind=0: no write kept (summary has no wb_ fields: %ld)", kept);
        check(kept == -1, what);
    }
    /* the whole file again, read-only, by every rank */
    f = open_file(path, cfgtext, 0, &cfg);
    unsigned char *all = malloc(image_size);
    tagg_extents_reset(&x);
    tagg_extents_push(&x, 0, image_size, all);
    int rok = tagg_io_read(f, &x, TAGG_RAW, false) == 0 && compare(all, 0, image_size, "reopened file", OPS);
    check(rok, "after close, the file read back equals the image byte for byte");
    check(tagg_file_close(f) == 0, "close of the read-only open");
    tagg_config_clear(&cfg);
    tagg_extents_free(&x);
    free(all), free(mem), free(back), free(gen), free(image);
    return 0;
}

/* A rewrite kept on rank 1, then the write-out fails (injected): the call that
 * writes it out fails, on every rank when it is collective, naming the loss. */
static int fault_mode(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/wbehind-fault.bin", dir);
    tagg_config_t  cfg;
    tagg_file_t   *f = open_file(path, "write_behind=1M", TAGG_OPEN_RDWR | TAGG_OPEN_CREAT | TAGG_OPEN_TRUNC, &cfg);
    unsigned char  buf[4096];
    tagg_extents_t x;
    tagg_extents_init(&x);
    tagg_err_sink_t sink;
    for (int round = 0; round < 2; round++) {
        /* a new switch string restarts the count: the first write-out of each round fails */
        setenv("TAGG_FAULT", round ? "wb_flush:rank=1:after=0:round2" : "wb_flush:rank=1:after=0", 1);
        uint64_t off = (uint64_t)rank * 65536 + (uint64_t)round * 8192;
        tagg_extents_reset(&x);
        tagg_extents_push(&x, off, sizeof buf, buf);
        int rc = tagg_io_read(f, &x, TAGG_RAW, false); /* read, then write back: kept */
        memset(buf, 'a' + round, sizeof buf);
        rc |= tagg_io_write(f, &x, TAGG_RAW, false);
        check(rc == 0, round ? "round 2: a rewrite is kept (no write-out yet)" : "a rewrite is kept (no write-out yet)");
        memset(&sink, 0, sizeof sink);
        tagg_err_capture(&sink);
        if (round == 0) { /* collective: fails everywhere, rank 1 with the loss named */
            tagg_extents_reset(&x);
            tagg_extents_push(&x, (uint64_t)rank * 65536 + 32768, sizeof buf, buf);
            rc = tagg_io_write(f, &x, TAGG_RAW, true);
            tagg_err_capture(NULL);
            int named = rank != 1 || strstr(sink.msg, "kept behind (write_behind)") != NULL;
            char what[1400];
            snprintf(what, sizeof what, "a collective write after a failed write-out fails on every rank; rank 1 "
                     "names the bytes lost (rank %d: rc %d, '%.900s')", rank, rc, sink.msg);
            check(rc < 0 && named, what);
        }
        else { /* independent: a metadata write writes out first, and fails on rank 1 only */
            tagg_extents_reset(&x);
            tagg_extents_push(&x, (uint64_t)rank * 65536 + 40960, 16, buf);
            rc = tagg_io_write(f, &x, TAGG_META, false);
            tagg_err_capture(NULL);
            int want = rank == 1 ? -1 : 0;
            check(rc == want && (rank != 1 || strstr(sink.msg, "write_behind")),
                  "an independent metadata write after a failed write-out fails on rank 1 alone");
        }
    }
    unsetenv("TAGG_FAULT");
    check(tagg_file_close(f) == 0, "close after the failures (nothing kept any more) succeeds");
    tagg_config_clear(&cfg);
    tagg_extents_free(&x);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc >= 3 && !strcmp(argv[1], "fault"))
        fault_mode(argv[2]);
    else if (argc >= 4)
        random_mode(argv[1], argv[2], strtoull(argv[3], NULL, 10));
    else {
        if (rank == 0)
            fprintf(stderr, "usage: test_wbehind CONFIG DIR SEED | test_wbehind fault DIR\n");
        MPI_Finalize();
        return 2;
    }
    if (rank == 0)
        printf("%d passed, %d failed\n", passed, failed);
    MPI_Finalize();
    return failed ? 1 : 0;
}
