/* The subfile index's per-stripe (format 3) and per-block (format 4)
 * checksum records: lookups, appends, sorts, checks, and the read of one
 * verified stripe (subfile_index.h); no MPI, no HDF5. */
#include "crc_shift.h"
#include "errmsg.h"
#include "subfile_index.h"
#include "sf_path.h"
#include "sf_stripe_codec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ format 3: stripes */

uint64_t tagg_sf_stripe_len(uint64_t L, uint64_t S, uint64_t j)
{
    if (j >= L / S + (L % S != 0))
        return 0;
    return L - j * S < S ? L - j * S : S;
}

const tagg_sf_stripe_t *tagg_sf_stripe_find(const tagg_sf_stripe_t *st, uint64_t n, uint64_t j)
{
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (st[mid].j == j)
            return &st[mid];
        if (st[mid].j < j)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

int tagg_sf_all_zero(const void *buf, size_t len)
{
    const unsigned char *p = buf;
    for (; len && ((uintptr_t)p & 7); len--, p++)
        if (*p)
            return 0;
    for (; len >= 8; len -= 8, p += 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        if (w)
            return 0;
    }
    for (; len; len--, p++)
        if (*p)
            return 0;
    return 1;
}

int tagg_sf_stripe_ok(const tagg_sf_stripe_t *st, uint64_t n, uint64_t j, const void *buf, size_t len, uint64_t *got)
{
    const tagg_sf_stripe_t *r = tagg_sf_stripe_find(st, n, j);
    if (!r) {
        int z = tagg_sf_all_zero(buf, len);
        if (!z && got)
            *got = tagg_crc64(0, buf, len);
        return z;
    }
    uint64_t c = tagg_crc64(0, buf, len);
    if (got)
        *got = c;
    return c == r->crc;
}

int tagg_sf_pread_upto(int fd, void *buf, size_t len, uint64_t off, uint64_t limit)
{
    char  *b = buf;
    size_t n = off >= limit ? 0 : (limit - off < len ? (size_t)(limit - off) : len), done = 0;
    while (done < n) {
        ssize_t got = pread(fd, b + done, n - done, (off_t)(off + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -1;
        if (got == 0)
            break;
        done += (size_t)got;
    }
    memset(b + done, 0, len - done);
    return 0;
}

int tagg_sf_pwrite_all(int fd, const void *buf, size_t n, uint64_t off)
{
    const char *b = buf;
    for (size_t done = 0; done < n;) {
        ssize_t got = pwrite(fd, b + done, n - done, (off_t)(off + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            if (got == 0)
                errno = ENOSPC;
            return -1;
        }
        done += (size_t)got;
    }
    return 0;
}

/* ------------------------------------------------------------ format 4: blocks */

uint64_t tagg_sf_block_size(uint64_t S)
{
    return S % ((uint64_t)TAGG_SF_BLOCKS * TAGG_SF_BLOCK_MIN) == 0 ? S / TAGG_SF_BLOCKS : 0;
}

uint64_t tagg_sf_block_crcs(const void *buf, uint64_t len, uint64_t B, uint64_t *out)
{
    const char *p = buf;
    for (uint64_t at = 0, i = 0; at < len; at += B, i++)
        out[i] = tagg_crc64(0, p + at, (size_t)(len - at < B ? len - at : B));
    return tagg_sf_blocks_compose(out, len, B);
}

/* The stripe's padded form (crc_shift.h, to its own length) is the sum of its
 * blocks' at their places. */
uint64_t tagg_sf_blocks_compose(const uint64_t *crc, uint64_t len, uint64_t B)
{
    uint64_t p = 0;
    for (uint64_t at = 0, i = 0; at < len; at += B, i++) {
        uint64_t n = len - at < B ? len - at : B;
        p ^= tagg_crc_delta(tagg_crc_zeros(n), crc[i], at, n, len);
    }
    return tagg_crc_unpad(p, len, len);
}

int tagg_sf_blocks_append(uint64_t **blk, uint64_t *n, uint64_t j, const uint64_t *crc, unsigned nb)
{
    if ((*n & (*n - 1)) == 0) { /* 0, 1, 2, 4, ...: the capacity follows from n, grow */
        uint64_t *t = realloc(*blk, (size_t)(*n ? 2 * *n : 16) * TAGG_SF_BREC * sizeof **blk);
        if (!t)
            return -1;
        *blk = t;
    }
    uint64_t *r = *blk + TAGG_SF_BREC * *n;
    memset(r, 0, TAGG_SF_BREC * sizeof *r);
    r[0] = j;
    memcpy(r + 1, crc, (size_t)(nb < TAGG_SF_BLOCKS ? nb : TAGG_SF_BLOCKS) * sizeof *r);
    (*n)++;
    return 0;
}

const uint64_t *tagg_sf_blocks_find(const uint64_t *blk, uint64_t n, uint64_t j)
{
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2, mj = blk[TAGG_SF_BREC * mid];
        if (mj == j)
            return blk + TAGG_SF_BREC * mid + 1;
        if (mj < j)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int cmp_brec(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void tagg_sf_blocks_sort(uint64_t *blk, uint64_t n)
{
    if (n > 1)
        qsort(blk, (size_t)n, TAGG_SF_BREC * sizeof *blk, cmp_brec);
}

static int cmp_stripe(const void *a, const void *b)
{
    uint64_t x = ((const tagg_sf_stripe_t *)a)->j, y = ((const tagg_sf_stripe_t *)b)->j;
    return x < y ? -1 : x > y;
}

void tagg_sf_stripes_sort(tagg_sf_stripe_t *st, uint64_t n)
{
    if (n > 1)
        qsort(st, (size_t)n, sizeof *st, cmp_stripe);
}

int tagg_sf_read_stripe(const char *path, const tagg_sf_index_t *ix, const int *fds, int meta_fd, uint64_t j, char *buf,
                        char *err, size_t errlen)
{
    uint64_t S = ix->stripe, len = tagg_sf_stripe_len(ix->logical_size, S, j), got;
    uint32_t k = (uint32_t)(j % ix->count);
    uint64_t local = (j / ix->count) * S;
    const tagg_sf_stripe_t *zr = tagg_sf_stripe_find(ix->st, ix->nst, j);
    if (zr && zr->form) { /* compressed (the index checked its extent): decoded and checked */
        char *scratch = malloc((size_t)TAGG_SFZ_FORM_STORED(zr->form));
        char  why[512];
        int   rc = scratch ? tagg_sfz_load_form(fds[k], local, (size_t)len, ix->sub[k].size, zr->form, zr->crc, 1, buf,
                                                scratch, why, sizeof why)
                           : (snprintf(why, sizeof why, "out of memory"), -1);
        free(scratch);
        if (rc < 0) {
            char *p = tagg_sf_path_of(path, ix, k);
            tagg_errmsg(err, errlen,
                    "subfile %" PRIu32 " '%s', stripe %" PRIu64 " (compressed, %s, bytes %" PRIu64 "..%" PRIu64
                    " of the subfile, file addresses %" PRIu64 "..%" PRIu64 "): %s (the subfile was changed or damaged "
                    "after it was written; see tagg-fuse --check)",
                    k, p ? p : "?", j, tagg_sfz_name(TAGG_SFZ_FORM_ENC(zr->form)), local,
                    local + TAGG_SFZ_FORM_STORED(zr->form) - 1, j * S, j * S + len - 1, why);
            free(p);
            return -1;
        }
        return 0; /* never node-local: no metadata file to merge */
    }
    if (tagg_sf_pread_upto(fds[k], buf, (size_t)len, local, ix->sub[k].size) < 0) {
        char *p = tagg_sf_path_of(path, ix, k);
        tagg_errmsg(err, errlen, "reading subfile %" PRIu32 " '%s' at %" PRIu64 ": %s", k, p ? p : "?", local,
                strerror(errno));
        free(p);
        return -1;
    }
    if (!tagg_sf_stripe_ok(ix->st, ix->nst, j, buf, (size_t)len, &got)) {
        const tagg_sf_stripe_t *r = tagg_sf_stripe_find(ix->st, ix->nst, j);
        char                    *p = tagg_sf_path_of(path, ix, k), want[40];
        if (r)
            snprintf(want, sizeof want, "crc64 %016" PRIx64, r->crc);
        else
            snprintf(want, sizeof want, "a hole (zeros)");
        tagg_errmsg(err, errlen,
                "CHECKSUM MISMATCH subfile %" PRIu32 " '%s', stripe %" PRIu64 " (its bytes %" PRIu64 "..%" PRIu64
                ", file addresses %" PRIu64 "..%" PRIu64 "): crc64 %016" PRIx64 ", the index records %s (the subfile was "
                "changed or damaged after it was written; see tagg-fuse --check)",
                k, p ? p : "?", j, local, local + len - 1, j * S, j * S + len - 1, got, want);
        free(p);
        return -1;
    }
    if (meta_fd >= 0 && len) {
        char *m = malloc((size_t)len);
        if (!m) {
            tagg_errmsg(err, errlen, "out of memory");
            return -1;
        }
        int rc = 0;
        if (tagg_sf_pread_upto(meta_fd, m, (size_t)len, j * S, ix->meta.size) < 0)
            tagg_errmsg(err, errlen, "reading the metadata file of '%s' at %" PRIu64 ": %s", path, j * S, strerror(errno)),
                rc = -1;
        else if (!tagg_sf_stripe_ok(ix->mst, ix->nmst, j, m, (size_t)len, &got))
            tagg_errmsg(err, errlen,
                    "CHECKSUM MISMATCH metadata file '%s.tagg.meta', stripe %" PRIu64 " (bytes %" PRIu64 "..%" PRIu64
                    "): crc64 %016" PRIx64 " does not match the index (see tagg-fuse --check)",
                    path, j, j * S, j * S + len - 1, got),
                rc = -1;
        else
            for (uint64_t i = 0; i < len; i++)
                buf[i] |= m[i];
        free(m);
        return rc;
    }
    return 0;
}

/* Format 3 stripe lines ("s J CRC" or "m J CRC"), J ascending and below the
 * logical size. */
int tagg_sf_stripe_append(tagg_sf_stripe_t **st, uint64_t *n, uint64_t j, uint64_t crc)
{
    return tagg_sf_stripe_append_form(st, n, j, crc, 0);
}

int tagg_sf_any_compressed(const tagg_sf_index_t *ix)
{
    for (uint64_t i = 0; i < ix->nst; i++)
        if (ix->st[i].form)
            return 1;
    return 0;
}

int tagg_sf_stripe_append_form(tagg_sf_stripe_t **st, uint64_t *n, uint64_t j, uint64_t crc, uint64_t form)
{
    if ((*n & (*n - 1)) == 0) { /* 0, 1, 2, 4, ...: the capacity follows from n, grow */
        tagg_sf_stripe_t *t = realloc(*st, (size_t)(*n ? 2 * *n : 16) * sizeof **st);
        if (!t)
            return -1;
        *st = t;
    }
    (*st)[*n].j   = j;
    (*st)[*n].crc  = crc;
    (*st)[*n].form = form;
    (*n)++;
    return 0;
}
