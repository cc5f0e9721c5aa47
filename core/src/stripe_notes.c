/* The stripes a rank noted (stripe_notes.h): open addressing, linear probing. */
#include "stripe_notes.h"

#include <stdlib.h>

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

static int notes_grow(notes_t *m)
{
    notes_t g = {0};
    g.cap     = m->cap ? 2 * m->cap : 64;
    g.key     = calloc(g.cap, sizeof *g.key);
    g.crc     = malloc(g.cap * sizeof *g.crc);
    g.form    = malloc(g.cap * sizeof *g.form);
    g.state   = malloc(g.cap);
    if (!g.key || !g.crc || !g.form || !g.state) {
        free(g.key), free(g.crc), free(g.form), free(g.state);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->key[i]) {
            size_t j   = notes_slot(&g, m->key[i] - 1);
            g.key[j]   = m->key[i];
            g.crc[j]   = m->crc[i];
            g.form[j]  = m->form[i];
            g.state[j] = m->state[i];
        }
    g.n = m->n;
    free(m->key), free(m->crc), free(m->form), free(m->state);
    *m = g;
    return 0;
}

/* Sets key's note (the last event wins). 0 or -1 (out of memory). */
int tagg_notes_put(notes_t *m, uint64_t key, int state, uint64_t crc) { return tagg_notes_put_form(m, key, state, crc, 0); }

uint64_t tagg_notes_form(const notes_t *m, uint64_t key)
{
    if (!m->cap)
        return 0;
    size_t i = notes_slot(m, key);
    return m->key[i] ? m->form[i] : 0;
}

void tagg_notes_free(notes_t *m)
{
    free(m->key), free(m->crc), free(m->form), free(m->state);
    m->key = m->crc = m->form = NULL, m->state = NULL, m->cap = m->n = 0;
}

int tagg_notes_put_form(notes_t *m, uint64_t key, int state, uint64_t crc, uint64_t form)
{
    if ((m->n + 1) * 4 > m->cap * 3 && notes_grow(m) < 0)
        return -1;
    size_t i = notes_slot(m, key);
    if (!m->key[i])
        m->key[i] = key + 1, m->n++;
    m->state[i] = (uint8_t)state;
    m->crc[i]   = crc;
    m->form[i]  = form;
    return 0;
}

int tagg_notes_get(const notes_t *m, uint64_t key)
{
    if (!m->cap)
        return 0;
    size_t i = notes_slot(m, key);
    return m->key[i] ? m->state[i] : 0;
}

/* Drops the notes of stripes at or past stripe j0 (both spaces): a cut. */
void tagg_notes_cut(notes_t *m, uint64_t j0)
{
    if (!m->cap)
        return;
    notes_t keep = {0};
    int     ok   = 1;
    for (size_t i = 0; i < m->cap && ok; i++)
        if (m->key[i] && (m->key[i] - 1) / 2 < j0)
            ok = tagg_notes_put_form(&keep, m->key[i] - 1, m->state[i], m->crc[i], m->form[i]) == 0;
    if (!ok) { /* out of memory: mark everything left dirty instead (safe: re-read at close) */
        for (size_t i = 0; i < m->cap; i++)
            if (m->key[i])
                m->state[i] = NOTE_DIRTY;
        tagg_notes_free(&keep);
        return;
    }
    free(m->key), free(m->crc), free(m->form), free(m->state);
    *m = keep;
}

