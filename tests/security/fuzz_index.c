/* Fuzzing of the subfile index parser and the path rule: a bounded,
 * deterministic mutation loop (no libFuzzer on the build machines).
 *
 *   fuzz_index SECONDS [SEED]     mutate valid indexes of formats 1 to 4 for
 *                                 SECONDS (and at most 50 million inputs),
 *                                 print the number of executions and findings
 *
 * Each input is parsed; half of the mutated inputs get a correct index
 * checksum again (as an attacker would make), so that the mutations reach the
 * fields behind it. For every accepted input: formatting it again and parsing
 * that gives the same index (round trip), and the path rule, when it accepts
 * the names, yields only derived paths (beside the index, or in this user's
 * private node-local directory). A crash, an ASan/UBSan report or a broken
 * invariant is a finding (exit 1). In the test suite: `fuzz_index 10`. */
#include "sf_path.h"
#include "subfile_index.h"
#include "sf_stripe_codec.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define INDEX "/pfs/run/x.h5"
#define MAXLEN (1 << 16)

static uint64_t rng_state;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return rng_state;
}

static char *seeds[8];
static size_t seed_len[8];
static int    nseeds;

static void add_seed(tagg_sf_index_t *ix)
{
    char  *t;
    size_t l;
    if (tagg_sf_index_format(ix, &t, &l) < 0)
        exit(2);
    seeds[nseeds] = t, seed_len[nseeds++] = l;
    tagg_sf_index_free(ix);
}

static void make_seeds(void)
{
    for (unsigned v = 1; v <= 3; v++)
        for (int nvr = 0; nvr < 2; nvr++) {
            tagg_sf_index_t ix;
            uint32_t        N = nvr ? 2 : 3;
            if (v == 2 && !nvr)
                continue;
            tagg_sf_index_init(&ix, 4096, N);
            ix.version = v, ix.nvr = nvr, ix.closed = 1, ix.logical_size = 78724;
            if (nvr)
                ix.meta.name = tagg_sf_meta_name(INDEX), ix.meta.size = 5000, ix.meta.crc = 77;
            for (uint32_t k = 0; k < N; k++) {
                char node[16];
                snprintf(node, sizeof node, "node%u", (unsigned)k);
                if (nvr) {
                    ix.sub[k].node = strdup(node);
                    if (v == 3)
                        ix.sub[k].name = tagg_sf_path_nvr("/local", node, INDEX, k, N);
                    else {
                        char p[256];
                        snprintf(p, sizeof p, "/local/tagg-nvr.%s/x.h5.0123456789abcdef.%uof%u", node, (unsigned)k, (unsigned)N);
                        ix.sub[k].name = strdup(p);
                    }
                }
                else
                    ix.sub[k].name = tagg_sf_default_name(INDEX, k, N);
                ix.sub[k].size = tagg_sf_subfile_size(78724, 4096, N, k), ix.sub[k].crc = 1000 + k;
            }
            if (v == 3) {
                ix.nst = 4, ix.st = calloc(4, sizeof *ix.st);
                for (int i = 0; i < 4; i++)
                    ix.st[i].j = (uint64_t)(i * 5), ix.st[i].crc = rnd();
                if (!nvr) /* compressed stripes (issue 15): "s J CRC ENC OFFSET STORED LOGICAL" */
                    ix.st[1].form = TAGG_SFZ_FORM(TAGG_SFZ_ZSTD, 1234), ix.st[2].form = TAGG_SFZ_FORM(TAGG_SFZ_BLOSC_LZ4, 41);
                if (nvr)
                    ix.nmst = 2, ix.mst = calloc(2, sizeof *ix.mst), ix.mst[0].j = 0, ix.mst[1].j = 1;
            }
            add_seed(&ix);
        }
    /* format 4: block checksums (64 KiB stripes, 4 KiB blocks), composing to their stripes' */
    tagg_sf_index_t ix;
    uint64_t        S = 65536, L = 5 * S + 5000;
    tagg_sf_index_init(&ix, S, 2);
    ix.closed = 1, ix.logical_size = L, ix.block = tagg_sf_block_size(S);
    for (uint32_t k = 0; k < 2; k++)
        ix.sub[k].name = tagg_sf_default_name(INDEX, k, 2), ix.sub[k].size = tagg_sf_subfile_size(L, S, 2, k);
    for (uint64_t j = 0; j < 6; j += j == 1 ? 3 : 1) { /* 0, 1, 4, 5: 5 the partial last one */
        uint64_t bc[TAGG_SF_BLOCKS], len = tagg_sf_stripe_len(L, S, j);
        unsigned nb = (unsigned)((len + ix.block - 1) / ix.block);
        for (unsigned b = 0; b < nb; b++)
            bc[b] = rnd();
        tagg_sf_stripe_append(&ix.st, &ix.nst, j, tagg_sf_blocks_compose(bc, len, ix.block));
        if (j != 4) /* one stripe without: checked whole */
            tagg_sf_blocks_append(&ix.blk, &ix.nblk, j, bc, nb);
    }
    add_seed(&ix);
}

static const char *tokens[] = {"\n", "/", "..", " ", "0", "18446744073709551616", "99999999999", "s ", "m ",
                               "subfile ", "node ", "state open\n", "/local/tagg-0/node0/", "../", "\xff", "pad ",
                               "\211HDF\r\n\032\n", "metadata ", "-1", "ffffffffffffffff", " zstd ", " lz4 ",
                               " blosc-zstd ", "4096", "40", "b ", "block_size 4096\n", "format 4\n", "65536"};

/* One mutation of buf (len bytes, room MAXLEN). */
static size_t mutate(char *buf, size_t len)
{
    size_t at = len ? (size_t)(rnd() % len) : 0;
    switch (rnd() % 8) {
    case 0: /* flip a bit */
        if (len)
            buf[at] ^= (char)(1u << (rnd() % 8));
        break;
    case 1: /* a byte from the interesting set */
        if (len)
            buf[at] = "\n/. 09\0\xff:x"[rnd() % 10];
        break;
    case 2: { /* insert a token */
        const char *t = tokens[rnd() % (sizeof tokens / sizeof *tokens)];
        size_t      n = strlen(t) ? strlen(t) : 1;
        if (len + n < MAXLEN) {
            memmove(buf + at + n, buf + at, len - at);
            memcpy(buf + at, t, n);
            len += n;
        }
        break;
    }
    case 3: { /* delete a range */
        size_t n = (size_t)(rnd() % 16) + 1;
        if (at + n <= len) {
            memmove(buf + at, buf + at + n, len - at - n);
            len -= n;
        }
        break;
    }
    case 4: { /* duplicate a range (a line, often) */
        size_t n = (size_t)(rnd() % 64) + 1;
        if (at + n <= len && len + n < MAXLEN) {
            memmove(buf + at + n, buf + at, len - at);
            len += n;
        }
        break;
    }
    case 5: /* truncate */
        len = at;
        break;
    case 6: { /* splice a piece of another seed */
        int    s = (int)(rnd() % (uint64_t)nseeds);
        size_t from = (size_t)(rnd() % seed_len[s]), n = (size_t)(rnd() % 80) + 1;
        if (from + n <= seed_len[s] && len + n < MAXLEN) {
            memmove(buf + at + n, buf + at, len - at);
            memcpy(buf + at, seeds[s] + from, n);
            len += n;
        }
        break;
    }
    default: /* a digit changed (numbers are most of the fields) */
        for (size_t i = at; i < len; i++)
            if (buf[i] >= '0' && buf[i] <= '9') {
                buf[i] = (char)('0' + rnd() % 10);
                break;
            }
    }
    return len;
}

/* Replaces the last line by a correct index_crc64 line. */
static size_t reseal(char *buf, size_t len)
{
    size_t end = len;
    while (end > 0 && buf[end - 1] == '\n')
        end--;
    while (end > 0 && buf[end - 1] != '\n')
        end--;
    if (end + 30 >= MAXLEN)
        return len;
    uint64_t c = tagg_crc64(0, buf, end);
    return end + (size_t)snprintf(buf + end, 30, "index_crc64 %016" PRIx64 "\n", c);
}

static int same(const tagg_sf_index_t *a, const tagg_sf_index_t *b)
{
    if (a->version != b->version || a->closed != b->closed || a->stripe != b->stripe || a->count != b->count ||
        a->logical_size != b->logical_size || a->nvr != b->nvr || a->nst != b->nst || a->nmst != b->nmst)
        return 0;
    for (uint32_t k = 0; k < a->count; k++)
        if (strcmp(a->sub[k].name, b->sub[k].name) || a->sub[k].size != b->sub[k].size ||
            (a->nvr && strcmp(a->sub[k].node, b->sub[k].node)))
            return 0;
    for (uint64_t i = 0; i < a->nst; i++)
        if (a->st[i].j != b->st[i].j || a->st[i].crc != b->st[i].crc)
            return 0;
    if (a->block != b->block || a->nblk != b->nblk ||
        (a->nblk && memcmp(a->blk, b->blk, (size_t)a->nblk * TAGG_SF_BREC * sizeof *a->blk)))
        return 0;
    return 1;
}

static unsigned long findings;
static void finding(const char *what, const char *buf, size_t len)
{
    findings++;
    fprintf(stderr, "FINDING: %s; input (%zu bytes):\n", what, len);
    fwrite(buf, 1, len < 2048 ? len : 2048, stderr);
    fputc('\n', stderr);
}

static int accepted;
static void one(const char *buf, size_t len)
{
    tagg_sf_index_t ix, back;
    char            err[1024], *t;
    size_t          l;
    if (tagg_sf_index_parse(buf, len, &ix, err, sizeof err) < 0) {
        if (!*err)
            finding("rejected without a message", buf, len);
        return;
    }
    accepted++;
    if (tagg_sf_index_format(&ix, &t, &l) == 0) {
        if (tagg_sf_index_parse(t, l, &back, err, sizeof err) < 0)
            finding("an accepted index does not survive format + parse", buf, len);
        else {
            if (!same(&ix, &back))
                finding("round trip changed the index", buf, len);
            tagg_sf_index_free(&back);
        }
        free(t);
    }
    if (tagg_sf_path_check(INDEX, &ix, err, sizeof err) == 0) {
        char user[64];
        snprintf(user, sizeof user, "/tagg-%lu/", (unsigned long)geteuid());
        for (uint32_t k = 0; k < ix.count; k++) {
            char *p = tagg_sf_path_of(INDEX, &ix, k), *want = tagg_sf_path_beside(INDEX, k, ix.count);
            int   good = ix.nvr ? (p[0] == '/' && !strstr(p, "/../") && !strstr(p, "/./") && !strstr(p, "//") &&
                                 (ix.version < 3 ? strstr(p, "/tagg-nvr.") != NULL : strstr(p, user) != NULL))
                                : !strcmp(p, want);
            if (!good)
                finding("the path rule accepted a name it does not derive", buf, len);
            free(p), free(want);
        }
    }
    else if (!*err)
        finding("path rule refused without a message", buf, len);
    tagg_sf_index_free(&ix);
}

int main(int argc, char **argv)
{
    double   budget = argc > 1 ? atof(argv[1]) : 10;
    uint64_t seed   = argc > 2 ? strtoull(argv[2], NULL, 10) : 12345;
    rng_state       = seed * 2654435761u + 1;
    make_seeds();
    char           *buf = malloc(MAXLEN + 64);
    unsigned long   execs = 0;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int s = 0; s < nseeds; s++) /* the seeds themselves must pass */
        one(seeds[s], seed_len[s]);
    if (accepted != nseeds)
        finding("a valid seed index was rejected", seeds[0], seed_len[0]);
    for (;; execs++) {
        if ((execs & 1023) == 0) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 >= budget || execs >= 50000000)
                break;
        }
        int    s   = (int)(rnd() % (uint64_t)nseeds);
        size_t len = seed_len[s];
        memcpy(buf, seeds[s], len);
        int rounds = 1 + (int)(rnd() % 4);
        for (int r = 0; r < rounds; r++)
            len = mutate(buf, len);
        if (rnd() % 2)
            len = reseal(buf, len);
        one(buf, len);
    }
    printf("fuzz_index: %lu executions in %.0f s (seed %" PRIu64 "), %d accepted, %lu findings\n", execs, budget, seed,
           accepted, findings);
    for (int s = 0; s < nseeds; s++)
        free(seeds[s]);
    free(buf);
    return findings ? 1 : 0;
}
