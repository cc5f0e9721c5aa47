/* How much of a file range the node's page cache holds, for records and
 * tuning (tagg/tune.h TAGG_TV_RESIDENT): a read of resident pages is a copy
 * from memory, one of pages that are not waits for the storage. On local
 * disks the kernel's readahead (8 MiB here) fills the cache for the ranks'
 * later calls, so the same call of a sweep takes 0.2 ms or 2 ms by what an
 * earlier call brought in; nothing else in a record says which.
 *
 * Linux's cachestat(2) (kernel 6.5+: one call, no mapping), else mincore(2)
 * on a read-only shared mapping of the range (any Linux; at most
 * TAGG_PAGECACHE_MINCORE_MAX bytes). Never reads or changes the file. */
#ifndef TAGG_PAGECACHE_H
#define TAGG_PAGECACHE_H

#include <stdint.h>

#define TAGG_PAGECACHE_MINCORE_MAX ((uint64_t)1 << 30)

/* Bytes of [off, off + len) of the file open as fd that are in the page cache
 * (whole pages counted, at most len). 0 and *bytes, or -1 when it cannot be
 * told (no system call for it, a range too large for the fallback). */
int tagg_pagecache_resident(int fd, uint64_t off, uint64_t len, uint64_t *bytes);

/* The same by one way only (tests): TAGG_PAGECACHE_CACHESTAT or _MINCORE. */
enum { TAGG_PAGECACHE_CACHESTAT = 1, TAGG_PAGECACHE_MINCORE = 2 };
int tagg_pagecache_resident_by(int how, int fd, uint64_t off, uint64_t len, uint64_t *bytes);

#endif
