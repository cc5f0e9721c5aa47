/* The checksums of a new subfiled file without reading it back at close
 * (store_subfiles_close.c): a stripe several writes made, none over another
 * rank's bytes, gets the CRC its writers' changes compose; stripes where
 * ranks' bytes overlap, cut stripes and stripes of more pieces than a note
 * keeps apart are read back. Each case writes a new file with independent
 * writes of the core API (every rank keeps the image of the whole file),
 * closes it, and checks:
 *   - the summary's sf_composed / sf_reread (which way each stripe went);
 *   - a read-only open (which verifies every stripe it reads against the
 *     index) reads the whole file back equal to the image;
 *   - after one byte of a subfile is flipped, that read fails (the composed
 *     checksums describe the bytes, they are not merely accepted);
 *   - (apart) a read-only open read in small pieces checks each stripe once
 *     per rank and serves the stripe's other reads from the verified copy,
 *     which a later change of the subfile does not reach.
 *
 *   test_sf_compose DIR
 * Cases (S = 4 KiB stripes, 2 subfiles, at least 2 ranks):
 *   apart     ranks write interleaved blocks of every stripe, each rewriting some
 *             of its own bytes, pieces crossing stripe boundaries, a final size
 *             that ends inside a stripe: all composed, none read back at close
 *             (the partial rewrites read the bytes they replace: sf_pre_read);
 *   exact     as apart, but every rewrite is of exactly one earlier write of
 *             the same rank (HDF5's superblock and metadata rewrites): composed,
 *             and nothing read before a rewrite either (sf_pre_read=0);
 *   overlap   as apart, then rank 1 overwrites bytes rank 0 wrote (after a
 *             barrier): that stripe is read back;
 *   cut       as apart, then the size is cut through written bytes and extended
 *             again, and more is written: the cut stripe is read back;
 *   fine      more interleaved pieces per stripe than a note keeps apart: read
 *             back (the kept spans over-cover, never under-cover). */
#include "bufpool.h"
#include "config.h"
#include "error.h"
#include "io.h"
#include "mpi_check.h"
#include "subfile_index.h"

#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NSTRIPES 12

static uint64_t S = 4096; /* the stripe size of the cases; 64 KiB: 4 KiB blocks (format 4) */
static int      nsub = 2; /* subfiles of the file flip() changes */

static unsigned char *image;
static uint64_t       image_size;

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* Every rank: the image gets [off, off+len) of writer's data (seeded the same
 * everywhere); the writer also writes it. 0 or -1. */
static int put(tagg_file_t *f, int writer, uint64_t off, uint64_t len, uint64_t *g)
{
    if (off + len > image_size) {
        image = realloc(image, (size_t)(off + len));
        memset(image + image_size, 0, (size_t)(off + len - image_size));
        image_size = off + len;
    }
    for (uint64_t k = 0; k < len; k++)
        image[off + k] = (unsigned char)(next(g) >> 24);
    if (writer != rank)
        return 0;
    tagg_extents_t x;
    tagg_extents_init(&x);
    tagg_extents_push(&x, off, len, image + off);
    int rc = tagg_io_write(f, &x, TAGG_RAW, false);
    tagg_extents_free(&x);
    return rc;
}

/* Interleaved blocks: in every stripe, rank q writes blocks q, q + n, ... of
 * `blocks` equal blocks; then every rank rewrites some of its own bytes, and
 * writes one piece across a stripe boundary (its block at the end of stripe
 * j and the start of j+1 joined when it owns both). exact: the rewrites are
 * of whole blocks, some twice, and nothing crosses a boundary (every rewrite
 * is of exactly one earlier write). 0 or -1 on this rank. */
static int interleaved(tagg_file_t *f, int blocks, int exact, uint64_t *g)
{
    uint64_t b  = S / (uint64_t)blocks;
    int      rc = 0;
    for (uint64_t j = 0; j < NSTRIPES; j++)
        for (int k = 0; k < blocks; k++)
            rc |= put(f, k % nranks, j * S + (uint64_t)k * b, b, g);
    for (uint64_t j = 0; exact && j < NSTRIPES; j++)
        for (int k = 0; k < blocks; k++)
            for (int again = 0; again <= (int)(j % 3 == 0); again++)
                rc |= put(f, k % nranks, j * S + (uint64_t)k * b, b, g);
    if (exact)
        return rc;
    for (uint64_t j = 0; j < NSTRIPES; j += 3) /* rewrites of own bytes: part of a block */
        for (int k = 0; k < blocks; k++)
            rc |= put(f, k % nranks, j * S + (uint64_t)k * b + b / 4, b / 2, g);
    /* the last block of stripe 4 and the first of 5 are the same rank's when blocks % nranks == 1 */
    if (blocks % nranks == 1)
        rc |= put(f, (blocks - 1) % nranks, 5 * S - b / 2, b, g);
    return rc;
}

static int read_all(const char *path, const char *cfgtext, int *equal)
{
    tagg_config_t  cfg;
    tagg_file_t   *f   = open_file(path, cfgtext, 0, &cfg);
    unsigned char *got = calloc(1, (size_t)image_size);
    tagg_extents_t x;
    tagg_extents_init(&x);
    tagg_extents_push(&x, 0, image_size, got);
    int rc = tagg_io_read(f, &x, TAGG_RAW, false);
    *equal = rc == 0 && memcmp(got, image, (size_t)image_size) == 0;
    H5Eclear2(H5E_DEFAULT);
    if (tagg_file_close(f) < 0)
        rc = -1;
    tagg_extents_free(&x);
    tagg_config_clear(&cfg);
    free(got);
    return rc;
}

/* Reads stripe j's bytes [a, a+n) (independent, one rank) from an open file. 1 equal to the image, 0 not, -1 failed. */
static int read_piece(tagg_file_t *f, uint64_t off, uint64_t n)
{
    unsigned char *got = calloc(1, (size_t)n);
    tagg_extents_t x;
    tagg_extents_init(&x);
    tagg_extents_push(&x, off, n, got);
    int rc = tagg_io_read(f, &x, TAGG_RAW, false);
    int eq = rc == 0 && memcmp(got, image + off, (size_t)n) == 0;
    H5Eclear2(H5E_DEFAULT);
    tagg_extents_free(&x);
    free(got);
    return rc < 0 ? -1 : eq;
}

static void flip(const char *path, int k, uint64_t at);

/* A read-only open read in small pieces, each stripe's in order, each piece
 * twice, then each stripe's first piece again from the last stripe back:
 * every rank checks each stripe once and serves the stripe's other reads,
 * and the revisits of the last 16 stripes it checked, from its verified
 * copies (sf_from_copy), except stripe 0, which rank 0 checks at open and
 * broadcasts (sf_shared = ranks - 1; sf_verified = ranks x stripes - that;
 * every rank's first read of stripe 0 comes from the copy too);
 * a byte changed in the subfile after the stripe was checked is not seen by
 * the reads the copy serves (they return verified bytes only). */
static void pieces_case(const char *dir, const char *path)
{
    char     sum[1100], cfgtext[1400], what[300];
    uint64_t nst = image_size / S + (image_size % S != 0), piece = S / 8, reads = 0;
    int      bad = 0;
    snprintf(sum, sizeof sum, "%s/sf_compose_pieces.summary", dir);
    with_summary(cfgtext, sizeof cfgtext, "layout=subfiles", sum);
    tagg_config_t cfg;
    tagg_file_t  *f = open_file(path, cfgtext, 0, &cfg);
    for (uint64_t j = 0; j < nst; j++) {
        uint64_t end = (j + 1) * S < image_size ? (j + 1) * S : image_size;
        for (uint64_t o = j * S; o < end; o += piece) {
            uint64_t n = end - o < piece ? end - o : piece;
            for (int twice = 0; twice < 2; twice++, reads++)
                bad |= read_piece(f, o, n) != 1;
            if (j == 3 && o == j * S) { /* stripe 3 checked and held: change a byte of it further on */
                MPI_Barrier(MPI_COMM_WORLD);
                flip(path, 1, S + S / 2 + 5);
            }
        }
    }
    /* the first piece of every stripe again, last stripe first: the copies of
     * the last min(stripes, 16) checked serve them (TAGG_SUB_COPIES; 16 stripes
     * of 4 KiB are well under TAGG_SUB_COPY_BYTES), the others come from the
     * file unchecked (stripe 3's first piece does not hold the changed byte) */
    uint64_t kept = nst < 16 ? nst : 16;
    for (uint64_t j = nst; j-- > 0;)
        bad |= read_piece(f, j * S, piece < image_size - j * S ? piece : image_size - j * S) != 1;
    int rc = tagg_file_close(f);
    tagg_config_clear(&cfg);
    flip(path, 1, S + S / 2 + 5);
    snprintf(what, sizeof what, "pieces: every piece read equals the image, the byte changed after its stripe was checked included");
    check(!bad && rc == 0, what);
    long v[3] = {-1, -1, -1};
    if (rank == 0)
        v[0] = summary_field(sum, "sf_verified="), v[1] = summary_field(sum, "sf_from_copy="),
        v[2] = summary_field(sum, "sf_shared="), unlink(sum);
    MPI_Bcast(v, 3, MPI_LONG, 0, MPI_COMM_WORLD);
    uint64_t shared = (uint64_t)nranks - 1, want_v = nst * (uint64_t)nranks - shared;
    uint64_t want_c = (reads - nst + kept + 1) * (uint64_t)nranks; /* stripe 0's first reads too */
    snprintf(what, sizeof what, "pieces: sf_verified=%ld sf_from_copy=%ld sf_shared=%ld (want %llu, %llu and %llu)", v[0],
             v[1], v[2], (unsigned long long)want_v, (unsigned long long)want_c, (unsigned long long)shared);
    check(v[0] == (long)want_v && v[1] == (long)want_c && v[2] == (long)shared, what);

    /* the checked copies' buffers outlive the open in the process's pool
     * (bufpool.h): a second read-only open that checks as many stripes as the
     * pool keeps takes every copy from it, no new memory, no new page faults */
    uint64_t           m = nst < TAGG_BUFPOOL_KEEP ? nst : TAGG_BUFPOOL_KEEP;
    unsigned long long r0, m0, r1, m1;
    tagg_buf_counts(&r0, &m0);
    f   = open_file(path, cfgtext, 0, &cfg);
    bad = 0;
    for (uint64_t j = 0; j < m; j++)
        bad |= read_piece(f, j * S, piece < image_size - j * S ? piece : image_size - j * S) != 1;
    rc = tagg_file_close(f);
    tagg_config_clear(&cfg);
    tagg_buf_counts(&r1, &m1);
    if (rank == 0)
        unlink(sum);
    snprintf(what, sizeof what, "pieces, again: %llu stripes read right, copies from the pool %llu (want %llu), new %llu (want 0)",
             (unsigned long long)m, r1 - r0, (unsigned long long)m, m1 - m0);
    check(!bad && rc == 0 && m1 == m0 && r1 - r0 == m, what);
}

/* Format 4 (S = 64 KiB, 4 KiB blocks): a read-only open whose ranks read
 * two blocks (bytes [S/4, S/4 + S/8)) of every stripe after the first checks
 * those blocks only (sf_blocks; of stripe 0 the open shares block 0 alone,
 * checked by rank 0: one block more, no stripe checked whole, sf_verified =
 * 0), reads them again from its copy, and a byte changed in block 9 of
 * stripe 3 fails the read of that block alone, naming it. */
static void blocks_case(const char *dir, const char *path)
{
    char     sum[1100], cfgtext[1400], what[600];
    uint64_t nst = image_size / S + (image_size % S != 0), at = S / 4, n = S / 8, read = 0;
    int      bad = 0;
    snprintf(sum, sizeof sum, "%s/sf_compose_blocks.summary", dir);
    with_summary(cfgtext, sizeof cfgtext, "layout=subfiles", sum);
    tagg_config_t cfg;
    tagg_file_t  *f = open_file(path, cfgtext, 0, &cfg);
    for (uint64_t j = 1; j < nst; j++)
        if ((j + 1) * S <= image_size) /* whole stripes */
            for (int twice = 0; twice < 2; twice++)
                bad |= read_piece(f, j * S + at, n) != 1, read += !twice;
    MPI_Barrier(MPI_COMM_WORLD);
    flip(path, 1, S + 9 * (S / 16) + 5); /* stripe 3 = subfile 1, slot 1: its block 9 */
    int again = read_piece(f, 3 * S + at, n);   /* blocks 4 and 5: from the copy, right */
    H5Eclear2(H5E_DEFAULT);
    tagg_err_sink_t sink; /* the message names the stripe and block */
    memset(&sink, 0, sizeof sink);
    tagg_err_capture(&sink);
    int hit = read_piece(f, 3 * S + 9 * (S / 16), 100); /* block 9: checked now, fails */
    tagg_err_capture(NULL);
    H5Eclear2(H5E_DEFAULT);
    int named = strstr(sink.msg, "CHECKSUM MISMATCH") && strstr(sink.msg, "stripe 3, block 9 ");
    int rc = tagg_file_close(f);
    tagg_config_clear(&cfg);
    flip(path, 1, S + 9 * (S / 16) + 5);
    snprintf(what, sizeof what,
             "blocks: the two blocks of %llu stripes read right, again right after a byte of another block changed (%d), "
             "the read of that block fails (%d) naming it ('%.200s')",
             (unsigned long long)read, again, hit, sink.msg);
    check(!bad && again == 1 && hit == -1 && named && rc == 0, what);
    long v[3] = {-1, -1, -1};
    if (rank == 0)
        v[0] = summary_field(sum, "sf_verified="), v[1] = summary_field(sum, "sf_blocks="), v[2] = summary_field(sum, "sf_from_copy="),
        unlink(sum);
    MPI_Bcast(v, 3, MPI_LONG, 0, MPI_COMM_WORLD);
    uint64_t want_b = 2 * read * (uint64_t)nranks + 1, want_c = (read + 1) * (uint64_t)nranks;
    snprintf(what, sizeof what, "blocks: sf_verified=%ld sf_blocks=%ld sf_from_copy=%ld (want 0, %llu and %llu)", v[0], v[1],
             v[2], (unsigned long long)want_b, (unsigned long long)want_c);
    check(v[0] == 0 && v[1] == (long)want_b && v[2] == (long)want_c, what);
}

/* Format 4, a file of one subfile (64 KiB stripes, 4 KiB blocks; rank 0
 * writes 4 stripes and 1000 bytes in one write): a read across stripes is
 * one request for the blocks it covers, each checked (17 blocks for 64 KiB
 * from the middle of stripe 0), a read inside it comes from the run's buffer
 * (sf_from_copy), and a read across stripes 1 and 2 fails at the changed
 * byte in block 3 of stripe 2, naming it. */
static void run_case(const char *dir)
{
    char          path[1024], sum[1100], cfgtext[1400], what[600];
    const uint64_t B = S / 16;
    snprintf(path, sizeof path, "%s/sf_compose_run.h5", dir);
    snprintf(sum, sizeof sum, "%s/sf_compose_run.summary", dir);
    with_summary(cfgtext, sizeof cfgtext, "layout=subfiles;stripe_size=65536;subfiles=1;write_behind=0", sum);
    free(image);
    image = NULL, image_size = 0;
    uint64_t      g = 7;
    tagg_config_t cfg;
    tagg_file_t  *f  = open_file(path, cfgtext, TAGG_OPEN_RDWR | TAGG_OPEN_CREAT | TAGG_OPEN_TRUNC, &cfg);
    int           rc = put(f, 0, 0, 4 * S + 1000, &g);
    rc |= tagg_file_close(f);
    tagg_config_clear(&cfg);
    check(rc == 0, "run: one subfile, 4 stripes and 1000 bytes written");
    with_summary(cfgtext, sizeof cfgtext, "layout=subfiles", sum);
    f          = open_file(path, cfgtext, 0, &cfg);
    int first  = read_piece(f, S / 2 + 10, S);       /* stripes 0 and 1: blocks 8..15 and 0..8 */
    int inside = read_piece(f, S / 2 + 20, S - 100); /* from the run's buffer */
    MPI_Barrier(MPI_COMM_WORLD);
    nsub = 1;
    flip(path, 0, 2 * S + 3 * B + 7);
    tagg_err_sink_t sink;
    memset(&sink, 0, sizeof sink);
    tagg_err_capture(&sink);
    int hit = read_piece(f, 2 * S - 100, 5 * B); /* stripe 1's block 15, stripe 2's blocks 0..4: fails at 3 */
    tagg_err_capture(NULL);
    H5Eclear2(H5E_DEFAULT);
    rc = tagg_file_close(f);
    tagg_config_clear(&cfg);
    flip(path, 0, 2 * S + 3 * B + 7);
    nsub  = 2;
    int named = strstr(sink.msg, "CHECKSUM MISMATCH") && strstr(sink.msg, "stripe 2, block 3 ");
    snprintf(what, sizeof what, "run: across stripes read right (%d), again from the buffer (%d), the changed block fails (%d) "
             "naming it ('%.160s')", first, inside, hit, sink.msg);
    check(first == 1 && inside == 1 && hit == -1 && named && rc == 0, what);
    long v[3] = {-1, -1, -1};
    if (rank == 0)
        v[0] = summary_field(sum, "sf_verified="), v[1] = summary_field(sum, "sf_blocks="), v[2] = summary_field(sum, "sf_from_copy="),
        unlink(sum);
    MPI_Bcast(v, 3, MPI_LONG, 0, MPI_COMM_WORLD);
    long want_b = (17 + 4) * (long)nranks + 1; /* and block 0 of stripe 0, shared at open */
    snprintf(what, sizeof what, "run: sf_verified=%ld sf_blocks=%ld sf_from_copy=%ld (want 0, %ld, %d)", v[0], v[1], v[2],
             want_b, nranks);
    check(v[0] == 0 && v[1] == want_b && v[2] == nranks, what);
    if (rank == 0) {
        char sub[1200];
        snprintf(sub, sizeof sub, "%s.tagg.0of1", path), unlink(sub);
        unlink(path);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Flips one byte of subfile k at local offset at (rank 0), back when undo. */
static void flip(const char *path, int k, uint64_t at)
{
    if (rank == 0) {
        char sub[1200];
        snprintf(sub, sizeof sub, "%s.tagg.%dof%d", path, k, nsub);
        int           fd = open(sub, O_RDWR);
        unsigned char c  = 0;
        if (fd < 0 || pread(fd, &c, 1, (off_t)at) != 1)
            fprintf(stderr, "cannot read %s\n", sub);
        c ^= 0x40;
        if (fd < 0 || pwrite(fd, &c, 1, (off_t)at) != 1)
            fprintf(stderr, "cannot write %s\n", sub);
        if (fd >= 0)
            close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* want_pre: 1 some bytes are read back before a rewrite of them (sf_pre_read
 * > 0), 0 none (every rewrite is of exactly one remembered write), -1 either */
static void one_case(const char *dir, const char *name, int blocks, int overlap, int cut, int exact, int want_reread,
                     int want_pre)
{
    char path[1024], sum[1100], cfgtext[1400], what[600];
    snprintf(path, sizeof path, "%s/sf_compose_%s.h5", dir, name);
    snprintf(sum, sizeof sum, "%s/sf_compose_%s.summary", dir, name);
    char base[128];
    snprintf(base, sizeof base, "layout=subfiles;stripe_size=%llu;subfiles=2;write_behind=0", (unsigned long long)S);
    with_summary(cfgtext, sizeof cfgtext, base, sum);
    free(image);
    image = NULL, image_size = 0;
    uint64_t      g = 99 + (uint64_t)blocks;
    tagg_config_t cfg;
    tagg_file_t  *f  = open_file(path, cfgtext, TAGG_OPEN_RDWR | TAGG_OPEN_CREAT | TAGG_OPEN_TRUNC, &cfg);
    int           rc = interleaved(f, blocks, exact, &g);
    uint64_t      b  = S / (uint64_t)blocks;
    if (overlap) { /* rank 1 over rank 0's first block of stripe 2, and past it */
        MPI_Barrier(MPI_COMM_WORLD);
        rc |= put(f, 1, 2 * S + b / 2, b, &g);
    }
    if (cut) { /* through rank 0's first block of stripe 7, out again, then more */
        MPI_Barrier(MPI_COMM_WORLD);
        uint64_t at = 7 * S + b / 2;
        rc |= tagg_file_set_size(f, at);
        memset(image + at, 0, (size_t)(image_size - at));
        rc |= tagg_file_set_size(f, 8 * S + 100);
        image_size = 8 * S + 100;
        rc |= put(f, nranks - 1, 7 * S + b, b, &g);
    }
    /* a final size inside a stripe */
    uint64_t end = image_size + S / 3;
    rc |= tagg_file_set_size(f, end);
    image        = realloc(image, (size_t)end);
    memset(image + image_size, 0, (size_t)(end - image_size));
    image_size = end;
    rc |= tagg_file_close(f);
    tagg_config_clear(&cfg);
    snprintf(what, sizeof what, "%s: writes and close succeed", name);
    check(rc == 0, what);

    long v[3] = {-1, -1, -1};
    if (rank == 0)
        v[0] = summary_field(sum, "sf_composed="), v[1] = summary_field(sum, "sf_reread="),
        v[2] = summary_field(sum, "sf_pre_read=");
    MPI_Bcast(v, 3, MPI_LONG, 0, MPI_COMM_WORLD);
    snprintf(what, sizeof what, "%s: sf_pre_read=%ld (want %s)", name, v[2],
             want_pre > 0 ? "> 0: partial rewrites read their bytes first" : want_pre == 0 ? "0: exact rewrites" : ">= 0");
    check(want_pre > 0 ? v[2] > 0 : want_pre == 0 ? v[2] == 0 : v[2] >= 0, what);
    if (want_reread)
        snprintf(what, sizeof what, "%s: sf_composed=%ld sf_reread=%ld (want stripes read back)", name, v[0], v[1]);
    else
        snprintf(what, sizeof what, "%s: sf_composed=%ld sf_reread=%ld (want %d composed, none read back)", name, v[0],
                 v[1], (int)(image_size / S + (image_size % S != 0)));
    check(want_reread ? v[1] >= 1 && v[0] >= 0 : v[1] == 0 && v[0] == (long)(image_size / S + (image_size % S != 0)),
          what);

    if (S >= 65536) { /* format 4: every stripe's blocks recorded (composed, whole, or read back) */
        tagg_sf_index_t ix;
        char            err[512] = "";
        uint64_t        without  = UINT64_MAX;
        int             ok       = tagg_sf_index_read(path, &ix, err, sizeof err) == 0;
        for (uint64_t i = 0; ok && i < ix.nst && without == UINT64_MAX; i++)
            if (!tagg_sf_blocks_find(ix.blk, ix.nblk, ix.st[i].j))
                without = ix.st[i].j;
        snprintf(what, sizeof what, "%s: the index is format 4 with block checksums for all %llu stripes (%s; first without: %lld)",
                 name, ok ? (unsigned long long)ix.nst : 0ULL, ok ? "read" : err,
                 without == UINT64_MAX ? -1LL : (long long)without);
        check(ok && ix.version == TAGG_SF_VERSION_4 && ix.block == S / 16 && ix.nst > 0 && without == UINT64_MAX, what);
        if (ok)
            tagg_sf_index_free(&ix);
    }
    int equal = 0;
    rc        = read_all(path, "layout=subfiles", &equal);
    snprintf(what, sizeof what, "%s: a verifying read-only open reads back the image byte for byte (%llu bytes)", name,
             (unsigned long long)image_size);
    check(rc == 0 && equal, what);
    if (!strcmp(name, "apart"))
        S >= 65536 ? blocks_case(dir, path) : pieces_case(dir, path);
    /* stripe 3 lives in subfile 1 at local offset S (3 / 2 = 1): one flipped byte must fail the read */
    flip(path, 1, S + 17);
    rc = read_all(path, "layout=subfiles", &equal);
    snprintf(what, sizeof what, "%s: after a byte of stripe 3 is flipped, the read fails (checksum)", name);
    check(rc < 0 && !equal, what);
    flip(path, 1, S + 17);
    if (rank == 0) {
        char sub[1200];
        unlink(sum);
        for (int k = 0; k < 2; k++)
            snprintf(sub, sizeof sub, "%s.tagg.%dof2", path, k), unlink(sub);
        unlink(path);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc != 2 || nranks < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n N (N >= 2) test_sf_compose DIR\n");
        MPI_Finalize();
        return 2;
    }
    /* blocks per stripe: 2 * nranks + 1 gives each rank 2-3 pieces (kept apart); 4 * NOTE_SPANS * nranks more than a note keeps */
    one_case(argv[1], "apart", 2 * nranks + 1, 0, 0, 0, 0, 1);
    one_case(argv[1], "exact", 2 * nranks + 1, 0, 0, 1, 0, 0);
    one_case(argv[1], "overlap", 2 * nranks + 1, 1, 0, 0, 1, 1);
    one_case(argv[1], "cut", 2 * nranks + 1, 0, 1, 0, 1, 1);
    one_case(argv[1], "fine", 64, 0, 0, 0, 1, -1);
    S = 65536; /* format 4: the same cases with block checksums */
    one_case(argv[1], "apart", 2 * nranks + 1, 0, 0, 0, 0, 1);
    one_case(argv[1], "exact", 2 * nranks + 1, 0, 0, 1, 0, 0);
    one_case(argv[1], "overlap", 2 * nranks + 1, 1, 0, 0, 1, 1);
    one_case(argv[1], "cut", 2 * nranks + 1, 0, 1, 0, 1, 1);
    one_case(argv[1], "fine", 64, 0, 0, 0, 1, -1);
    run_case(argv[1]);
    free(image);
    if (rank == 0)
        printf("%d passed, %d failed\n", passed, failed);
    MPI_Finalize();
    return failed ? 1 : 0;
}
