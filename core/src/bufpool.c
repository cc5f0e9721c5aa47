/* Large aligned buffers kept by the process from one file to the next (bufpool.h). */
#include "bufpool.h"

#include "dio.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct kept {
    void    *buf; /* NULL: empty */
    size_t   size;
    uint64_t when; /* clock of its put */
} kept[TAGG_BUFPOOL_KEEP];
static size_t             kept_bytes;
static uint64_t           clock_;
static unsigned long long n_reused, n_made;

void *tagg_buf_get(size_t size)
{
    void *b = NULL;
    pthread_mutex_lock(&mu);
    struct kept *best = NULL;
    for (int i = 0; i < TAGG_BUFPOOL_KEEP; i++)
        if (kept[i].buf && kept[i].size == size && (!best || kept[i].when > best->when))
            best = &kept[i];
    if (best) {
        b = best->buf, best->buf = NULL, kept_bytes -= size, n_reused++;
    }
    pthread_mutex_unlock(&mu);
    if (b)
        return b;
    if (posix_memalign(&b, TAGG_DIO_ALIGN, size ? size : 1) != 0)
        return NULL;
    __atomic_add_fetch(&n_made, 1, __ATOMIC_RELAXED); /* outside the lock: nothing kept changes */
    return b;
}

void tagg_buf_put(void *buf, size_t size)
{
    if (!buf)
        return;
    if (size > TAGG_BUFPOOL_BYTES) {
        free(buf);
        return;
    }
    void *drop[TAGG_BUFPOOL_KEEP];
    int   ndrop = 0;
    pthread_mutex_lock(&mu);
    /* room: the oldest kept buffers go until this one fits */
    for (;;) {
        struct kept *empty = NULL, *oldest = NULL;
        int          n     = 0;
        for (int i = 0; i < TAGG_BUFPOOL_KEEP; i++) {
            if (!kept[i].buf) {
                empty = empty ? empty : &kept[i];
                continue;
            }
            n++;
            if (!oldest || kept[i].when < oldest->when)
                oldest = &kept[i];
        }
        if (empty && kept_bytes + size <= TAGG_BUFPOOL_BYTES) {
            *empty = (struct kept){buf, size, ++clock_};
            kept_bytes += size;
            buf = NULL;
            break;
        }
        if (!n) /* nothing left to give up (cannot happen: size fits an empty pool) */
            break;
        drop[ndrop++] = oldest->buf, kept_bytes -= oldest->size, oldest->buf = NULL;
    }
    pthread_mutex_unlock(&mu);
    for (int i = 0; i < ndrop; i++)
        free(drop[i]);
    free(buf);
}

void tagg_buf_counts(unsigned long long *reused, unsigned long long *made)
{
    pthread_mutex_lock(&mu);
    *reused = n_reused;
    pthread_mutex_unlock(&mu);
    *made = __atomic_load_n(&n_made, __ATOMIC_RELAXED);
}

__attribute__((destructor)) static void bufpool_free(void)
{
    for (int i = 0; i < TAGG_BUFPOOL_KEEP; i++)
        free(kept[i].buf), kept[i].buf = NULL;
    kept_bytes = 0;
}
