/* Metadata echoes (md_echo.h). */
#include "md_echo.h"

#include <string.h>

void tagg_md_echo_init(tagg_md_echo_t *m)
{
    memset(m, 0, sizeof *m);
}

/* A remembered write that holds e's bytes: e lies inside it and its bytes
 * there are e's (HDF5 may write the superblock alone where it wrote it with
 * the metadata after it in one piece). */
static int held(const tagg_md_echo_t *m, const tagg_extent_t *e)
{
    for (int i = 0; i < TAGG_MD_ECHO_SLOTS; i++) {
        const tagg_md_echo_slot_t *s = &m->slot[i];
        if (s->len && s->off <= e->off && e->off + e->len <= s->off + s->len &&
            memcmp(s->bytes + (e->off - s->off), e->mem, (size_t)e->len) == 0)
            return 1;
    }
    return 0;
}

int tagg_md_echo_repeats(const tagg_md_echo_t *m, const tagg_extents_t *x)
{
    if (!x->n)
        return 0;
    for (size_t i = 0; i < x->n; i++)
        if (!held(m, &x->v[i]))
            return 0;
    return 1;
}

void tagg_md_echo_wrote(tagg_md_echo_t *m, const tagg_extents_t *x, int remember)
{
    for (size_t i = 0; i < x->n; i++) {
        const tagg_extent_t *e = &x->v[i];
        for (int k = 0; k < TAGG_MD_ECHO_SLOTS; k++) {
            tagg_md_echo_slot_t *s = &m->slot[k];
            if (s->len && s->off < e->off + e->len && e->off < s->off + s->len)
                s->len = 0;
        }
    }
    if (!remember)
        return;
    for (size_t i = 0; i < x->n; i++) {
        const tagg_extent_t *e = &x->v[i];
        if (e->len > TAGG_MD_ECHO_MAX)
            continue;
        tagg_md_echo_slot_t *s = &m->slot[0];
        for (int k = 0; k < TAGG_MD_ECHO_SLOTS; k++) { /* a free slot, else the oldest */
            if (!m->slot[k].len) {
                s = &m->slot[k];
                break;
            }
            if (m->slot[k].age < s->age)
                s = &m->slot[k];
        }
        s->off = e->off, s->len = e->len, s->age = ++m->clock;
        memcpy(s->bytes, e->mem, (size_t)e->len);
    }
}

void tagg_md_echo_forget(tagg_md_echo_t *m)
{
    for (int k = 0; k < TAGG_MD_ECHO_SLOTS; k++)
        m->slot[k].len = 0;
}
