/* Plan reuse, byte for byte (issue 13): a collective call with the shape of the
 * previous aggregated call (every rank's runs shifted by one delta, as h5bench's
 * timesteps or HACC's variables) reuses its plan, shifted.
 *
 *   test_reuse CONFIG DIR
 *
 * Three files, each written in STEPS collective calls of column blocks (every
 * rank ROWS runs of LEN bytes at stride NRANKS x LEN, rank r at r x LEN), call t
 * at t x DELTA, then read back call by call into fresh memory and compared, and
 * the whole file compared by rank 0 (POSIX) with the image:
 *   a. DELTA a multiple of the domain alignment: every call after the first of its direction
 *      reuses (the summary's plans_reused >= 2 x STEPS - 2: the first write and the
 *      first read plan anew, a plan is reused only in its direction);
 *   b. DELTA not a multiple of it: no reuse (plans_reused = 0), same bytes;
 *   c. the shape changes every other call (LEN alternates): no reuse, same bytes.
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
#define ROWS 64

static unsigned char val(uint64_t off, int t) { return (unsigned char)((off * 131 + (uint64_t)t * 7 + 1) % 251); }

/* Rank r's runs of call t: ROWS runs of len at stride nranks x len from base. */
static void runs(tagg_extents_t *x, unsigned char *mem, uint64_t base, uint64_t len, int t, int fill)
{
    tagg_extents_reset(x);
    for (int i = 0; i < ROWS; i++) {
        uint64_t off = base + (uint64_t)i * nranks * len + (uint64_t)rank * len;
        unsigned char *m = mem + (size_t)i * len;
        if (fill)
            for (uint64_t k = 0; k < len; k++)
                m[k] = val(off + k, t);
        tagg_extents_push(x, off, len, m);
    }
}

/* One file: STEPS writes, STEPS reads back, the image compared. Returns plans reused (rank 0) or -1. */
static long one_file(const char *dir, const char *name, const char *cfgtext, uint64_t delta, int alternate)
{
    char path[4096], sum[4096], full[8192];
    snprintf(path, sizeof path, "%s/reuse-%s.bin", dir, name);
    snprintf(sum, sizeof sum, "%s/reuse-%s.sum", dir, name);
    with_summary(full, sizeof full, cfgtext, sum);
    tagg_config_t cfg;
    tagg_file_t  *f = open_file(path, full, TAGG_OPEN_RDWR | TAGG_OPEN_CREAT | TAGG_OPEN_TRUNC, &cfg);
    uint64_t       maxlen = 3000, size = (uint64_t)STEPS * delta + (uint64_t)ROWS * nranks * maxlen;
    unsigned char *mem = malloc(ROWS * maxlen), *back = malloc(ROWS * maxlen);
    tagg_extents_t x;
    tagg_extents_init(&x);
    int wok = 1, rok = 1;
    for (int t = 0; t < STEPS; t++) {
        uint64_t len = alternate && (t % 2) ? 2000 : 3000;
        runs(&x, mem, (uint64_t)t * delta, len, t, 1);
        if (tagg_io_write(f, &x, TAGG_RAW, true) < 0)
            wok = 0, fprintf(stderr, "rank %d: call failed\n", rank);
    }
    for (int t = 0; t < STEPS; t++) {
        uint64_t len = alternate && (t % 2) ? 2000 : 3000;
        memset(back, 0, ROWS * maxlen);
        runs(&x, back, (uint64_t)t * delta, len, t, 0);
        if (tagg_io_read(f, &x, TAGG_RAW, true) < 0)
            rok = 0, fprintf(stderr, "rank %d: call failed\n", rank);
        for (int i = 0; i < ROWS && rok; i++) {
            uint64_t off = (uint64_t)t * delta + (uint64_t)i * nranks * len + (uint64_t)rank * len;
            for (uint64_t k = 0; k < len; k++)
                if (back[(size_t)i * len + k] != val(off + k, t)) {
                    rok = 0;
                    fprintf(stderr, "rank %d: step %d byte %llu differs\n", rank, t, (unsigned long long)(off + k));
                    break;
                }
        }
    }
    tagg_extents_free(&x);
    char what[256];
    snprintf(what, sizeof what, "%s: %d collective writes", name, STEPS);
    check(wok, what);
    snprintf(what, sizeof what, "%s: each call read back into fresh memory equals what was written", name);
    check(rok, what);
    if (tagg_file_close(f) < 0)
        fprintf(stderr, "rank %d: call failed\n", rank);
    tagg_config_clear(&cfg);
    /* the whole file, by rank 0 with POSIX: every written byte, zero elsewhere */
    int fok = 1;
    if (rank == 0) {
        unsigned char *img = calloc(size, 1);
        for (int t = 0; t < STEPS; t++) {
            uint64_t len = alternate && (t % 2) ? 2000 : 3000;
            for (int r = 0; r < nranks; r++)
                for (int i = 0; i < ROWS; i++) {
                    uint64_t off = (uint64_t)t * delta + (uint64_t)i * nranks * len + (uint64_t)r * len;
                    for (uint64_t k = 0; k < len; k++)
                        img[off + k] = val(off + k, t);
                }
        }
        fok = file_is_image(path, img, size);
        free(img);
    }
    snprintf(what, sizeof what, "%s: the file equals the image byte for byte", name);
    check(fok, what);
    free(mem), free(back);
    long reused = rank == 0 ? summary_field(sum, "plans_reused=") : 0;
    MPI_Bcast(&reused, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    return reused;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: test_reuse CONFIG DIR\n");
        MPI_Finalize();
        return 2;
    }
    /* block=64K aligns the domains; 64 rows x 3000 bytes x ranks spans < 1 MiB */
    char cfg[2048];
    snprintf(cfg, sizeof cfg, "block=64K;aggregate=always;%s", argv[1]);
    long r = one_file(argv[2], "aligned", cfg, 1 << 20, 0);
    char what[256];
    snprintf(what, sizeof what, "aligned delta: plans reused %ld (want >= %d)", r, 2 * STEPS - 2);
    check(r >= 2 * STEPS - 2, what);
    r = one_file(argv[2], "unaligned", cfg, (1 << 20) + 4096, 0);
    snprintf(what, sizeof what, "delta not a multiple of the alignment: plans reused %ld (want 0)", r);
    check(r == 0, what);
    r = one_file(argv[2], "alternating", cfg, 1 << 20, 1);
    snprintf(what, sizeof what, "shape alternating: plans reused %ld (want 0)", r);
    check(r == 0, what);
    if (rank == 0)
        printf("%d passed, %d failed\n", passed, failed);
    MPI_Finalize();
    return failed ? 1 : 0;
}
