/* How much of a file range the node's page cache holds, for records and
 * tuning (tagg/tune.h TAGG_TV_RESIDENT): a read of resident pages is a copy
 * from memory, one of pages that are not waits for the storage. On local
 * disks the kernel's readahead (8 MiB here) fills the cache for the ranks'
 * later calls, so the same call of a sweep takes 0.2 ms or 2 ms by what an
 * earlier call brought in; nothing else in a record says which.
 *
 * Resident means up to date: mincore(2) on read-only shared mappings of the
 * range (any Linux; TAGG_PAGECACHE_MINCORE_MAX bytes at a time). cachestat(2)
 * (Linux 6.5+, no mapping) answers first where the range holds no page at
 * all; it also counts pages that readahead has put in the cache and is still
 * reading (until session 47 its count was taken: the same 1 MiB read then
 * took 2 ms at "resident 1"), so it is the count only where no mapping can be
 * made; what it counts beyond mincore is what is in flight
 * (tagg_pagecache_state). Never reads or changes the file. */
#ifndef TAGG_PAGECACHE_H
#define TAGG_PAGECACHE_H

#include <stdint.h>

#define TAGG_PAGECACHE_MINCORE_MAX ((uint64_t)1 << 30)

/* Bytes of [off, off + len) of the file open as fd that are in the page cache
 * and up to date (whole pages counted, at most len). 0 and *bytes, or -1 when
 * it cannot be told (no system call for it, no mapping of the file). */
int tagg_pagecache_resident(int fd, uint64_t off, uint64_t len, uint64_t *bytes);

/* The same, and *flight: bytes of the range the cache holds that are not up
 * to date yet (readahead's read of them under way: cachestat's count less
 * mincore's, whole pages), 0 where either cannot tell (tune.h in_flight). A
 * read of such pages waits for the rest of a read already started, not for a
 * read of its own: on this machine's disk, direct 1 MiB reads of HACC SoA
 * 256K with half their pages up to date took 2.3 ms with none of the rest in
 * flight and 1.1 ms with all of it (session 48's sweep, medians). */
int tagg_pagecache_state(int fd, uint64_t off, uint64_t len, uint64_t *bytes, uint64_t *flight);

/* The same by one way only (tests): TAGG_PAGECACHE_CACHESTAT (pages under
 * readahead's read counted) or _MINCORE; both: tagg_pagecache_resident. */
enum { TAGG_PAGECACHE_CACHESTAT = 1, TAGG_PAGECACHE_MINCORE = 2 };
int tagg_pagecache_resident_by(int how, int fd, uint64_t off, uint64_t len, uint64_t *bytes);

#endif
