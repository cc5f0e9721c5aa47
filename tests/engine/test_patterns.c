/* Byte-exact checks of the aggregation layer over random request patterns.
 *
 *   test_patterns NPATTERNS SEED CONFIG [DIR]
 *
 * For each pattern every rank draws (from a generator all ranks share, so each
 * rank knows every rank's request) a list of extents: random sizes including
 * zero, random or interleaved offsets, unaligned, some ranks empty, requests
 * larger than all aggregation buffers together, and now and then a rewrite of a
 * range written before. Each rank writes its extents collectively through the
 * core entry point (tagg_io_write) with configuration CONFIG, reads them back
 * collectively (tagg_io_read) into fresh memory and compares; after closing,
 * rank 0 reads the whole file with POSIX (shared layout) or through a fresh open
 * (any layout) and compares it byte for byte with the image every rank built.
 * Prints "N passed, M failed" and exits non-zero on any mismatch. With async=1
 * in CONFIG the writes are staged and the read-back must see them (the file
 * must really be asynchronous: a fallback fails the test). With
 * TAGG_TEST_SLOW_RANK=r, rank r's asynchronous workers start each job 30 ms late. */
#include "config.h"
#include "error.h"
#include "io.h"
#include "sf_stripe_codec.h"

#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t rng_state;
static uint64_t rnd(void) /* xorshift64*, identical on every rank */
{
    rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}
static uint64_t rnd_in(uint64_t lo, uint64_t hi) { return lo + rnd() % (hi - lo + 1); }

typedef struct {
    uint64_t off, len;
} ext_t;

/* The extents of every rank for one pattern: ext[r][0..n[r]-1]. */
typedef struct {
    int      nranks;
    ext_t  **ext;
    size_t  *n;
    uint64_t size; /* file image size */
} pattern_t;

static void pattern_free(pattern_t *p)
{
    for (int r = 0; r < p->nranks; r++)
        free(p->ext[r]);
    free(p->ext), free(p->n);
}

static void add(pattern_t *p, int r, uint64_t off, uint64_t len)
{
    if (!len)
        return;
    p->ext[r]            = realloc(p->ext[r], (p->n[r] + 1) * sizeof(ext_t));
    p->ext[r][p->n[r]++] = (ext_t){off, len};
    if (off + len > p->size)
        p->size = off + len;
}

/* Kinds: 0 contiguous blocks in rank order, 1 interleaved (round-robin records),
 * 2 random disjoint pieces, 3 large blocks (many rounds), 4 strided with holes. */
static void make_pattern(pattern_t *p, int nranks, int kind, uint64_t base)
{
    memset(p, 0, sizeof *p);
    p->nranks = nranks;
    p->ext    = calloc((size_t)nranks, sizeof *p->ext);
    p->n      = calloc((size_t)nranks, sizeof *p->n);
    uint64_t off = base;
    switch (kind) {
        case 0:
            for (int r = 0; r < nranks; r++) {
                uint64_t len = rnd() % 4 == 0 ? 0 : rnd_in(1, 100000);
                add(p, r, off, len);
                off += len + (rnd() % 3 == 0 ? rnd_in(0, 5000) : 0);
            }
            break;
        case 1: {
            uint64_t rec = rnd_in(1, 4096), nrec = rnd_in(1, 64);
            for (uint64_t k = 0; k < nrec; k++)
                for (int r = 0; r < nranks; r++, off += rec)
                    add(p, r, off, rec);
            break;
        }
        case 2: {
            uint64_t n = rnd_in(1, 200);
            for (uint64_t k = 0; k < n; k++) {
                uint64_t len = rnd_in(1, 20000);
                add(p, (int)(rnd() % (uint64_t)nranks), off + rnd_in(0, 3000), len);
                off = p->size;
            }
            break;
        }
        case 3:
            for (int r = 0; r < nranks; r++) {
                uint64_t len = rnd_in(64 << 10, 640 << 10); /* several rounds of small buffers */
                add(p, r, off, len);
                off += len;
            }
            break;
        case 4: {
            uint64_t blk = rnd_in(1, 777), stride = blk * (uint64_t)nranks + rnd_in(1, 999), cnt = rnd_in(1, 300);
            for (int r = 0; r < nranks; r++)
                for (uint64_t k = 0; k < cnt; k++)
                    add(p, r, off + k * stride + (uint64_t)r * blk, blk);
            break;
        }
    }
}

/* With compression= in CONFIG, two regions of every three 4 KiB are runs of 64 equal bytes (they compress) and
 * the third keeps the scrambled values (it does not: stored raw), so both stored forms meet. */
static int      compressible;
static uint64_t zsum; /* bytes given to a codec over the run (TAGG_TEST_EXPECT_COMP) */
static uint64_t diow, dior; /* bytes this rank wrote and read with O_DIRECT over the run (TAGG_TEST_EXPECT_DIO) */
static uint64_t rchits;     /* reads this rank's read-only opens served from kept covers (TAGG_TEST_EXPECT_RC) */
static uint64_t overlapped; /* aggregator rounds whose file access ran on the helper thread (TAGG_TEST_EXPECT_OVERLAP) */
static uint64_t handles[3]; /* this rank's own handles of shared files, POSIX and MPI-IO, POSIX opened early (TAGG_TEST_EXPECT_FILE_IO) */
/* A run-wide count (every rank's `mine` summed) against the variable `var`:
 * a non-zero value wants some, 0 wants none; unset, nothing is checked.
 * Collective. Returns 1 when the count is not what was asked. */
static int expect_total(const char *var, uint64_t mine, const char *what, int rank)
{
    uint64_t    all = 0;
    const char *want = getenv(var);
    MPI_Allreduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (want && (atoi(want) ? all == 0 : all != 0)) {
        if (rank == 0)
            fprintf(stderr, "%s=%s: %s in the whole run: %llu\n", var, want, what, (unsigned long long)all);
        return 1;
    }
    if (want && rank == 0)
        printf("%s: %llu\n", what, (unsigned long long)all);
    return 0;
}

static unsigned char value(int pat, uint64_t off)
{
    if (compressible && (off >> 12) % 3 != 2)
        return (unsigned char)((off >> 6) * 31u + (unsigned)pat * 17u);
    return (unsigned char)((off * 2654435761u) >> 13) ^ (unsigned char)pat;
}

/* compression: a later read-write open in which ranks rewrite small pieces
 * independently (partial writes of compressed stripes: expanded, several
 * ranks in one stripe), then a fresh read-only open checks every byte. */
static int partial_rewrite(const char *path, const tagg_config_t *cfg, int pat, int rank, int size, unsigned char *image,
                           uint64_t fsize)
{
    int      ok = 1;
    uint64_t ngroups = rnd_in(1, 12);
    tagg_file_t *f = tagg_file_open(path, TAGG_OPEN_RDWR, MPI_COMM_WORLD, MPI_INFO_NULL, cfg);
    if (!f)
        return H5Eprint2(H5E_DEFAULT, stderr), 0;
    /* groups of adjacent pieces, one per rank, written at once: several ranks expand and
     * write one stripe concurrently. Pieces of consecutive groups may overlap (written by
     * different ranks): as MPI-IO asks for conflicting accesses, a sync and a barrier order
     * them. A barrier alone would not with async=1, where a write is only staged when the
     * call returns (it lost updates when a worker of the earlier writer ran late) */
    for (uint64_t g = 0; g < ngroups; g++) {
        uint64_t base = rnd_in(0, fsize - 1), len = rnd_in(1, 3000);
        for (int r = 0; r < size; r++) {
            uint64_t off = base + (uint64_t)r * len, n = len;
            if (off >= fsize)
                break;
            if (off + n > fsize)
                n = fsize - off;
            for (uint64_t b = 0; b < n; b++) /* every rank keeps the image */
                image[off + b] = value(pat + 100 + (int)g, off + b);
            if (r == rank) {
                tagg_extents_t x;
                tagg_extents_init(&x);
                tagg_extents_push(&x, off, n, (char *)image + off);
                if (tagg_io_write(f, &x, TAGG_RAW, false) < 0)
                    H5Eprint2(H5E_DEFAULT, stderr), ok = 0;
                tagg_extents_free(&x);
            }
        }
        if (tagg_file_sync(f) < 0)
            H5Eprint2(H5E_DEFAULT, stderr), ok = 0;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (tagg_file_close(f) < 0)
        H5Eprint2(H5E_DEFAULT, stderr), ok = 0;
    if (!ok)
        fprintf(stderr, "rank %d pattern %d: the partial rewrites failed\n", rank, pat);
    f = tagg_file_open(path, 0, MPI_COMM_WORLD, MPI_INFO_NULL, cfg);
    if (!f)
        return H5Eprint2(H5E_DEFAULT, stderr), 0;
    char *back = malloc(fsize + 1);
    if (rank == (int)(pat % size)) { /* any rank reads it all */
        tagg_extents_t all;
        tagg_extents_init(&all);
        tagg_extents_push(&all, 0, fsize, back);
        if (tagg_io_read(f, &all, TAGG_RAW, false) < 0)
            H5Eprint2(H5E_DEFAULT, stderr), ok = 0;
        tagg_extents_free(&all);
        for (uint64_t b = 0; b < fsize && ok; b++)
            if ((unsigned char)back[b] != image[b]) {
                fprintf(stderr, "pattern %d after partial rewrites: file byte %llu is %u, expected %u\n", pat,
                        (unsigned long long)b, (unsigned char)back[b], image[b]);
                ok = 0;
            }
    }
    free(back);
    if (tagg_file_close(f) < 0)
        ok = 0;
    return ok;
}

int main(int argc, char **argv)
{
    int rank, size, fails = 0, passes = 0, provided;
    /* async=1 needs MPI_THREAD_MULTIPLE; the other runs keep the single-threaded level */
    int want = argc > 3 && (strstr(argv[3], "async=1") || strstr(argv[3], "async=on")) ? MPI_THREAD_MULTIPLE
                                                                                      : MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, want, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 4) {
        if (rank == 0)
            fprintf(stderr, "usage: %s NPATTERNS SEED CONFIG [DIR]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    /* TAGG_TEST_SLOW_RANK=r: rank r's asynchronous workers start each job late (the
     * TAGG_FAULT_ASYNC_DELAY_MS test switch, set before the first open starts them), so
     * its staged writes land after later writes of the other ranks unless they are ordered */
    const char *slow = getenv("TAGG_TEST_SLOW_RANK");
    if (slow && atoi(slow) == rank)
        setenv("TAGG_FAULT_ASYNC_DELAY_MS", "30", 1);
    int           npat = atoi(argv[1]);
    const char   *dir  = argc > 4 ? argv[4] : ".";
    tagg_config_t cfg;
    char          err[512], path[4096];
    if (tagg_config_build(&cfg, NULL, argv[3], err, sizeof err) < 0) {
        if (rank == 0)
            fprintf(stderr, "bad config: %s\n", err);
        MPI_Finalize();
        return 2;
    }
    /* one file per case (ranks, seed, configuration, slow rank: r4_comp_async and
     * its _slow twin differ only there): cases run in parallel under ctest -j */
    uint32_t    tag = 2166136261u;
    const char *slow_env = getenv("TAGG_TEST_SLOW_RANK");
    char        key[2048];
    snprintf(key, sizeof key, "%s|%s", argv[3], slow_env ? slow_env : "");
    for (const char *c = key; *c; c++)
        tag = (tag ^ (unsigned char)*c) * 16777619u;
    snprintf(path, sizeof path, "%s/patterns-%d-%s-%08x.bin", dir, size, argv[2], (unsigned)tag);
    compressible = cfg.compression != TAGG_COMP_NONE;
    rng_state = (uint64_t)strtoull(argv[2], NULL, 10) * 0x9E3779B97F4A7C15ULL + 1;

    for (int pat = 0; pat < npat; pat++) {
        int       kind = (int)(rnd() % 5), ok = 1;
        unsigned char *image = NULL; /* compression: the file's bytes, for the partial rewrites */
        pattern_t p;
        make_pattern(&p, size, kind, rnd_in(0, 100000));
        /* now and then a second write of a range already written (same pattern, new values) */
        int rewrite = rnd() % 8 == 0;

        tagg_file_t *f = tagg_file_open(path, TAGG_OPEN_RDWR | TAGG_OPEN_CREAT | TAGG_OPEN_TRUNC, MPI_COMM_WORLD,
                                        MPI_INFO_NULL, &cfg);
        if (!f) {
            H5Eprint2(H5E_DEFAULT, stderr);
            fails++;
            pattern_free(&p);
            break;
        }
        if (cfg.async && !f->async) { /* a silent fallback to synchronous mode is a failure */
            fprintf(stderr, "rank %d: async=1 asked for, the file is synchronous\n", rank);
            fails++;
        }
        size_t         n = p.n[rank];
        tagg_extents_t x;
        tagg_extents_init(&x);
        char *mem = malloc(1 + p.size), *back = malloc(1 + p.size);
        for (int pass = 0; pass <= rewrite; pass++) {
            tagg_extents_reset(&x);
            /* memory holds the extents back to back, in reverse order, so memory and file order differ */
            uint64_t m = 0;
            for (size_t i = n; i-- > 0;) {
                for (uint64_t b = 0; b < p.ext[rank][i].len; b++)
                    mem[m + b] = (char)value(pat + pass, p.ext[rank][i].off + b);
                tagg_extents_push(&x, p.ext[rank][i].off, p.ext[rank][i].len, mem + m);
                m += p.ext[rank][i].len;
            }
            if (tagg_io_write(f, &x, TAGG_RAW, true) < 0) {
                H5Eprint2(H5E_DEFAULT, stderr);
                ok = 0;
            }
        }
        /* compression=auto: the test says whether the model should have compressed (TAGG_TEST_EXPECT_COMP=1/0) */
        const char *expect = getenv("TAGG_TEST_EXPECT_COMP");
        if (expect && p.size) {
            uint64_t zs = f->stats.comp_stripes, all = 0;
            MPI_Allreduce(&zs, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
            uint64_t logical = f->stats.comp_logical, lall = 0;
            MPI_Allreduce(&logical, &lall, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
            zsum += lall;
            /* the summary names the codec auto chose: a real one on the slow file system, none on the fast one */
            char line[2048], name[64] = "";
            const char *cc = tagg_summary_format(f, &f->stats, line, sizeof line) > 0 ? strstr(line, " comp_codec=") : NULL;
            if (cc)
                sscanf(cc, " comp_codec=%63s", name);
            if (atoi(expect) ? !tagg_sfz_id(name) : strcmp(name, "none") != 0) {
                fprintf(stderr, "rank %d pattern %d: TAGG_TEST_EXPECT_COMP=%s but the summary says comp_codec=%s: %s\n",
                        rank, pat, expect, cc ? name : "(missing)", line);
                ok = 0;
            }
            if (!atoi(expect) && lall != 0) { /* no whole stripe given to a codec (1: checked over the run) */
                if (rank == 0)
                    fprintf(stderr, "pattern %d: TAGG_TEST_EXPECT_COMP=%s but %llu bytes (%llu stripes compressed) went through a codec\n",
                            pat, expect, (unsigned long long)lall, (unsigned long long)all);
                ok = 0;
            }
        }
        /* collective read into other memory */
        tagg_extents_reset(&x);
        uint64_t m = 0;
        for (size_t i = 0; i < n; i++) {
            tagg_extents_push(&x, p.ext[rank][i].off, p.ext[rank][i].len, back + m);
            m += p.ext[rank][i].len;
        }
        memset(back, 0xEE, 1 + p.size);
        if (tagg_io_read(f, &x, TAGG_RAW, true) < 0)
            ok = 0;
        m = 0;
        for (size_t i = 0; i < n && ok; i++) {
            for (uint64_t b = 0; b < p.ext[rank][i].len && ok; b++)
                if ((unsigned char)back[m + b] != value(pat + rewrite, p.ext[rank][i].off + b)) {
                    fprintf(stderr, "rank %d pattern %d kind %d: read-back byte at %llu differs\n", rank, pat, kind,
                            (unsigned long long)(p.ext[rank][i].off + b));
                    ok = 0;
                }
            m += p.ext[rank][i].len;
        }
        /* direct_io=on: the bytes moved with O_DIRECT, summed over the run, must not stay 0 */
        diow += f->stats.dio_bytes[1], dior += f->stats.dio_bytes[0];
        overlapped += f->stats.overlapped;
        handles[0] += f->stats.handles[0], handles[1] += f->stats.handles[1], handles[2] += f->stats.handles[2];
        if (tagg_file_close(f) < 0)
            H5Eprint2(H5E_DEFAULT, stderr), ok = 0;
        tagg_extents_free(&x);

        /* the whole file against the image (rank 0, through a fresh collective open and independent reads) */
        f = tagg_file_open(path, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &cfg);
        if (!f)
            H5Eprint2(H5E_DEFAULT, stderr), ok = 0;
        else {
            if (rank == 0) {
                tagg_extents_t all;
                tagg_extents_init(&all);
                tagg_extents_push(&all, 0, p.size, back);
                if (tagg_io_read(f, &all, TAGG_RAW, false) < 0)
                    H5Eprint2(H5E_DEFAULT, stderr), ok = 0;
                tagg_extents_free(&all);
                char *written = calloc(1, p.size + 1);
                image         = compressible ? calloc(1, p.size + 1) : NULL;
                for (int r = 0; r < size; r++)
                    for (size_t i = 0; i < p.n[r]; i++)
                        for (uint64_t b = 0; b < p.ext[r][i].len; b++)
                            written[p.ext[r][i].off + b] = 1;
                /* Never-written bytes must read as zeros through tagg's engine; MPI-IO
                 * leaves them undefined (ROMIO's read-modify-write past the end of file
                 * writes whatever its buffer held), so the mpiio backend is not held to it. */
                int holes_defined = cfg.backend != TAGG_BACKEND_MPIIO;
                for (uint64_t b = 0; b < p.size && ok; b++) {
                    if (!written[b] && !holes_defined)
                        continue;
                    unsigned char want = written[b] ? value(pat + rewrite, b) : 0;
                    if (image)
                        image[b] = want;
                    if ((unsigned char)back[b] != want) {
                        fprintf(stderr, "pattern %d kind %d: file byte %llu is %u, expected %u\n", pat, kind,
                                (unsigned long long)b, (unsigned char)back[b], want);
                        ok = 0;
                    }
                }
                free(written);
                /* pieces of it again, each read twice (a read-only open may serve re-reads from the
                 * covers it keeps: rcache.h), against what the whole read returned; their own
                 * generator, so that the ranks' pattern streams stay the same */
                uint64_t g = 0x9E3779B97F4A7C15ULL * (uint64_t)(pat + 1);
                for (int i = 0; i < 6 && ok && p.size; i++) {
                    g = g * 6364136223846793005ULL + 1442695040888963407ULL;
                    uint64_t off = (g >> 11) % p.size, room = p.size - off, cap = room < (5u << 20) ? room : (5u << 20);
                    g = g * 6364136223846793005ULL + 1442695040888963407ULL;
                    uint64_t n = 1 + (g >> 11) % cap;
                    char    *piece = malloc(n);
                    for (int twice = 0; twice < 2 && ok && piece; twice++) {
                        tagg_extents_t one;
                        tagg_extents_init(&one);
                        tagg_extents_push(&one, off, n, piece);
                        if (tagg_io_read(f, &one, TAGG_RAW, false) < 0)
                            H5Eprint2(H5E_DEFAULT, stderr), ok = 0;
                        tagg_extents_free(&one);
                        if (ok && memcmp(piece, back + off, (size_t)n) != 0) {
                            fprintf(stderr, "pattern %d kind %d: read %d of %llu bytes at %llu differs from the whole read\n",
                                    pat, kind, twice + 1, (unsigned long long)n, (unsigned long long)off);
                            ok = 0;
                        }
                    }
                    free(piece);
                }
            }
            rchits += f->stats.rc_reads[0];
            overlapped += f->stats.overlapped;
            handles[0] += f->stats.handles[0], handles[1] += f->stats.handles[1], handles[2] += f->stats.handles[2];
            if (tagg_file_close(f) < 0)
                H5Eprint2(H5E_DEFAULT, stderr), ok = 0;
        }
        if (compressible && f && p.size) { /* every rank needs the image (rank 0 built it) */
            if (rank != 0)
                image = calloc(1, p.size + 1);
            MPI_Bcast(image, (int)p.size, MPI_UNSIGNED_CHAR, 0, MPI_COMM_WORLD);
            int ok0 = ok;
            MPI_Allreduce(&ok0, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            if (ok && !partial_rewrite(path, &cfg, pat, rank, size, image, p.size))
                ok = 0;
        }
        free(image);
        int all_ok;
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        all_ok ? passes++ : fails++;
        if (!all_ok && rank == 0)
            fprintf(stderr, "FAIL pattern %d (kind %d, %s, %s)\n", pat, kind, rewrite ? "written twice" : "written once", argv[3]);
        free(mem), free(back);
        pattern_free(&p);
    }
    uint64_t dio[2] = {diow, dior}, dioall[2] = {0, 0};
    MPI_Allreduce(dio, dioall, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    /* TAGG_TEST_EXPECT_DIO=rw: both; =r: reads (compressed subfiles: whole stripes go through the codec);
     * =w: writes, and no read (direct_io=write) */
    const char *xdio = getenv("TAGG_TEST_EXPECT_DIO");
    if (xdio && ((strchr(xdio, 'w') && !dioall[0]) || (strchr(xdio, 'r') ? !dioall[1] : dioall[1] != 0))) {
        if (rank == 0)
            fprintf(stderr, "TAGG_TEST_EXPECT_DIO: %llu bytes written and %llu read with O_DIRECT in the whole run\n",
                    (unsigned long long)dioall[0], (unsigned long long)dioall[1]);
        fails++;
    } else if (xdio && rank == 0)
        printf("O_DIRECT: %llu bytes written, %llu read\n", (unsigned long long)dioall[0], (unsigned long long)dioall[1]);
    /* TAGG_TEST_EXPECT_RC=1: the read-only checks' re-reads were served from kept covers */
    fails += expect_total("TAGG_TEST_EXPECT_RC", rchits, "re-reads from kept covers", rank);
    /* TAGG_TEST_EXPECT_OVERLAP=1: some aggregator rounds' file access ran on the
     * helper thread (overlap=1, engine_move.c); =0: none did (MPI-IO handles,
     * whose accesses are MPI calls, or overlap=0) */
    fails += expect_total("TAGG_TEST_EXPECT_OVERLAP", overlapped, "rounds overlapped", rank);
    /* TAGG_TEST_EXPECT_FILE_IO=posix|mpiio: every handle of the run was of that
     * kind; with POSIX, the other ranks' descriptors of the existing files the
     * run reopens (its read-only checks) were opened early (while rank 0
     * looked at the path), and never with MPI-IO */
    uint64_t    hall[3] = {0, 0, 0};
    const char *xfio    = getenv("TAGG_TEST_EXPECT_FILE_IO");
    MPI_Allreduce(handles, hall, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (xfio) {
        int want = !strcmp(xfio, "mpiio");
        if (!hall[want] || hall[!want] || (want ? hall[2] != 0 : hall[2] == 0)) {
            if (rank == 0)
                fprintf(stderr, "TAGG_TEST_EXPECT_FILE_IO=%s: %llu POSIX descriptors (%llu opened early) and %llu MPI-IO handles\n",
                        xfio, (unsigned long long)hall[0], (unsigned long long)hall[2], (unsigned long long)hall[1]);
            fails++;
        }
        else if (rank == 0)
            printf("file_io: %llu POSIX descriptors (%llu opened early), %llu MPI-IO handles\n", (unsigned long long)hall[0],
                   (unsigned long long)hall[2], (unsigned long long)hall[1]);
    }
    if (getenv("TAGG_TEST_EXPECT_COMP") && atoi(getenv("TAGG_TEST_EXPECT_COMP")) && zsum == 0) {
        if (rank == 0)
            fprintf(stderr, "TAGG_TEST_EXPECT_COMP=1 but no stripe went through a codec in the whole run\n");
        fails++;
    }
    if (rank == 0) {
        unlink(path);
        printf("%d ranks, config '%s': %d passed, %d failed\n", size, argv[3], passes, fails);
    }
    tagg_config_clear(&cfg);
    MPI_Finalize();
    return fails ? 1 : 0;
}
