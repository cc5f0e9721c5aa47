/* Emptying the page cache between a benchmark's write and read (the tools). */
#ifndef TAGG_DROP_CACHES_H
#define TAGG_DROP_CACHES_H

#include <stddef.h>

/* sync, then "3" into `file` (normally /proc/sys/vm/drop_caches: the page
 * cache, dentries and inodes of this node; clean pages only, hence the sync).
 * Needs root. 0, or -1 with the reason in err. */
int tagg_drop_caches(const char *file, char *err, size_t len);

#endif
