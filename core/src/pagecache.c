/* The page cache's share of a file range (pagecache.h). */
#define _GNU_SOURCE /* syscall, mincore */
#include "pagecache.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

/* cachestat(2), Linux 6.5: the C library's headers may predate it; its
 * number is the same on every architecture that has it. */
#if defined(__linux__) && !defined(__NR_cachestat) && (defined(__x86_64__) || defined(__aarch64__))
#define __NR_cachestat 451
#endif

struct cachestat_range {
    uint64_t off, len;
};
struct cachestat {
    uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

static int by_cachestat(int fd, uint64_t off, uint64_t len, uint64_t page, uint64_t *bytes)
{
#if defined(__NR_cachestat)
    static int missing; /* ENOSYS once: not asked again (threads may race to set it: atomics) */
    if (__atomic_load_n(&missing, __ATOMIC_RELAXED))
        return -1;
    struct cachestat_range r = {off, len};
    struct cachestat       cs;
    if (syscall(__NR_cachestat, fd, &r, &cs, 0u) != 0) {
        if (errno == ENOSYS)
            __atomic_store_n(&missing, 1, __ATOMIC_RELAXED);
        return -1;
    }
    *bytes = cs.nr_cache * page;
    return 0;
#else
    (void)fd, (void)off, (void)len, (void)page, (void)bytes;
    return -1;
#endif
}

/* mincore(2) on read-only shared mappings of the range, at most
 * TAGG_PAGECACHE_MINCORE_MAX bytes at a time: it counts the pages whose
 * contents are in memory (up to date), not those the kernel's readahead has
 * put in the cache and is still reading. */
static int by_mincore(int fd, uint64_t off, uint64_t len, uint64_t page, uint64_t *bytes)
{
    uint64_t a = off / page * page, end = off + len, c = 0;
    uint64_t most = end - a < TAGG_PAGECACHE_MINCORE_MAX ? end - a : TAGG_PAGECACHE_MINCORE_MAX;
    unsigned char *vec = malloc((size_t)((most + page - 1) / page));
    if (!vec)
        return -1;
    int rc = 0;
    for (; a < end && rc == 0; a += TAGG_PAGECACHE_MINCORE_MAX) {
        uint64_t span = end - a < TAGG_PAGECACHE_MINCORE_MAX ? end - a : TAGG_PAGECACHE_MINCORE_MAX;
        void    *p    = mmap(NULL, (size_t)span, PROT_READ, MAP_SHARED, fd, (off_t)a);
        rc            = p == MAP_FAILED ? -1 : mincore(p, (size_t)span, vec);
        for (size_t i = 0; rc == 0 && i < (size_t)((span + page - 1) / page); i++)
            c += vec[i] & 1;
        if (p != MAP_FAILED)
            munmap(p, (size_t)span);
    }
    free(vec);
    if (rc == 0)
        *bytes = c * page;
    return rc;
}

/* cachestat first when asked for both: it needs no mapping, and a range
 * without a page in the cache holds nothing, by either count. Any page there
 * may still be under readahead's read (cachestat counts it as cached: a call
 * that began then waited 2 ms, not 0.1, for its 1 MiB on this machine's disk),
 * so the count is mincore's; cachestat's only when no mapping can be made.
 * *flight (may be NULL): cachestat's count less mincore's when both answered,
 * else 0. */
static int state_by(int how, int fd, uint64_t off, uint64_t len, uint64_t *bytes, uint64_t *flight)
{
    long ps = sysconf(_SC_PAGESIZE);
    if (fd < 0 || ps <= 0 || len == 0 || off + len < off || off > (uint64_t)INT64_MAX - len)
        return -1;
    uint64_t page = (uint64_t)ps, b = 0, m = 0, c = 0, f = 0;
    int      rc = -1;
    if ((how & TAGG_PAGECACHE_CACHESTAT) && (rc = by_cachestat(fd, off, len, page, &c)) == 0)
        b = c = c < len ? c : len;
    if ((how & TAGG_PAGECACHE_MINCORE) && !(rc == 0 && c == 0) && by_mincore(fd, off, len, page, &m) == 0) {
        m = m < len ? m : len;
        f = rc == 0 && c > m ? c - m : 0; /* cachestat answered too */
        b = m, rc = 0;
    }
    if (rc < 0)
        return -1;
    *bytes = b;
    if (flight)
        *flight = f;
    return 0;
}

int tagg_pagecache_resident_by(int how, int fd, uint64_t off, uint64_t len, uint64_t *bytes)
{
    return state_by(how, fd, off, len, bytes, NULL);
}

int tagg_pagecache_resident(int fd, uint64_t off, uint64_t len, uint64_t *bytes)
{
    return state_by(TAGG_PAGECACHE_CACHESTAT | TAGG_PAGECACHE_MINCORE, fd, off, len, bytes, NULL);
}

int tagg_pagecache_state(int fd, uint64_t off, uint64_t len, uint64_t *bytes, uint64_t *flight)
{
    return state_by(TAGG_PAGECACHE_CACHESTAT | TAGG_PAGECACHE_MINCORE, fd, off, len, bytes, flight);
}
