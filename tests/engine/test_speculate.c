/* Speculative direct access, byte for byte (issue 13: errors ride in the gather).
 *
 *   test_speculate CONFIG DIR          cases a-e below
 *   test_speculate fault DIR           case f (TAGG_FAULT=direct_write:rank=1:after=2)
 *
 * A rank whose request has the shape of one of its recent requests that the
 * model sent direct accesses its runs before the describe gather; when every
 * rank did, the gather is the call's only synchronisation. Each case writes a
 * file in STEPS collective calls (call t at t x DELTA), reads it back call by
 * call into fresh memory and compares, and rank 0 compares the whole file
 * (POSIX) with the image:
 *   a. one contiguous run per rank, uneven sizes and an empty rank (4 ranks):
 *      direct by the model, so every call after the first of its direction
 *      ends at the gather (summary: speculated >= 2 x STEPS - 2);
 *   b. speculate=0: no call speculates (speculated = accessed_early = 0);
 *   c. mixed: from step MIXED on the other ranks write small strided runs
 *      (regular: the aggregators' coverage comes from the rows) around rank
 *      0's unchanged block, which lies in their gaps: rank 0 accesses its
 *      block before the plan, the others are aggregated
 *      (aggr_write_calls > 0, rank 0's accessed_early counts it) and no
 *      aggregator writes over rank 0's block; the shape the plan aggregated
 *      is forgotten, so rank 0 does not speculate again;
 *   d. as c with irregular runs (lengths alternate): the coverage exchange;
 *   e. aggregate=never: every call speculates, the first too;
 *   g. small strided runs of every rank with aggregate=never (direct, every
 *      call accessed before its plan), then the same runs in a new file with
 *      aggregate=auto: every write aggregated, nothing accessed early (a
 *      forced direct call teaches no shape);
 *   f. (fault) rank 1's third direct write fails while it speculates: the
 *      call fails on every rank (rank 1 with the injected error, the others
 *      naming rank 1), no rank hangs, later calls and the close succeed.
 * Prints "N passed, M failed"; exits non-zero on any failure. */
#include "config.h"
#include "error.h"
#include "io.h"
#include "mpi_check.h"

#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STEPS 6
#define MIXED 3          /* first step of the mixed pattern */
#define DELTA (1u << 20) /* call t's region starts at t x DELTA */
#define BLOCK 20000u     /* the other ranks' blocks before MIXED */
#define SMALL 3000u      /* rank 0's block in the mixed cases */
#define RUN 64u          /* the other ranks' small runs */
#define GAP 4096u        /* their stride */
#define SLOTS 64u        /* and how many */

static unsigned char val(uint64_t off, int t) { return (unsigned char)((off * 131 + (uint64_t)t * 7 + 3) % 251); }

typedef enum { PAT_CONTIG, PAT_MIXED, PAT_MIXED_IRREGULAR, PAT_SMALL } pattern_t;

/* The runs of rank r in call t, as (off, len) pairs into v; returns how many. */
static size_t runs_of(pattern_t p, int r, int t, uint64_t *v, size_t cap)
{
    uint64_t base = (uint64_t)t * DELTA;
    size_t   n    = 0;
    if (p == PAT_CONTIG) {
        uint64_t len = r == 2 ? 0 : 5000 + 777u * (uint64_t)r; /* uneven; rank 2 empty */
        v[0] = base + 13 + (uint64_t)r * 9000, v[1] = len;
        return len ? 1 : 0;
    }
    if (p == PAT_SMALL) { /* every call: RUN bytes at the start of every GAP, the ranks' slots in turn */
        for (uint64_t g = (uint64_t)r; n < cap && g < SLOTS; g += (uint64_t)nranks, n++)
            v[2 * n] = base + g * GAP, v[2 * n + 1] = RUN;
        return n;
    }
    if (r == 0) { /* always the same block, in the gap after the first small run */
        v[0] = base + 128, v[1] = SMALL;
        return 1;
    }
    if (t < MIXED) { /* the other ranks: one block each, far from rank 0's */
        v[0] = base + (512u << 10) + (uint64_t)r * BLOCK, v[1] = BLOCK;
        return 1;
    }
    /* from MIXED on: RUN bytes at the start of every GAP over the first SLOTS
     * gaps, each rank its own slots; rank 0's block lies between two of them */
    for (uint64_t g = 0; n < cap && g < SLOTS; g++) {
        if ((int)(g % (uint64_t)(nranks - 1)) != r - 1)
            continue;
        uint64_t len = p == PAT_MIXED_IRREGULAR && (g / (uint64_t)(nranks - 1)) % 2 ? RUN + 32 : RUN;
        v[2 * n] = base + g * GAP, v[2 * n + 1] = len;
        n++;
    }
    return n;
}

/* x gets rank's runs of call t in mem (filled with the call's bytes when fill). */
static void request(tagg_extents_t *x, unsigned char *mem, pattern_t p, int t, int fill)
{
    uint64_t v[2 * 256];
    size_t   n = runs_of(p, rank, t, v, 256), used = 0;
    tagg_extents_reset(x);
    for (size_t i = 0; i < n; i++) {
        unsigned char *m = mem + used;
        if (fill)
            for (uint64_t k = 0; k < v[2 * i + 1]; k++)
                m[k] = val(v[2 * i] + k, t);
        tagg_extents_push(x, v[2 * i], v[2 * i + 1], m);
        used += v[2 * i + 1];
    }
}

static int compare(const tagg_extents_t *x, int t)
{
    for (size_t i = 0; i < x->n; i++)
        for (uint64_t k = 0; k < x->v[i].len; k++)
            if ((unsigned char)x->v[i].mem[k] != val(x->v[i].off + k, t)) {
                fprintf(stderr, "rank %d: step %d byte %llu differs\n", rank, t, (unsigned long long)(x->v[i].off + k));
                return 0;
            }
    return 1;
}

/* Rank 0: the file against the image of every rank's runs, zero elsewhere. */
static int image_ok(const char *path, pattern_t p)
{
    uint64_t       size = (uint64_t)STEPS * DELTA, v[2 * 256];
    unsigned char *img = calloc(size, 1);
    for (int t = 0; t < STEPS; t++)
        for (int r = 0; r < nranks; r++) {
            size_t n = runs_of(p, r, t, v, 256);
            for (size_t i = 0; i < n; i++)
                for (uint64_t k = 0; k < v[2 * i + 1]; k++)
                    img[v[2 * i] + k] = val(v[2 * i] + k, t);
        }
    int ok = file_is_image(path, img, size);
    free(img);
    return ok;
}

typedef struct {
    long speculated, early, aggr;
} counts_t;

/* One file: STEPS writes, STEPS reads, the image. Rank 0's summary counts. */
static counts_t one_file(const char *dir, const char *name, const char *cfgtext, pattern_t p)
{
    char path[4096], sum[4096], full[8192], what[512];
    snprintf(path, sizeof path, "%s/spec-%s.bin", dir, name);
    snprintf(sum, sizeof sum, "%s/spec-%s.sum", dir, name);
    with_summary(full, sizeof full, cfgtext, sum);
    tagg_config_t  cfg;
    tagg_file_t   *f   = open_file(path, full, TAGG_OPEN_RDWR | TAGG_OPEN_CREAT | TAGG_OPEN_TRUNC, &cfg);
    unsigned char *mem = malloc(16 * BLOCK);
    tagg_extents_t x;
    tagg_extents_init(&x);
    int wok = 1, rok = 1;
    for (int t = 0; t < STEPS; t++) {
        request(&x, mem, p, t, 1);
        if (tagg_io_write(f, &x, TAGG_RAW, true) < 0)
            wok = 0, fprintf(stderr, "rank %d: write %d failed\n", rank, t);
    }
    for (int t = 0; t < STEPS; t++) {
        memset(mem, 0, 16 * BLOCK);
        request(&x, mem, p, t, 0);
        if (tagg_io_read(f, &x, TAGG_RAW, true) < 0)
            rok = 0, fprintf(stderr, "rank %d: read %d failed\n", rank, t);
        rok = rok && compare(&x, t);
    }
    tagg_extents_free(&x);
    snprintf(what, sizeof what, "%s: %d collective writes", name, STEPS);
    check(wok, what);
    snprintf(what, sizeof what, "%s: each call read back into fresh memory equals what was written", name);
    check(rok, what);
    check(tagg_file_close(f) == 0, "close");
    tagg_config_clear(&cfg);
    int fok = rank == 0 ? image_ok(path, p) : 1;
    snprintf(what, sizeof what, "%s: the file equals the image byte for byte", name);
    check(fok, what);
    free(mem);
    counts_t c = {-1, -1, -1};
    if (rank == 0) {
        c.speculated = summary_field(sum, "speculated="), c.early = summary_field(sum, "accessed_early=");
        c.aggr = summary_field(sum, "aggr_write_calls=");
        printf("%s: speculated=%ld accessed_early=%ld aggr_write_calls=%ld\n", name, c.speculated, c.early, c.aggr);
    }
    MPI_Bcast(&c, 3, MPI_LONG, 0, MPI_COMM_WORLD);
    return c;
}

/* f: an injected failure of rank 1's speculative write fails the call on every rank. */
static void fault_case(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/spec-fault.bin", dir);
    tagg_config_t    cfg;
    tagg_file_t     *f   = open_file(path, "", TAGG_OPEN_RDWR | TAGG_OPEN_CREAT | TAGG_OPEN_TRUNC, &cfg);
    unsigned char   *mem = malloc(16 * BLOCK);
    tagg_extents_t   x;
    tagg_err_sink_t  sink;
    tagg_extents_init(&x);
    int rcs[STEPS], early = 0;
    for (int t = 0; t < STEPS; t++) {
        memset(&sink, 0, sizeof sink);
        tagg_err_capture(&sink);
        request(&x, mem, PAT_CONTIG, t, 1);
        rcs[t] = tagg_io_write(f, &x, TAGG_RAW, true);
        tagg_err_capture(NULL);
        if (rcs[t] < 0 && !early) {
            early = t + 1;
            const char *want = rank == 1 ? "injected by TAGG_FAULT" : "failed on rank 1";
            check(strstr(sink.msg, want) != NULL, "the failing call's error names the injected fault (rank 1) or rank 1 (others)");
            if (!strstr(sink.msg, want))
                fprintf(stderr, "rank %d: error text: %s\n", rank, sink.msg);
        }
    }
    /* rank 1's direct writes: call 0 (planned), 1 and 2 (speculated): the third fails */
    int ok = 1;
    for (int t = 0; t < STEPS; t++)
        ok &= (t == 2) == (rcs[t] < 0);
    check(ok, "fault: exactly the third call fails, on every rank, and the later ones succeed");
    check(tagg_file_close(f) == 0, "fault: the file closes on every rank");
    tagg_extents_free(&x);
    tagg_config_clear(&cfg);
    free(mem);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc < 3 || nranks < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n N (N >= 2) test_speculate CONFIG|fault DIR\n");
        MPI_Finalize();
        return 2;
    }
    char what[512], cfg[2048];
    if (!strcmp(argv[1], "fault")) {
        fault_case(argv[2]);
    }
    else {
        snprintf(cfg, sizeof cfg, "block=64K;%s", argv[1]);
        counts_t c = one_file(argv[2], "contig", cfg, PAT_CONTIG);
        snprintf(what, sizeof what, "contig: direct, %ld calls ended at the gather (want >= %d)", c.speculated, 2 * STEPS - 2);
        check(c.aggr == 0 && c.speculated >= 2 * STEPS - 2, what);

        snprintf(cfg, sizeof cfg, "block=64K;speculate=0;%s", argv[1]);
        c = one_file(argv[2], "off", cfg, PAT_CONTIG);
        check(c.speculated == 0 && c.early == 0, "speculate=0: no call accessed before its plan");

        snprintf(cfg, sizeof cfg, "block=64K;%s", argv[1]);
        for (int irregular = 0; irregular < 2; irregular++) {
            const char *name = irregular ? "mixed-irregular" : "mixed";
            c = one_file(argv[2], name, cfg, irregular ? PAT_MIXED_IRREGULAR : PAT_MIXED);
            /* rank 0: writes 1..MIXED-1 and MIXED (mixed, aggregated: forgotten), reads 1..MIXED-1 and MIXED */
            snprintf(what, sizeof what, "%s: the small runs aggregated (%ld calls), rank 0's block accessed early %ld times (want %d)",
                     name, c.aggr, c.early, 2 * MIXED);
            check(c.aggr >= 1 && c.early == 2 * MIXED, what);
        }

        snprintf(cfg, sizeof cfg, "block=64K;aggregate=never;%s", argv[1]);
        c = one_file(argv[2], "never", cfg, PAT_CONTIG);
        snprintf(what, sizeof what, "aggregate=never: %ld of %d calls ended at the gather", c.speculated, 2 * STEPS);
        check(c.speculated == 2 * STEPS, what);

        /* g. aggregate=never teaches no shape: small runs written direct there,
         * then a file of the same process with aggregate=auto plans them, and
         * aggregates them, every call (until session 31 the second file took
         * the first's shapes for its own and wrote every call direct) */
        snprintf(cfg, sizeof cfg, "block=64K;aggregate=never;%s", argv[1]);
        c = one_file(argv[2], "never-small", cfg, PAT_SMALL);
        check(c.speculated == 2 * STEPS && c.aggr == 0, "aggregate=never, small runs: every call direct, ended at the gather");
        snprintf(cfg, sizeof cfg, "block=64K;%s", argv[1]);
        c = one_file(argv[2], "small", cfg, PAT_SMALL);
        snprintf(what, sizeof what, "then aggregate=auto, the same runs: %ld of %d writes aggregated, %ld accesses before a plan (want %d, 0)",
                 c.aggr, STEPS, c.early, STEPS);
        check(c.aggr == STEPS && c.early == 0, what);
    }
    if (rank == 0)
        printf("%d passed, %d failed\n", passed, failed);
    MPI_Finalize();
    return failed ? 1 : 0;
}
