/* Re-reads of a read-only open from memory (rcache.h). */
#include "rcache.h"
#include "bufpool.h"

#include <string.h>
#include <tagg/tune.h>

/* self-tuning models of format 3 know which re-reads this cache serves */
_Static_assert(TAGG_RCACHE_MAX == TAGG_TUNE_RCACHE_RUN && TAGG_RCACHE_SLOTS == TAGG_TUNE_RCACHE_SLOTS,
               "tagg/tune.h's TAGG_TUNE_RCACHE_* follow rcache.h");

static uint64_t held; /* bytes of buffers all caches of the process hold (atomic) */

/* A slot's buffer within the process's budget, or NULL. */
static char *buf_take(void)
{
    if (__atomic_add_fetch(&held, TAGG_RCACHE_MAX, __ATOMIC_RELAXED) > TAGG_RCACHE_PROCESS) {
        __atomic_sub_fetch(&held, TAGG_RCACHE_MAX, __ATOMIC_RELAXED);
        return NULL;
    }
    char *b = tagg_buf_get((size_t)TAGG_RCACHE_MAX);
    if (!b)
        __atomic_sub_fetch(&held, TAGG_RCACHE_MAX, __ATOMIC_RELAXED);
    return b;
}

void tagg_rcache_init(tagg_rcache_t *c, uint64_t align, uint64_t min, uint64_t *counts)
{
    memset(c, 0, sizeof *c);
    c->align  = align ? align : 1;
    c->min    = min;
    c->counts = counts;
    pthread_mutex_init(&c->mu, NULL);
}

void tagg_rcache_fini(tagg_rcache_t *c)
{
    for (int i = 0; i < TAGG_RCACHE_SLOTS; i++) {
        if (c->slot[i].buf) {
            tagg_buf_put(c->slot[i].buf, (size_t)TAGG_RCACHE_MAX);
            __atomic_sub_fetch(&held, TAGG_RCACHE_MAX, __ATOMIC_RELAXED);
        }
        c->slot[i].buf = NULL, c->slot[i].len = 0;
    }
    pthread_mutex_destroy(&c->mu);
}

/* Which free slot to fill: an empty one that has its buffer, then any empty
 * one, then the one that served a read longest ago. */
static int worse(const struct tagg_rcache_slot *t, const struct tagg_rcache_slot *than)
{
    int ct = t->len ? 2 : t->buf ? 0 : 1, cu = than->len ? 2 : than->buf ? 0 : 1;
    return ct != cu ? ct < cu : ct == 2 && t->used < than->used;
}

int tagg_rcache_read(tagg_rcache_t *c, uint64_t off, uint64_t len, void *buf, tagg_rcache_fill_fn fill, void *ctx)
{
    if (len < c->min || !len || len > TAGG_RCACHE_MAX || off > UINT64_MAX - 2 * TAGG_RCACHE_MAX)
        return 0;
    uint64_t a = off / c->align * c->align, b = (off + len + c->align - 1) / c->align * c->align;
    if (b - a > TAGG_RCACHE_MAX)
        return 0;
    pthread_mutex_lock(&c->mu);
    struct tagg_rcache_slot *s = NULL, *pick = &c->slot[0];
    for (int i = 0; i < TAGG_RCACHE_SLOTS && !s; i++) {
        struct tagg_rcache_slot *t = &c->slot[i];
        if (t->len && t->off <= off && off + len <= t->off + t->len)
            s = t;
        else if (worse(t, pick))
            pick = t;
    }
    int rc = 1;
    if (s)
        __atomic_fetch_add(&c->counts[0], 1, __ATOMIC_RELAXED);
    else {
        s      = pick;
        s->len = 0;
        if (!s->buf && !(s->buf = buf_take()))
            rc = 0; /* no memory for it, or over the process's budget: read as usual */
        else if (fill(ctx, a, b - a, s->buf) < 0)
            rc = -1;
        else {
            s->off = a, s->len = b - a;
            __atomic_fetch_add(&c->counts[1], 1, __ATOMIC_RELAXED);
        }
    }
    if (rc == 1) {
        s->used = ++c->clock;
        memcpy(buf, s->buf + (off - s->off), (size_t)len);
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}
