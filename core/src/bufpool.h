/* Large aligned buffers kept by the process from one file to the next.
 *
 * A buffer of a few MiB that a file allocates and frees is new memory at the
 * next file: its first touch costs a page fault per 4 KiB page (1.5 ms per
 * 2.75 MiB on this machine, session 25; 2-3 ms per 4 MiB stripe). The layouts
 * allocate such buffers per open -- the subfile layout's checked copies of
 * stripes (a read-only open with verify=1 reads each stripe whole into one),
 * direct I/O's bounce buffers -- so a process that opens many files paid those
 * faults at every file. Buffers given back here are kept, up to
 * TAGG_BUFPOOL_KEEP of them and TAGG_BUFPOOL_BYTES in all, and handed out
 * again for the same size; the least recently given back goes first. Every
 * buffer is aligned to TAGG_DIO_ALIGN. Its bytes are what the process last
 * wrote there (callers overwrite what they read). Thread-safe; what is kept
 * is freed at exit. */
#ifndef TAGG_BUFPOOL_H
#define TAGG_BUFPOOL_H

#include <stddef.h>

#define TAGG_BUFPOOL_KEEP 6                          /* buffers kept, at most */
#define TAGG_BUFPOOL_BYTES ((size_t)16 << 20)         /* bytes kept, at most */

/* A buffer of size bytes, aligned to TAGG_DIO_ALIGN: a kept one of that size,
 * else new; NULL when there is no memory. */
void *tagg_buf_get(size_t size);
/* Gives back buf (size bytes, from tagg_buf_get; NULL: nothing): kept for a
 * later tagg_buf_get, or freed. */
void tagg_buf_put(void *buf, size_t size);
/* Counters (tests): buffers handed out from the pool and newly allocated. */
void tagg_buf_counts(unsigned long long *reused, unsigned long long *made);

#endif
