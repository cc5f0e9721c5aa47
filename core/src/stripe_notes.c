/* The stripes a rank noted (stripe_notes.h): open addressing, linear probing. */
#include "stripe_notes.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33, x *= UINT64_C(0xff51afd7ed558ccd), x ^= x >> 33;
    return x;
}

/* The slot of key (found, or the empty one where it goes). */
static size_t notes_slot(const notes_t *m, uint64_t key)
{
    size_t i = (size_t)mix(key) & (m->cap - 1);
    while (m->key[i] && m->key[i] != key + 1)
        i = (i + 1) & (m->cap - 1);
    return i;
}

/* Copies the note in slot i of src to slot j of dst (the key too). */
static void copy_slot(notes_t *dst, size_t j, const notes_t *src, size_t i)
{
    dst->key[j] = src->key[i], dst->crc[j] = src->crc[i], dst->delta[j] = src->delta[i];
    dst->form[j] = src->form[i], dst->state[j] = src->state[i], dst->nspan[j] = src->nspan[i];
    memcpy(dst->span + 2 * NOTE_SPANS * j, src->span + 2 * NOTE_SPANS * i, 2 * NOTE_SPANS * sizeof *dst->span);
    if (src->nb)
        memcpy(dst->bd + (size_t)dst->nb * j, src->bd + (size_t)src->nb * i, src->nb * sizeof *dst->bd);
}

/* The slot holding key's note, or -1 when there is none. */
static long find(const notes_t *m, uint64_t key)
{
    if (!m->cap)
        return -1;
    size_t i = notes_slot(m, key);
    return m->key[i] ? (long)i : -1;
}

static int notes_grow(notes_t *m)
{
    notes_t g = {0};
    g.nb      = m->nb;
    g.cap     = m->cap ? 2 * m->cap : 64;
    g.bd      = g.nb ? malloc(g.cap * g.nb * sizeof *g.bd) : NULL;
    g.key     = calloc(g.cap, sizeof *g.key);
    g.crc     = malloc(g.cap * sizeof *g.crc);
    g.delta   = malloc(g.cap * sizeof *g.delta);
    g.form    = malloc(g.cap * sizeof *g.form);
    g.state   = malloc(g.cap);
    g.span    = malloc(g.cap * 2 * NOTE_SPANS * sizeof *g.span);
    g.nspan   = malloc(g.cap);
    if (!g.key || !g.crc || !g.delta || !g.form || !g.state || !g.span || !g.nspan || (g.nb && !g.bd)) {
        tagg_notes_free(&g);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->key[i])
            copy_slot(&g, notes_slot(&g, m->key[i] - 1), m, i);
    g.n = m->n;
    tagg_notes_free(m);
    *m = g;
    return 0;
}

void tagg_notes_free(notes_t *m)
{
    free(m->key), free(m->crc), free(m->delta), free(m->form), free(m->state), free(m->span), free(m->nspan);
    free(m->bd);
    m->key = m->crc = m->delta = m->form = m->span = m->bd = NULL, m->state = m->nspan = NULL, m->cap = m->n = 0;
}

/* The slot of key, made when new. */
static int slot_for(notes_t *m, uint64_t key, size_t *at)
{
    if ((m->n + 1) * 4 > m->cap * 3 && notes_grow(m) < 0)
        return -1;
    size_t i = notes_slot(m, key);
    if (!m->key[i]) {
        m->key[i] = key + 1, m->n++, m->state[i] = 0, m->crc[i] = 0, m->delta[i] = 0, m->form[i] = 0;
        m->nspan[i] = 0;
        if (m->nb)
            memset(m->bd + (size_t)m->nb * i, 0, m->nb * sizeof *m->bd);
    }
    *at = i;
    return 0;
}

/* Adds [lo, hi) to the n disjoint spans v (lo, hi pairs by lo): the spans it
 * touches or overlaps become one; past NOTE_SPANS, the two with the smallest
 * gap between them merge. */
static void add_span(uint64_t *v, uint8_t *n, uint64_t lo, uint64_t hi)
{
    uint64_t t[2 * (NOTE_SPANS + 1)];
    int      c = 0, k = 0, have = *n;
    for (; k < have && v[2 * k + 1] < lo; k++, c++) /* wholly before */
        t[2 * c] = v[2 * k], t[2 * c + 1] = v[2 * k + 1];
    for (; k < have && v[2 * k] <= hi; k++) { /* touched: absorbed */
        lo = v[2 * k] < lo ? v[2 * k] : lo;
        hi = v[2 * k + 1] > hi ? v[2 * k + 1] : hi;
    }
    t[2 * c] = lo, t[2 * c + 1] = hi, c++;
    for (; k < have; k++, c++) /* wholly after */
        t[2 * c] = v[2 * k], t[2 * c + 1] = v[2 * k + 1];
    if (c > NOTE_SPANS) { /* one too many: close the smallest gap */
        int g = 0;
        for (int x = 1; x + 1 < c; x++)
            if (t[2 * (x + 1)] - t[2 * x + 1] < t[2 * (g + 1)] - t[2 * g + 1])
                g = x;
        t[2 * g + 1] = t[2 * (g + 1) + 1];
        memmove(t + 2 * (g + 1), t + 2 * (g + 2), 2 * (size_t)(c - g - 2) * sizeof *t);
        c--;
    }
    memcpy(v, t, 2 * (size_t)c * sizeof *t);
    *n = (uint8_t)c;
}

/* Sets key's note (the last event wins). 0 or -1 (out of memory). */
int tagg_notes_put(notes_t *m, uint64_t key, int state, uint64_t crc)
{
    size_t i;
    if (slot_for(m, key, &i) < 0)
        return -1;
    m->state[i] = (uint8_t)((m->state[i] & ~7) | state);
    m->crc[i]   = crc;
    return 0;
}

int tagg_notes_write(notes_t *m, uint64_t key, int full, uint64_t crc, uint64_t form, uint64_t delta,
                     const uint64_t *bdelta, uint64_t lo, uint64_t hi, int flags)
{
    size_t i;
    if (slot_for(m, key, &i) < 0)
        return -1;
    if (m->nb) {
        uint64_t *bd = m->bd + (size_t)m->nb * i;
        if (!bdelta)
            flags |= NOTE_NOBLOCKS;
        else if (full)
            memcpy(bd, bdelta, m->nb * sizeof *bd), m->state[i] &= (uint8_t)~NOTE_NOBLOCKS;
        else
            for (unsigned b = 0; b < m->nb; b++)
                bd[b] ^= bdelta[b];
    }
    m->state[i] = (uint8_t)((m->state[i] & ~7) | (full ? NOTE_FULL | NOTE_HADFULL : NOTE_DIRTY) | flags);
    m->crc[i]   = full ? crc : 0;
    m->form[i]  = full ? form : 0;
    m->delta[i] = full ? delta : m->delta[i] ^ delta;
    if (lo < hi)
        add_span(m->span + 2 * NOTE_SPANS * i, &m->nspan[i], lo, hi);
    return 0;
}

int tagg_notes_touch(const notes_t *m, uint64_t key, uint64_t a, uint64_t b, uint64_t *lo, uint64_t *hi)
{
    long i = find(m, key);
    if (i < 0)
        return 0;
    const uint64_t *v   = m->span + 2 * NOTE_SPANS * i;
    int             hit = 0;
    for (int k = 0; k < m->nspan[i]; k++) {
        uint64_t x = v[2 * k] > a ? v[2 * k] : a, y = v[2 * k + 1] < b ? v[2 * k + 1] : b;
        if (x >= y)
            continue;
        if (!hit++)
            *lo = x;
        *hi = y;
    }
    return hit != 0;
}

int tagg_notes_spans(const notes_t *m, uint64_t key, uint64_t *out)
{
    long i = find(m, key);
    if (i < 0)
        return 0;
    memcpy(out, m->span + 2 * NOTE_SPANS * i, 2 * (size_t)m->nspan[i] * sizeof *out);
    return m->nspan[i];
}

void tagg_notes_cut_within(notes_t *m, uint64_t j, uint64_t at)
{
    for (uint64_t key = 2 * j; key <= 2 * j + 1; key++) {
        long i = find(m, key);
        if (i >= 0 && m->nspan[i] && m->span[2 * NOTE_SPANS * i + 2 * m->nspan[i] - 1] > at)
            m->state[i] |= NOTE_UNSURE;
    }
}

const uint64_t *tagg_notes_bdelta(const notes_t *m, uint64_t key)
{
    long i = find(m, key);
    return i < 0 || !m->nb ? NULL : m->bd + (size_t)m->nb * (size_t)i;
}

uint64_t tagg_notes_crc(const notes_t *m, uint64_t key)
{
    long i = find(m, key);
    return i < 0 ? 0 : m->crc[i];
}

uint64_t tagg_notes_form(const notes_t *m, uint64_t key)
{
    long i = find(m, key);
    return i < 0 ? 0 : m->form[i];
}

uint64_t tagg_notes_delta(const notes_t *m, uint64_t key)
{
    long i = find(m, key);
    return i < 0 ? 0 : m->delta[i];
}

int tagg_notes_get(const notes_t *m, uint64_t key)
{
    long i = find(m, key);
    return i < 0 ? 0 : m->state[i];
}

/* Drops the notes of stripes at or past stripe j0 (both spaces): a cut. */
void tagg_notes_cut(notes_t *m, uint64_t j0)
{
    if (!m->cap)
        return;
    notes_t keep = {0};
    int     ok   = 1;
    keep.nb      = m->nb;
    for (size_t i = 0; i < m->cap && ok; i++)
        if (m->key[i] && (m->key[i] - 1) / 2 < j0) {
            size_t at;
            if (!(ok = slot_for(&keep, m->key[i] - 1, &at) == 0))
                break;
            copy_slot(&keep, at, m, i);
        }
    if (!ok) { /* out of memory: mark everything left dirty, as if written whole before (safe: re-read at close, unchecked) */
        for (size_t i = 0; i < m->cap; i++)
            if (m->key[i])
                m->state[i] = NOTE_DIRTY | NOTE_HADFULL | NOTE_UNSURE;
        tagg_notes_free(&keep);
        return;
    }
    tagg_notes_free(m);
    *m = keep;
}

