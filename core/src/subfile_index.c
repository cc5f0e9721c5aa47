/* The subfile layout's stripe map and index file (format in subfile_index.h). */
#include "errmsg.h"
#include "subfile_index.h"
#include "sf_path.h"
#include "sf_stripe_codec.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ stripe map */

void tagg_sf_locate(uint64_t off, uint64_t S, uint32_t N, uint32_t *k, uint64_t *local)
{
    uint64_t stripe = off / S;
    *k              = (uint32_t)(stripe % N);
    *local          = (stripe / N) * S + off % S;
}

uint64_t tagg_sf_subfile_size(uint64_t L, uint64_t S, uint32_t N, uint32_t k)
{
    uint64_t full = L / S, rest = L % S;
    if (rest && full % N == k)
        return (full / N) * S + rest; /* holds the partial last stripe */
    return (full / N + (k < full % N ? 1 : 0)) * S;
}

uint64_t tagg_sf_logical_end(uint64_t size, uint64_t S, uint32_t N, uint32_t k)
{
    if (!size)
        return 0;
    uint64_t last = size - 1;
    return ((last / S) * N + k) * S + last % S + 1;
}

/* ------------------------------------------------ CRC-64/XZ of a file */

int tagg_sf_file_crc(const char *path, uint64_t *size, uint64_t *crc, char *err, size_t errlen)
{
    int fd = tagg_sf_open(path, O_RDONLY, err, errlen);
    if (fd < 0)
        return -1;
    enum { BUF = 1 << 20 };
    unsigned char *buf = malloc(BUF);
    uint64_t       n = 0, c = 0;
    int            rc = 0;
    if (!buf) {
        tagg_errmsg(err, errlen, "out of memory");
        close(fd);
        return -1;
    }
    for (;;) {
        ssize_t got = read(fd, buf, BUF);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            tagg_errmsg(err, errlen, "reading '%s' at offset %" PRIu64 ": %s", path, n, strerror(errno));
            rc = -1;
            break;
        }
        if (got == 0)
            break;
        c = tagg_crc64(c, buf, (size_t)got);
        n += (uint64_t)got;
    }
    free(buf);
    close(fd);
    *size = n;
    *crc  = c;
    return rc;
}

/* ------------------------------------------------------------ names */

int tagg_sf_index_init(tagg_sf_index_t *idx, uint64_t stripe, uint32_t count)
{
    memset(idx, 0, sizeof *idx);
    idx->version = TAGG_SF_VERSION_3;
    idx->stripe  = stripe;
    idx->count   = count;
    idx->sub     = calloc(count ? count : 1, sizeof *idx->sub);
    return idx->sub ? 0 : -1;
}

void tagg_sf_index_free(tagg_sf_index_t *idx)
{
    if (idx->sub)
        for (uint32_t k = 0; k < idx->count; k++)
            free(idx->sub[k].name), free(idx->sub[k].node);
    free(idx->sub);
    free(idx->meta.name);
    free(idx->st);
    free(idx->mst);
    free(idx->blk);
    memset(idx, 0, sizeof *idx);
}

char *tagg_sf_default_name(const char *path, uint32_t k, uint32_t N)
{
    const char *base = strrchr(path, '/');
    base             = base ? base + 1 : path;
    size_t len       = strlen(base) + 40;
    char  *s         = malloc(len);
    if (s)
        snprintf(s, len, "%s.tagg.%" PRIu32 "of%" PRIu32, base, k, N);
    return s;
}

char *tagg_sf_meta_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base             = base ? base + 1 : path;
    size_t len       = strlen(base) + 16;
    char  *s         = malloc(len);
    if (s)
        snprintf(s, len, "%s.tagg.meta", base);
    return s;
}

/* ------------------------------------------------------------ format */

typedef struct {
    char  *s;
    size_t len, cap;
    int    oom;
} sbuf_t;

static void sb_printf(sbuf_t *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if (b->s && (size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap ? b->cap : 1024);
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *t = realloc(b->s, cap);
        if (!t) {
            b->oom = 1;
            return;
        }
        b->s = t, b->cap = cap;
    }
}

static void sb_bytes(sbuf_t *b, const void *p, size_t n)
{
    sb_printf(b, "%*s", (int)n, ""); /* room */
    if (!b->oom)
        memcpy(b->s + b->len - n, p, n);
}

static int format_index(const tagg_sf_index_t *idx, int blocks, char **text, size_t *len);

int tagg_sf_index_format(const tagg_sf_index_t *idx, char **text, size_t *len)
{
    return tagg_sf_index_format_within(idx, TAGG_SF_INDEX_MAX, text, len);
}

int tagg_sf_index_format_within(const tagg_sf_index_t *idx, size_t max, char **text, size_t *len)
{
    if (format_index(idx, 1, text, len) < 0)
        return -1;
    if (*len <= max || !idx->nblk) /* (a format 3 text past it is refused by readers as before) */
        return 0;
    free(*text); /* too long with block lines for a reader to take: without them */
    return format_index(idx, 0, text, len);
}

static int format_index(const tagg_sf_index_t *idx, int blocks, char **text, size_t *len)
{
    sbuf_t   b = {0};
    int      v3 = idx->version >= TAGG_SF_VERSION_3;
    int      v4 = blocks && v3 && idx->block && (idx->nblk || idx->version == TAGG_SF_VERSION_4);
    unsigned v  = v4 ? TAGG_SF_VERSION_4 : v3 ? TAGG_SF_VERSION_3 : idx->nvr ? TAGG_SF_VERSION_NVR : TAGG_SF_VERSION;
    sb_printf(&b,
              TAGG_SF_HEADLINE "\nformat %u\nlayout subfiles\n%sstate %s\nstripe_size %" PRIu64 "\nsubfile_count %" PRIu32
                               "\nlogical_size %" PRIu64 "\nchecksum crc64-xz%s\n",
              v, idx->nvr ? "destination nvr\n" : "", idx->closed ? "closed" : "open", idx->stripe, idx->count,
              idx->logical_size, v3 ? " per-stripe" : "");
    if (v4)
        sb_printf(&b, "block_size %" PRIu64 "\n", idx->block);
    if (v3 && !b.oom) { /* pad to 512, then the HDF5 block */
        if (b.len + 4 > TAGG_SF_HDF5_AT) {
            free(b.s);
            return -1;
        }
        sb_printf(&b, "pad%*s\n", (int)(TAGG_SF_HDF5_AT - b.len - 4), "");
        sb_bytes(&b, TAGG_SF_HDF5_BLOCK, TAGG_SF_HDF5_BLOCK_LEN);
    }
    if (idx->nvr) {
        if (v3)
            sb_printf(&b, "metadata %" PRIu64 " %s\n", idx->meta.size, idx->meta.name ? idx->meta.name : "");
        else
            sb_printf(&b, "metadata %" PRIu64 " %016" PRIx64 " %s\n", idx->meta.size, idx->meta.crc,
                      idx->meta.name ? idx->meta.name : "");
    }
    for (uint32_t k = 0; k < idx->count; k++) {
        if (v3)
            sb_printf(&b, "subfile %" PRIu32 " %" PRIu64 " %s\n", k, idx->sub[k].size,
                      idx->sub[k].name ? idx->sub[k].name : "");
        else
            sb_printf(&b, "subfile %" PRIu32 " %" PRIu64 " %016" PRIx64 " %s\n", k, idx->sub[k].size, idx->sub[k].crc,
                      idx->sub[k].name ? idx->sub[k].name : "");
        if (idx->nvr)
            sb_printf(&b, "node %" PRIu32 " %s\n", k, idx->sub[k].node ? idx->sub[k].node : "");
    }
    if (v3) {
        for (uint64_t i = 0; i < idx->nst; i++) {
            const tagg_sf_stripe_t *r = &idx->st[i];
            const uint64_t         *bc = v4 && !r->form ? tagg_sf_blocks_find(idx->blk, idx->nblk, r->j) : NULL;
            if (r->form)
                sb_printf(&b, "s %" PRIu64 " %016" PRIx64 " %s %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", r->j, r->crc,
                          tagg_sfz_name(TAGG_SFZ_FORM_ENC(r->form)), (r->j / idx->count) * idx->stripe,
                          TAGG_SFZ_FORM_STORED(r->form), idx->stripe);
            else
                sb_printf(&b, "s %" PRIu64 " %016" PRIx64 "\n", r->j, r->crc);
            if (bc) { /* its blocks: the record holds them when they compose to its CRC (close, parse) */
                uint64_t len = tagg_sf_stripe_len(idx->logical_size, idx->stripe, r->j);
                sb_printf(&b, "b %" PRIu64, r->j);
                for (uint64_t at = 0, x = 0; at < len; at += idx->block, x++)
                    sb_printf(&b, " %016" PRIx64, bc[x]);
                sb_printf(&b, "\n");
            }
        }
        for (uint64_t i = 0; idx->nvr && i < idx->nmst; i++)
            sb_printf(&b, "m %" PRIu64 " %016" PRIx64 "\n", idx->mst[i].j, idx->mst[i].crc);
    }
    if (b.oom) {
        free(b.s);
        return -1;
    }
    uint64_t crc = tagg_crc64(0, b.s, b.len);
    sb_printf(&b, "index_crc64 %016" PRIx64 "\n", crc);
    if (b.oom) {
        free(b.s);
        return -1;
    }
    *text = b.s;
    *len  = b.len;
    return 0;
}

/* ------------------------------------------------------------ parse */

typedef struct {
    const char *p, *end;
    unsigned    line; /* number of the line next_line returned last */
} cursor_t;

/* Next line: its start, *l its length (without '\n'); NULL at the end or when
 * the line is unterminated. */
static const char *next_line(cursor_t *c, size_t *l)
{
    const char *b = c->p;
    if (b >= c->end)
        return NULL;
    const char *nl = memchr(b, '\n', (size_t)(c->end - b));
    if (!nl)
        return NULL;
    *l = (size_t)(nl - b);
    c->p = nl + 1;
    c->line++;
    return b;
}

/* Strict decimal u64 of s[0..n): digits only, no overflow. Moves past it. */
static int dec_u64(const char **s, const char *end, uint64_t *v)
{
    const char *p = *s;
    uint64_t    x = 0;
    if (p >= end || *p < '0' || *p > '9')
        return -1;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        if (x > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
            return -1;
        x = x * 10 + (uint64_t)(*p - '0');
    }
    *s = p, *v = x;
    return 0;
}

/* Exactly 16 lower-case hex digits. */
static int hex16(const char **s, const char *end, uint64_t *v)
{
    const char *p = *s;
    uint64_t    x = 0;
    if (end - p < 16)
        return -1;
    for (int i = 0; i < 16; i++, p++) {
        int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
        if (d < 0)
            return -1;
        x = x << 4 | (uint64_t)d;
    }
    *s = p, *v = x;
    return 0;
}

static int lit(const char **s, const char *end, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(end - *s) < n || memcmp(*s, w, n))
        return -1;
    *s += n;
    return 0;
}

/* "KEY <u64>" as the whole line; 0 or -1. */
static int key_u64(const char *line, size_t l, const char *key, uint64_t *v)
{
    const char *p = line, *e = line + l;
    if (lit(&p, e, key) < 0 || lit(&p, e, " ") < 0 || dec_u64(&p, e, v) < 0 || p != e)
        return -1;
    return 0;
}

static int line_is(const char *line, size_t l, const char *w) { return l == strlen(w) && !memcmp(line, w, l); }

#define BAD(...)                                                                                          \
    do {                                                                                                  \
        tagg_errmsg(err, errlen, __VA_ARGS__);                                                                \
        goto fail;                                                                                        \
    } while (0)

static int parse_stripe_line(const char *line, size_t l, tagg_sf_index_t *idx, unsigned no, char *err, size_t errlen)
{
    const char *p = line + 2, *e = line + l;
    uint64_t    j, crc;
    int         meta = line[0] == 'm';
    if (dec_u64(&p, e, &j) < 0 || lit(&p, e, " ") < 0 || hex16(&p, e, &crc) < 0) {
        tagg_errmsg(err, errlen, "index line %u: bad stripe line '%.*s'", no, (int)(l < 80 ? l : 80), line);
        return -1;
    }
    uint64_t form = 0;
    if (p != e) { /* compressed: " ENC STORED_OFFSET STORED_SIZE LOGICAL_SIZE" */
        const char *q = p + 1, *sp = q;
        while (sp < e && *sp != ' ')
            sp++;
        char     enc[16];
        unsigned id = 0;
        uint64_t at, stored, logical;
        if (*p == ' ' && sp < e && sp - q < (ptrdiff_t)sizeof enc) {
            memcpy(enc, q, (size_t)(sp - q));
            enc[sp - q] = '\0';
            id          = tagg_sfz_id(enc);
        }
        if (!id || meta || idx->nvr) {
            tagg_errmsg(err, errlen,
                    "index line %u: stripe %" PRIu64 " has an encoding this tagg does not know ('%.*s'): a newer tagg wrote it",
                    no, j, (int)(e - p < 40 ? e - p : 40), p);
            return -1;
        }
        p = sp;
        if (lit(&p, e, " ") < 0 || dec_u64(&p, e, &at) < 0 || lit(&p, e, " ") < 0 || dec_u64(&p, e, &stored) < 0 ||
            lit(&p, e, " ") < 0 || dec_u64(&p, e, &logical) < 0 || p != e) {
            tagg_errmsg(err, errlen, "index line %u: bad compressed stripe line '%.*s'", no, (int)(l < 120 ? l : 120), line);
            return -1;
        }
        uint64_t S = idx->stripe, N = idx->count, k = j % N;
        if (logical != S || tagg_sf_stripe_len(idx->logical_size, S, j) != S || at != (j / N) * S ||
            stored <= TAGG_SFZ_HDR || stored >= S || (idx->closed && at + S > idx->sub[k].size)) {
            tagg_errmsg(err, errlen,
                    "index line %u: compressed stripe %" PRIu64 " has an impossible extent (offset %" PRIu64
                    ", stored %" PRIu64 ", logical %" PRIu64 "; stripe size %" PRIu64 ", subfile %" PRIu64 " of %" PRIu64
                    " bytes)",
                    no, j, at, stored, logical, S, k, idx->sub[k].size);
            return -1;
        }
        form = TAGG_SFZ_FORM(id, stored);
    }
    tagg_sf_stripe_t **st = meta ? &idx->mst : &idx->st;
    uint64_t          *n  = meta ? &idx->nmst : &idx->nst;
    if (!tagg_sf_stripe_len(idx->logical_size, idx->stripe, j)) {
        tagg_errmsg(err, errlen, "index line %u: stripe %" PRIu64 " lies past the logical size %" PRIu64, no, j,
                idx->logical_size);
        return -1;
    }
    if (*n && (*st)[*n - 1].j >= j) {
        tagg_errmsg(err, errlen, "index line %u: stripe %" PRIu64 " out of order", no, j);
        return -1;
    }
    if (tagg_sf_stripe_append_form(st, n, j, crc, form) < 0) {
        tagg_errmsg(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

/* Format 4 "b J C0 ... Cn-1": right after the raw "s" line of J, one CRC per
 * block of its len(J) bytes, composing to the stripe's CRC. */
static int parse_block_line(const char *line, size_t l, tagg_sf_index_t *idx, unsigned no, char *err, size_t errlen)
{
    const char *p = line + 2, *e = line + l;
    uint64_t    j, crc[TAGG_SF_BLOCKS], B = idx->block, nb = 0;
    if (dec_u64(&p, e, &j) < 0) {
        tagg_errmsg(err, errlen, "index line %u: bad block line '%.*s'", no, (int)(l < 80 ? l : 80), line);
        return -1;
    }
    const tagg_sf_stripe_t *r   = idx->nst ? &idx->st[idx->nst - 1] : NULL;
    uint64_t                len = tagg_sf_stripe_len(idx->logical_size, idx->stripe, j);
    if (!r || r->j != j || r->form || (idx->nblk && idx->blk[TAGG_SF_BREC * (idx->nblk - 1)] == j)) {
        tagg_errmsg(err, errlen, "index line %u: block line of stripe %" PRIu64 " does not follow its raw 's' line", no, j);
        return -1;
    }
    while (p < e) {
        if (nb == TAGG_SF_BLOCKS || lit(&p, e, " ") < 0 || hex16(&p, e, &crc[nb]) < 0) {
            tagg_errmsg(err, errlen, "index line %u: bad block line '%.*s'", no, (int)(l < 80 ? l : 80), line);
            return -1;
        }
        nb++;
    }
    if (nb != (len + B - 1) / B) {
        tagg_errmsg(err, errlen, "index line %u: stripe %" PRIu64 " has %" PRIu64 " block checksums, its %" PRIu64
                                 " bytes make %" PRIu64 " blocks",
                    no, j, nb, len, (len + B - 1) / B);
        return -1;
    }
    if (tagg_sf_blocks_compose(crc, len, B) != r->crc) {
        tagg_errmsg(err, errlen,
                    "index line %u: the block checksums of stripe %" PRIu64 " do not compose to its checksum %016" PRIx64,
                    no, j, r->crc);
        return -1;
    }
    if (tagg_sf_blocks_append(&idx->blk, &idx->nblk, j, crc, (unsigned)nb) < 0) {
        tagg_errmsg(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

int tagg_sf_index_parse(const char *text, size_t len, tagg_sf_index_t *idx, char *err, size_t errlen)
{
    cursor_t    c = {text, text + len, 0};
    const char *line;
    size_t      l;
    uint64_t    v, stripe, count, lsize;
    memset(idx, 0, sizeof *idx);
    if (len < strlen(TAGG_SF_MAGIC) || memcmp(text, TAGG_SF_MAGIC, strlen(TAGG_SF_MAGIC)))
        BAD("bad magic: not a tagg subfiled file (it does not start with \"" TAGG_SF_MAGIC "\")");
    next_line(&c, &l);
    if (!(line = next_line(&c, &l)) || key_u64(line, l, "format", &v) < 0)
        BAD("index: no 'format' line after the magic");
    if (v != TAGG_SF_VERSION && v != TAGG_SF_VERSION_NVR && v != TAGG_SF_VERSION_3 && v != TAGG_SF_VERSION_4)
        BAD("unsupported index format version %" PRIu64 " (this tagg reads versions 1 to 4)", v);
    int v3 = v >= TAGG_SF_VERSION_3, v4 = v == TAGG_SF_VERSION_4;
    uint64_t block = 0;
    /* the index checksum: the last line, over every byte before it */
    {
        const char *last;
        if (len < 2 || text[len - 1] != '\n')
            BAD("index is truncated (no final newline)");
        last = c.end - 1;
        while (last > text && last[-1] != '\n')
            last--;
        const char *h = last + 12;
        uint64_t    want, got = tagg_crc64(0, text, (size_t)(last - text));
        if ((size_t)(c.end - last) != strlen("index_crc64 ") + 17 || strncmp(last, "index_crc64 ", 12) ||
            hex16(&h, c.end, &want) < 0)
            BAD("index is truncated (its last line is not 'index_crc64 <16 hex digits>')");
        if (want != got)
            BAD("index checksum mismatch: recorded %016" PRIx64 ", computed %016" PRIx64 " (the index was modified)",
                want, got);
        c.end = last;
    }
    if (!(line = next_line(&c, &l)) || !line_is(line, l, "layout subfiles"))
        BAD("index: expected 'layout subfiles'");
    int nvr = v == TAGG_SF_VERSION_NVR;
    if (v3 && c.p < c.end && (size_t)(c.end - c.p) > 16 && !memcmp(c.p, "destination nvr\n", 16))
        nvr = 1;
    if (nvr && (!(line = next_line(&c, &l)) || !line_is(line, l, "destination nvr")))
        BAD("index: format 2 expects 'destination nvr'");
    if (!(line = next_line(&c, &l)) || l < 7 || strncmp(line, "state ", 6))
        BAD("index: expected 'state open|closed'");
    int closed = line_is(line, l, "state closed");
    if (!closed && !line_is(line, l, "state open"))
        BAD("index: bad state '%.*s'", (int)(l - 6 < 40 ? l - 6 : 40), line + 6);
    if (!(line = next_line(&c, &l)) || key_u64(line, l, "stripe_size", &stripe) < 0 || !stripe)
        BAD("index: bad or missing 'stripe_size'");
    if (!(line = next_line(&c, &l)) || key_u64(line, l, "subfile_count", &count) < 0 || !count ||
        count > (uint64_t)len / 8)
        BAD("index: bad or missing 'subfile_count'");
    if (!(line = next_line(&c, &l)) || key_u64(line, l, "logical_size", &lsize) < 0)
        BAD("index: bad or missing 'logical_size'");
    if (!(line = next_line(&c, &l)) || !line_is(line, l, v3 ? "checksum crc64-xz per-stripe" : "checksum crc64-xz"))
        BAD("index: unknown checksum algorithm (expected 'checksum crc64-xz%s')", v3 ? " per-stripe" : "");
    if (v4 && (!(line = next_line(&c, &l)) || key_u64(line, l, "block_size", &block) < 0 ||
               block != tagg_sf_block_size(stripe) || !block))
        BAD("index: format 4 expects 'block_size %" PRIu64 "' after the checksum line (stripe size %" PRIu64 ")",
            tagg_sf_block_size(stripe), stripe);
    if (v3) { /* the pad line up to byte 511, then the HDF5 block */
        if (!(line = next_line(&c, &l)) || l < 3 || memcmp(line, "pad", 3) || c.p != text + TAGG_SF_HDF5_AT)
            BAD("index: format %u expects a 'pad' line ending at byte %d", (unsigned)v, TAGG_SF_HDF5_AT - 1);
        for (size_t i = 3; i < l; i++)
            if (line[i] != ' ')
                BAD("index line %u: the pad line holds more than spaces", c.line);
        if ((size_t)(c.end - c.p) < TAGG_SF_HDF5_BLOCK_LEN || memcmp(c.p, TAGG_SF_HDF5_BLOCK, TAGG_SF_HDF5_BLOCK_LEN))
            BAD("index: format %u expects the HDF5 signature block at byte %d", (unsigned)v, TAGG_SF_HDF5_AT);
        c.p += TAGG_SF_HDF5_BLOCK_LEN;
        c.line += 3; /* the block holds three newlines */
    }
    if (tagg_sf_index_init(idx, stripe, (uint32_t)count) < 0)
        BAD("out of memory");
    idx->closed       = closed;
    idx->logical_size = lsize;
    idx->version      = (unsigned)v;
    idx->nvr          = nvr;
    idx->block        = block;
    if (nvr) {
        const char *q, *e;
        if (!(line = next_line(&c, &l)))
            BAD("index: missing 'metadata' line");
        q = line, e = line + l;
        if (lit(&q, e, "metadata ") < 0 || dec_u64(&q, e, &idx->meta.size) < 0 || lit(&q, e, " ") < 0 ||
            (!v3 && (hex16(&q, e, &idx->meta.crc) < 0 || lit(&q, e, " ") < 0)) || q == e)
            BAD("index line %u: bad 'metadata' line: '%.*s'", c.line, (int)(l < 128 ? l : 128), line);
        idx->meta.line = c.line;
        if (!(idx->meta.name = strndup(q, (size_t)(e - q))) || strlen(idx->meta.name) != (size_t)(e - q))
            BAD("index line %u: bad metadata file name", c.line);
        if (strchr(idx->meta.name, '/'))
            BAD("index line %u: metadata file name '%s' is not a plain name", c.line, idx->meta.name);
    }
    for (uint32_t k = 0; k < idx->count; k++) {
        const char *q, *e;
        uint64_t    kk;
        if (!(line = next_line(&c, &l)) || l >= 4096)
            BAD("index: missing line for subfile %" PRIu32, k);
        q = line, e = line + l;
        if (lit(&q, e, "subfile ") < 0 || dec_u64(&q, e, &kk) < 0 || kk != k || lit(&q, e, " ") < 0 ||
            dec_u64(&q, e, &idx->sub[k].size) < 0 || lit(&q, e, " ") < 0 ||
            (!v3 && (hex16(&q, e, &idx->sub[k].crc) < 0 || lit(&q, e, " ") < 0)) || q == e)
            BAD("index line %u: bad line for subfile %" PRIu32 ": '%.*s'", c.line, k, (int)(l < 128 ? l : 128), line);
        idx->sub[k].line = c.line;
        if (!(idx->sub[k].name = strndup(q, (size_t)(e - q))) || strlen(idx->sub[k].name) != (size_t)(e - q))
            BAD("index line %u: bad name for subfile %" PRIu32, c.line, k);
        if (!nvr && strchr(idx->sub[k].name, '/'))
            BAD("index line %u: subfile name '%s' is not a plain name", c.line, idx->sub[k].name);
        if (nvr && idx->sub[k].name[0] != '/')
            BAD("index line %u: node-local subfile path '%s' is not absolute", c.line, idx->sub[k].name);
        if (nvr) {
            char want[32];
            int  wl = snprintf(want, sizeof want, "node %" PRIu32 " ", k);
            if (!(line = next_line(&c, &l)) || l <= (size_t)wl || l >= 4096 || memcmp(line, want, (size_t)wl))
                BAD("index: missing 'node %" PRIu32 "' line", k);
            if (!(idx->sub[k].node = strndup(line + wl, l - (size_t)wl)) || strlen(idx->sub[k].node) != l - (size_t)wl)
                BAD("index line %u: bad node name", c.line);
        }
    }
    while (v3 && (line = next_line(&c, &l))) {
        if (l < 2 || line[1] != ' ' || (line[0] != 's' && !(nvr && line[0] == 'm') && !(v4 && line[0] == 'b')))
            BAD("index line %u: unexpected text after the subfile lines", c.line);
        if ((line[0] == 'b' ? parse_block_line(line, l, idx, c.line, err, errlen)
                            : parse_stripe_line(line, l, idx, c.line, err, errlen)) < 0)
            goto fail;
    }
    if (c.p != c.end)
        BAD("index: unexpected text after the subfile lines");
    return 0;
fail:
    tagg_sf_index_free(idx);
    return -1;
}

/* ------------------------------------------------------------ files */

/* The index is the file the application named: followed like any file it
 * names, but it must be a regular file (no FIFO can block the probe). */
int tagg_sf_open_named(const char *path, int rdwr, int quiet_absent, char *err, size_t errlen)
{
    int fd = -1;
    if (rdwr) /* a writer's look: the descriptor it may keep; refused writing, still a look */
        fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0 && (!rdwr || errno == EACCES || errno == EPERM || errno == EROFS || errno == ETXTBSY))
        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        if (!(quiet_absent && errno == ENOENT))
            tagg_errmsg(err, errlen, "cannot open '%s': %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        tagg_errmsg(err, errlen, "'%s' is not a regular file", path);
        close(fd);
        errno = EINVAL;
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

/* The whole regular file open at fd (at most TAGG_SF_INDEX_MAX bytes), NUL
 * terminated; closes fd. 0, or -1 with the message in err. */
static int read_fd_whole(int fd, const char *path, char **text, size_t *len, char *err, size_t errlen)
{
    struct stat st;
    *text = NULL;
    errno = 0;
    if (fstat(fd, &st) < 0 || (size_t)st.st_size > TAGG_SF_INDEX_MAX) {
        tagg_errmsg(err, errlen, "'%s' is not a tagg index (%s)", path, errno ? strerror(errno) : "too large");
        close(fd);
        return -1;
    }
    size_t n = (size_t)st.st_size, done = 0;
    char  *s = malloc(n + 1);
    if (!s) {
        tagg_errmsg(err, errlen, "out of memory");
        close(fd);
        return -1;
    }
    while (done < n) {
        ssize_t got = pread(fd, s + done, n - done, (off_t)done);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            tagg_errmsg(err, errlen, "reading '%s': %s", path, got < 0 ? strerror(errno) : "file shrank");
            free(s);
            close(fd);
            return -1;
        }
        done += (size_t)got;
    }
    close(fd);
    s[n]  = '\0';
    *text = s;
    *len  = n;
    return 0;
}

int tagg_sf_read_whole(const char *path, char **text, size_t *len, char *err, size_t errlen)
{
    int fd = tagg_sf_open_named(path, 0, 0, err, errlen);
    *text  = NULL;
    if (fd < 0)
        return -1;
    return read_fd_whole(fd, path, text, len, err, errlen);
}

int tagg_sf_index_from_text(const char *path, const char *text, size_t len, tagg_sf_index_t *idx, char *err,
                            size_t errlen)
{
    memset(idx, 0, sizeof *idx);
    int rc = tagg_sf_index_parse(text, len, idx, err, errlen);
    if (rc < 0 && err && errlen) {
        char tmp[1024];
        snprintf(tmp, sizeof tmp, "%s: %s", path, err);
        tagg_errmsg(err, errlen, "%s", tmp);
    }
    if (rc == 0 && tagg_sf_path_check(path, idx, err, errlen) < 0) {
        tagg_sf_index_free(idx);
        rc = -1;
    }
    return rc;
}

int tagg_sf_index_read(const char *path, tagg_sf_index_t *idx, char *err, size_t errlen)
{
    char  *text;
    size_t len;
    memset(idx, 0, sizeof *idx);
    if (tagg_sf_read_whole(path, &text, &len, err, errlen) < 0)
        return -1;
    int rc = tagg_sf_index_from_text(path, text, len, idx, err, errlen);
    free(text);
    return rc;
}

/* Writes text whole to fd, fsyncs it when sync, closes it (always, except
 * into *keep when given and everything succeeded). */
static int put_text(int fd, const char *name, const char *text, size_t len, int sync, int *keep, char *err,
                    size_t errlen)
{
    for (size_t done = 0; done < len;) {
        ssize_t put = write(fd, text + done, len - done);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0) {
            tagg_errmsg(err, errlen, "writing the index '%s': %s", name, put < 0 ? strerror(errno) : "short write");
            close(fd);
            return -1;
        }
        done += (size_t)put;
    }
    if (sync && fsync(fd) < 0) {
        tagg_errmsg(err, errlen, "writing the index '%s': %s", name, strerror(errno));
        close(fd);
        return -1;
    }
    if (keep) {
        *keep = fd;
        return 0;
    }
    if (close(fd) < 0) {
        tagg_errmsg(err, errlen, "writing the index '%s': %s", name, strerror(errno));
        return -1;
    }
    return 0;
}

/* The device and inode of a descriptor this module created, into id (may be NULL). */
static void fd_id(int fd, unsigned long long id[2])
{
    struct stat st;
    if (id && fstat(fd, &st) == 0)
        id[0] = (unsigned long long)st.st_dev, id[1] = (unsigned long long)st.st_ino;
}

/* The index text replaces whatever is at path atomically: a temporary beside
 * it, then rename. id (may be NULL): the temporary's device and inode (a
 * rename keeps the inode). 0 or -1 with a message. */
static int replace_text(const char *path, const char *text, size_t len, int sync, unsigned long long id[2], int *keep,
                        char *err, size_t errlen)
{
    char *tmp = malloc(strlen(path) + 16);
    int   fd  = -1;
    if (!tmp) {
        tagg_errmsg(err, errlen, "out of memory");
        return -1;
    }
    sprintf(tmp, "%s.tagg-tmp", path);
    if ((fd = tagg_sf_create(tmp, err, errlen)) >= 0)
        fd_id(fd, id);
    int rc = fd < 0 ? -1 : put_text(fd, tmp, text, len, sync, keep, err, errlen);
    if (rc == 0 && rename(tmp, path) < 0) {
        tagg_errmsg(err, errlen, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
        rc = -1;
        if (keep)
            close(*keep), *keep = -1;
    }
    if (rc < 0 && fd >= 0)
        unlink(tmp);
    free(tmp);
    return rc;
}

int tagg_sf_index_write_mode(const char *path, const tagg_sf_index_t *idx, int sync, int fresh,
                             unsigned long long id[2], tagg_sf_ixfd_t *keep, char *err, size_t errlen)
{
    char  *text = NULL;
    size_t len  = 0;
    int    fd   = -1, rc;
    if (keep)
        keep->fd = -1, keep->len = 0;
    if (tagg_sf_index_format(idx, &text, &len) < 0) {
        tagg_errmsg(err, errlen, "out of memory");
        return -1;
    }
    /* A new file: nothing at path to replace, so the index goes there at once
     * (created exclusively, never through a link); something there (or any
     * other failure): a temporary replaces it atomically, as without fresh. */
    if (id)
        id[0] = id[1] = 0;
    if (fresh && (fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666)) >= 0) {
        fd_id(fd, id);
        if ((rc = put_text(fd, path, text, len, sync, keep ? &keep->fd : NULL, err, errlen)) < 0)
            unlink(path); /* ours: created just now */
    }
    else
        rc = replace_text(path, text, len, sync, id, keep ? &keep->fd : NULL, err, errlen);
    if (rc < 0 && id)
        id[0] = id[1] = 0;
    if (rc == 0 && keep)
        keep->len = len;
    free(text);
    return rc;
}

int tagg_sf_index_write(const char *path, const tagg_sf_index_t *idx, int sync, char *err, size_t errlen)
{
    return tagg_sf_index_write_mode(path, idx, sync, 0, NULL, NULL, err, errlen);
}

int tagg_sf_index_finish(const char *path, const tagg_sf_index_t *idx, int sync, unsigned long long dev,
                         unsigned long long ino, tagg_sf_ixfd_t *kept, int *inplace, char *err, size_t errlen)
{
    char       *text = NULL;
    size_t      len  = 0;
    struct stat st;
    int         fd   = kept ? kept->fd : -1;
    if (kept)
        kept->fd = -1;
    if (inplace)
        *inplace = 0;
    if (tagg_sf_index_format(idx, &text, &len) < 0) {
        tagg_errmsg(err, errlen, "out of memory");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    /* the descriptor kept since the open index was written: still that file
     * at some name (a rename over it leaves it without links), no lookup;
     * its length is the open text's */
    if (fd >= 0 && (len > TAGG_SF_INPLACE_MAX || fstat(fd, &st) != 0 || st.st_nlink == 0 ||
                    (unsigned long long)st.st_dev != dev || (unsigned long long)st.st_ino != ino))
        close(fd), fd = -1;
    else if (fd >= 0)
        st.st_size = (off_t)kept->len;
    else if (len <= TAGG_SF_INPLACE_MAX && (fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)) >= 0 &&
             (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (unsigned long long)st.st_dev != dev ||
              (unsigned long long)st.st_ino != ino))
        close(fd), fd = -1; /* not the index this writer made: replace whatever is there */
    if (fd < 0) { /* the text made above replaces the index atomically */
        int rc = replace_text(path, text, len, sync, NULL, NULL, err, errlen);
        free(text);
        return rc;
    }
    ssize_t put = pwrite(fd, text, len, 0);
    int     rc  = (size_t)put == len && ((uint64_t)st.st_size <= len || ftruncate(fd, (off_t)len) == 0) ? 0 : -1;
    if (rc < 0)
        tagg_errmsg(err, errlen, "writing the index '%s': %s", path, put >= 0 && (size_t)put != len ? "short write" : strerror(errno));
    if ((rc == 0 && sync && fsync(fd) < 0) || (close(fd) < 0 && rc == 0)) {
        tagg_errmsg(err, errlen, "writing the index '%s': %s", path, strerror(errno));
        rc = -1;
    }
    free(text);
    if (rc == 0 && inplace)
        *inplace = 1;
    return rc;
}

int tagg_sf_probe(const char *path, char *err, size_t errlen)
{
    return tagg_sf_probe_text(path, NULL, NULL, NULL, err, errlen);
}

int tagg_sf_probe_text(const char *path, char **text, size_t *len, int *plain_fd, char *err, size_t errlen)
{
    return tagg_sf_probe_open(path, text, len, plain_fd, 0, err, errlen);
}

int tagg_sf_probe_open(const char *path, char **text, size_t *len, int *plain_fd, int rdwr, char *err, size_t errlen)
{
    char    head[sizeof TAGG_SF_MAGIC];
    int     fd = tagg_sf_open_named(path, rdwr, 1, err, errlen);
    ssize_t got;
    if (text)
        *text = NULL;
    if (plain_fd)
        *plain_fd = -1;
    if (fd < 0) {
        if (errno == ENOENT || errno == EINVAL) /* absent, or not a regular file: not an index */
            return 0;
        return -1;
    }
    got = pread(fd, head, sizeof head - 1, 0);
    if (got < 0) {
        tagg_errmsg(err, errlen, "reading '%s': %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    int is = (size_t)got == sizeof head - 1 && !memcmp(head, TAGG_SF_MAGIC, sizeof head - 1);
    if (!is && plain_fd)
        *plain_fd = fd;
    else if (!is || !text)
        close(fd);
    else
        (void)read_fd_whole(fd, path, text, len, NULL, 0); /* closes fd; the text is a bonus: NULL on failure */
    return is;
}

/* ------------------------------------------------------------ node-local: metadata overlay, drain */

int tagg_sf_overlay_meta(int meta_fd, uint64_t off, char *buf, size_t n, char *err, size_t errlen)
{
    enum { STEP = 1 << 16 };
    unsigned char tmp[STEP];
    for (size_t done = 0; done < n;) {
        size_t  want = n - done < STEP ? n - done : STEP;
        ssize_t got  = pread(meta_fd, tmp, want, (off_t)(off + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            tagg_errmsg(err, errlen, "reading the metadata file at %" PRIu64 ": %s", off + done, strerror(errno));
            return -1;
        }
        if (got == 0)
            break; /* past its end: zeros */
        for (ssize_t i = 0; i < got; i++)
            buf[done + (size_t)i] |= (char)tmp[i];
        done += (size_t)got;
    }
    return 0;
}



int tagg_sf_drain_one(const char *path, const tagg_sf_index_t *ix, uint32_t k, int meta_fd, const char *out,
                      uint64_t *size, tagg_sf_stripe_t **st, uint64_t *nst, char *err, size_t errlen)
{
    uint64_t S = ix->stripe, N = ix->count;
    char    *in  = tagg_sf_path_of(path, ix, k);
    char    *buf = malloc((size_t)S);
    int     *fds = malloc(N * sizeof *fds);
    int      ifd = -1, ofd = -1, rc = -1, created = 0;
    uint64_t want = tagg_sf_subfile_size(ix->logical_size, S, ix->count, k), rcrc = 0;
    if (!in || !buf || !fds) {
        tagg_errmsg(err, errlen, "out of memory");
        goto done;
    }
    if (tagg_sf_nvr_dirs(in, ix->version, 0, err, errlen) < 0)
        goto done;
    if ((ifd = tagg_sf_open(in, O_RDONLY, err, errlen)) < 0) {
        char why[512];
        snprintf(why, sizeof why, "%s", err ? err : "");
        tagg_errmsg(err, errlen, "node-local subfile %" PRIu32 " (node %s): %s", k, ix->sub[k].node ? ix->sub[k].node : "?",
                why);
        goto done;
    }
    if (ix->closed && ix->version < 3) { /* format 2: the recorded size first */
        struct stat sb;
        if (fstat(ifd, &sb) < 0 || (uint64_t)sb.st_size != ix->sub[k].size) {
            tagg_errmsg(err, errlen, "SIZE MISMATCH node-local subfile %" PRIu32 " '%s': %llu bytes, the index records %" PRIu64,
                    k, in, (unsigned long long)sb.st_size, ix->sub[k].size);
            goto done;
        }
    }
    if ((ofd = tagg_sf_create(out, err, errlen)) < 0)
        goto done;
    created = 1;
    for (uint64_t i = 0; i < N; i++)
        fds[i] = ifd;
    /* stripe by stripe of subfile k; the node-local subfile is read front to back */
    for (uint64_t loc = 0; loc < want; loc += S) {
        uint64_t j = (loc / S) * N + k, n = tagg_sf_stripe_len(ix->logical_size, S, j);
        if (ix->version >= 3) {
            if (tagg_sf_read_stripe(path, ix, fds, meta_fd, j, buf, err, errlen) < 0)
                goto done;
        }
        else {
            if (tagg_sf_pread_upto(ifd, buf, (size_t)n, loc, ix->sub[k].size) < 0) {
                tagg_errmsg(err, errlen, "reading '%s' at %" PRIu64 ": %s", in, loc, strerror(errno));
                goto done;
            }
            uint64_t inside = loc >= ix->sub[k].size ? 0 : (ix->sub[k].size - loc < n ? ix->sub[k].size - loc : n);
            rcrc            = tagg_crc64(rcrc, buf, (size_t)inside);
            if (tagg_sf_overlay_meta(meta_fd, j * S, buf, (size_t)n, err, errlen) < 0)
                goto done;
        }
        if (tagg_sf_all_zero(buf, (size_t)n))
            continue; /* a hole */
        for (size_t w = 0; w < n;) {
            ssize_t put = pwrite(ofd, buf + w, (size_t)n - w, (off_t)(loc + w));
            if (put < 0 && errno == EINTR)
                continue;
            if (put <= 0) {
                tagg_errmsg(err, errlen, "writing '%s': %s", out, put < 0 ? strerror(errno) : "no space");
                goto done;
            }
            w += (size_t)put;
        }
        if (tagg_sf_stripe_append(st, nst, j, tagg_crc64(0, buf, (size_t)n)) < 0) {
            tagg_errmsg(err, errlen, "out of memory");
            goto done;
        }
    }
    if (ix->closed && ix->version < 3 && rcrc != ix->sub[k].crc) {
        tagg_errmsg(err, errlen, "CHECKSUM MISMATCH node-local subfile %" PRIu32 " '%s': crc64 %016" PRIx64
                             ", the index records %016" PRIx64,
                k, in, rcrc, ix->sub[k].crc);
        goto done;
    }
    if (ftruncate(ofd, (off_t)want) < 0 || fsync(ofd) < 0 || close(ofd) < 0) {
        ofd = -1;
        tagg_errmsg(err, errlen, "writing '%s': %s", out, strerror(errno));
        goto done;
    }
    ofd   = -1;
    *size = want;
    rc    = 0;
done:
    if (ofd >= 0)
        close(ofd);
    if (rc < 0 && created)
        unlink(out);
    if (ifd >= 0)
        close(ifd);
    free(in), free(buf), free(fds);
    return rc;
}
