/* Write-behind (wbehind.h): the kept bytes as disjoint extents sorted by file
 * offset, each with its own buffer. A write inside one extent is copied into
 * it, a write that continues the extent before it extends that one (buffers
 * grow by doubling), a write overlapping several becomes one extent over all
 * of them; anything else is a new extent. Only rewrites come here: writes of
 * ranges the rank read just before (rewrites()). */
#include "wbehind.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fault.h"
#include "io.h"

typedef struct {
    uint64_t off, len, cap;
    char    *buf;
} wb_ext_t;

typedef struct {
    uint64_t off, len;
} wb_range_t;

struct tagg_wb {
    wb_ext_t   *v;
    size_t      n, cap;
    uint64_t    bytes, limit;
    wb_range_t *read;          /* the ranges of this rank's last raw read, sorted */
    size_t      nread, capread;
};

tagg_wb_t *tagg_wb_new(uint64_t limit)
{
    tagg_wb_t *wb = calloc(1, sizeof *wb);
    if (wb)
        wb->limit = limit;
    return wb;
}

static void drop_all(tagg_wb_t *wb)
{
    for (size_t i = 0; i < wb->n; i++)
        free(wb->v[i].buf);
    wb->n = 0, wb->bytes = 0;
}

void tagg_wb_free(tagg_wb_t *wb)
{
    if (!wb)
        return;
    drop_all(wb);
    free(wb->v);
    free(wb->read);
    free(wb);
}

uint64_t tagg_wb_bytes(const tagg_wb_t *wb) { return wb ? wb->bytes : 0; }

/* The first extent that ends after off (n when none). */
static size_t first_after(const tagg_wb_t *wb, uint64_t off)
{
    size_t lo = 0, hi = wb->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (wb->v[mid].off + wb->v[mid].len > off)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Room for one more extent at index i (the ones from i on move up). */
static int make_room(tagg_wb_t *wb, size_t i)
{
    if (wb->n == wb->cap) {
        size_t    cap = wb->cap ? 2 * wb->cap : 16;
        wb_ext_t *v   = realloc(wb->v, cap * sizeof *v);
        if (!v)
            return -1;
        wb->v = v, wb->cap = cap;
    }
    memmove(wb->v + i + 1, wb->v + i, (wb->n - i) * sizeof *wb->v);
    wb->n++;
    return 0;
}

/* Extends e by len bytes from src at its end. */
static int extend(wb_ext_t *e, uint64_t len, const char *src)
{
    if (e->len + len > e->cap) {
        uint64_t cap = e->cap * 2 > e->len + len ? e->cap * 2 : e->len + len;
        char    *buf = realloc(e->buf, (size_t)cap);
        if (!buf)
            return -1;
        e->buf = buf, e->cap = cap;
    }
    memcpy(e->buf + e->len, src, (size_t)len);
    e->len += len;
    return 0;
}

static int keep(tagg_wb_t *wb, uint64_t off, uint64_t len, const char *src)
{
    uint64_t end = off + len;
    size_t   i   = first_after(wb, off), j = i;
    while (j < wb->n && wb->v[j].off < end)
        j++;
    /* [i, j): the extents overlapping [off, end) */
    if (j == i + 1 && wb->v[i].off <= off && end <= wb->v[i].off + wb->v[i].len) {
        memcpy(wb->v[i].buf + (off - wb->v[i].off), src, (size_t)len); /* a rewrite inside one extent */
        return 0;
    }
    if (j == i) {
        if (i > 0 && wb->v[i - 1].off + wb->v[i - 1].len == off) { /* continues the previous extent */
            if (extend(&wb->v[i - 1], len, src) < 0)
                return -1;
            wb->bytes += len;
            return 0;
        }
        char *buf = malloc((size_t)len);
        if (!buf || make_room(wb, i) < 0) {
            free(buf);
            return -1;
        }
        memcpy(buf, src, (size_t)len);
        wb->v[i] = (wb_ext_t){off, len, len, buf};
        wb->bytes += len;
        return 0;
    }
    /* Overlaps one or more extents partly: one extent over all of them. */
    uint64_t lo = wb->v[i].off < off ? wb->v[i].off : off;
    uint64_t hi = wb->v[j - 1].off + wb->v[j - 1].len > end ? wb->v[j - 1].off + wb->v[j - 1].len : end;
    char    *buf = malloc((size_t)(hi - lo));
    if (!buf)
        return -1;
    uint64_t old = 0;
    for (size_t k = i; k < j; k++) {
        memcpy(buf + (wb->v[k].off - lo), wb->v[k].buf, (size_t)wb->v[k].len);
        old += wb->v[k].len;
        free(wb->v[k].buf);
    }
    memcpy(buf + (off - lo), src, (size_t)len);
    wb->v[i] = (wb_ext_t){lo, hi - lo, hi - lo, buf};
    memmove(wb->v + i + 1, wb->v + j, (wb->n - j) * sizeof *wb->v);
    wb->n -= j - i - 1;
    wb->bytes = wb->bytes - old + (hi - lo);
    return 0;
}

int tagg_wb_flush(tagg_file_t *f)
{
    tagg_wb_t *wb = f->wb;
    if (!wb)
        return 0;
    wb->nread = 0; /* a rewrite follows its read directly */
    if (wb->n == 0)
        return 0;
    tagg_extents_t x;
    int            rc = 0;
    tagg_extents_init(&x);
    for (size_t i = 0; i < wb->n && rc == 0; i++)
        if (tagg_extents_push(&x, wb->v[i].off, wb->v[i].len, wb->v[i].buf) < 0) {
            TAGG_ERR(TAGG_E_NOMEM, "out of memory");
            rc = -1;
        }
    uint64_t bytes = wb->bytes;
    if (rc == 0 && tagg_fault("wb_flush", f->rank)) {
        TAGG_ERR(TAGG_E_IO, "injected fault (TAGG_FAULT=wb_flush)");
        rc = -1;
    }
    else if (rc == 0 && tagg_io_exec(f, &x, TAGG_RAW, false, TAGG_WRITE, 0) < 0)
        rc = -1;
    if (rc < 0 && bytes) {
        TAGG_ERR(TAGG_E_IO, "writing %llu bytes kept behind (write_behind) to %s failed; they are lost",
                 (unsigned long long)bytes, f->path);
    }
    tagg_extents_free(&x);
    drop_all(wb);
    f->stats.wb_flushes++;
    return rc;
}

static int by_off(const void *a, const void *b)
{
    uint64_t x = ((const wb_range_t *)a)->off, y = ((const wb_range_t *)b)->off;
    return x < y ? -1 : x > y;
}

void tagg_wb_forget_read(tagg_wb_t *wb)
{
    if (wb)
        wb->nread = 0;
}

int tagg_wb_note_read(tagg_wb_t *wb, const tagg_extents_t *x)
{
    wb->nread = 0;
    if (x->n == 0)
        return 0;
    if (x->n > wb->capread) {
        wb_range_t *r = realloc(wb->read, x->n * sizeof *r);
        if (!r)
            return -1; /* nothing noted */
        wb->read = r, wb->capread = x->n;
    }
    for (size_t i = 0; i < x->n; i++)
        if (x->v[i].len)
            wb->read[wb->nread++] = (wb_range_t){x->v[i].off, x->v[i].len};
    qsort(wb->read, wb->nread, sizeof *wb->read, by_off);
    return 0;
}

/* Every extent of x lies inside one range of this rank's last read, and no
 * write came between: x writes back bytes this rank has just read. (Not
 * "inside what is kept" as well: a plain write there would stay invisible to
 * other ranks, and HDF5 may reuse freed space for a write it then announces by
 * a barrier.) */
static int rewrites(const tagg_wb_t *wb, const tagg_extents_t *x)
{
    for (size_t k = 0; k < x->n; k++) {
        uint64_t off = x->v[k].off, end = off + x->v[k].len;
        size_t   lo = 0, hi = wb->nread; /* past the last read range starting at or before off */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (wb->read[mid].off <= off)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (x->v[k].len && !(lo > 0 && wb->read[lo - 1].off + wb->read[lo - 1].len >= end))
            return 0;
    }
    return 1;
}

int tagg_wb_write(tagg_file_t *f, const tagg_extents_t *x)
{
    tagg_wb_t *wb = f->wb;
    if (x->bytes == 0)
        return 1;
    if (x->bytes > wb->limit || !rewrites(wb, x))
        return tagg_wb_flush(f) < 0 ? -1 : 0;
    wb->nread = 0; /* the read is used up: the next write needs its own */
    if (wb->bytes + x->bytes > wb->limit && tagg_wb_flush(f) < 0)
        return -1;
    /* In the order given: of two pieces of x over one byte, the later wins. */
    for (size_t i = 0; i < x->n; i++)
        if (x->v[i].len && keep(wb, x->v[i].off, x->v[i].len, x->v[i].mem) < 0) {
            TAGG_ERR(TAGG_E_NOMEM, "out of memory keeping a write behind (write_behind)");
            return -1;
        }
    f->stats.wb_calls++;
    f->stats.wb_bytes += x->bytes;
    /* The overlap rule can make the extents over a write larger than the
     * write: keep to the limit. */
    if (wb->bytes > wb->limit && tagg_wb_flush(f) < 0)
        return -1;
    return 1;
}

int tagg_wb_holds(const tagg_wb_t *wb, const tagg_extents_t *x)
{
    for (size_t k = 0; k < x->n; k++) {
        uint64_t off = x->v[k].off, end = off + x->v[k].len;
        size_t   i   = first_after(wb, off);
        if (x->v[k].len && !(i < wb->n && wb->v[i].off <= off && wb->v[i].off + wb->v[i].len >= end))
            return 0;
    }
    return 1;
}

int tagg_wb_read(const tagg_wb_t *wb, const tagg_extents_t *x, tagg_extents_t *rest)
{
    for (size_t k = 0; k < x->n; k++) {
        const tagg_extent_t *e = &x->v[k];
        uint64_t             pos = e->off, end = e->off + e->len;
        for (size_t i = first_after(wb, pos); i < wb->n && wb->v[i].off < end; i++) {
            const wb_ext_t *c = &wb->v[i];
            if (c->off > pos && tagg_extents_push(rest, pos, c->off - pos, e->mem + (pos - e->off)) < 0)
                return -1;
            uint64_t from = c->off > pos ? c->off : pos;
            uint64_t to   = c->off + c->len < end ? c->off + c->len : end;
            memcpy(e->mem + (from - e->off), c->buf + (from - c->off), (size_t)(to - from));
            pos = to;
        }
        if (pos < end && tagg_extents_push(rest, pos, end - pos, e->mem + (pos - e->off)) < 0)
            return -1;
    }
    return 0;
}
