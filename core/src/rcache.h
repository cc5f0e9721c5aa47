/* Re-reads of a read-only open from memory: a few recent large reads kept.
 *
 * HDF5 reads a compound dataset member by member (h5bench's VPIC
 * interleaved pattern, h5py's dset['x']): every member's read reads the same
 * whole records again through its 1 MiB conversion buffer, so each rank reads
 * its range once per member (8 times for VPIC's 8 members). Where tagg moves
 * large accesses with O_DIRECT (direct_io: a FUSE client such as GlusterFS's,
 * where a cold buffered 1 MiB read costs about twice a direct one), those
 * re-reads would go to the server each time; buffered, the first read is the
 * slow one. A layout that keeps a tagg_rcache_t reads a qualifying request --
 * at least `min` bytes, its 4 KiB-aligned cover at most TAGG_RCACHE_MAX -- as
 * that aligned cover, straight into a kept buffer (so the whole of it moves
 * directly), copies the request out, and serves every later read that lies
 * inside a kept cover from memory.
 *
 * Only read-only opens keep one: nothing this process writes to the file
 * while it is open can make a kept cover stale (HDF5 shares one open of a file
 * among the process's opens of it). What other processes write while it is
 * open is, under MPI-IO's consistency rules, visible only after a sync and a
 * barrier the read-only open does not make; the subfile layout serves re-reads
 * from its checked copies by the same rule. Bytes past the end of the file
 * read as zeros, as the layouts' reads return them.
 *
 * At most TAGG_RCACHE_SLOTS covers; the one that served a read longest ago
 * goes first. Buffers come from and go back to the process's pool
 * (bufpool.h); all the process's caches together hold at most
 * TAGG_RCACHE_PROCESS bytes of them (a process with many files open reads
 * the rest as usual). Thread-safe (one mutex; asynchronous workers may
 * read). */
#ifndef TAGG_RCACHE_H
#define TAGG_RCACHE_H

#include <pthread.h>
#include <stdint.h>

#define TAGG_RCACHE_SLOTS 4
#define TAGG_RCACHE_MAX ((uint64_t)4 << 20) /* the aligned cover of a kept read, at most */
#define TAGG_RCACHE_PROCESS ((uint64_t)32 << 20) /* the buffers of all the process's caches, at most */

/* Reads [off, off + len) into buf (aligned as off, 4 KiB): 0, or -1 with an
 * error pushed. */
typedef int (*tagg_rcache_fill_fn)(void *ctx, uint64_t off, uint64_t len, void *buf);

typedef struct tagg_rcache {
    struct tagg_rcache_slot {
        uint64_t off, len; /* the aligned cover kept (len 0: empty) */
        uint64_t used;     /* clock of the last read it served */
        char    *buf;      /* TAGG_RCACHE_MAX bytes from the pool, or NULL */
    } slot[TAGG_RCACHE_SLOTS];
    uint64_t        clock, align, min;
    uint64_t       *counts; /* [0] reads served from a kept cover, [1] covers read (atomic adds) */
    pthread_mutex_t mu;
} tagg_rcache_t;

/* align: the file offsets' alignment of a cover (a power of two, at most
 * 4 KiB); min: smaller reads are not for the cache; counts[2]: the counters
 * its reads add to. */
void tagg_rcache_init(tagg_rcache_t *c, uint64_t align, uint64_t min, uint64_t *counts);
/* Gives the buffers back to the pool. */
void tagg_rcache_fini(tagg_rcache_t *c);
/* A read through the cache: 1 served (from a kept cover, or from a cover
 * read now through fill), 0 not for the cache (too small or too large: the
 * caller reads it as usual; also when no buffer can be had), -1 the fill
 * failed (its error pushed; nothing kept). */
int tagg_rcache_read(tagg_rcache_t *c, uint64_t off, uint64_t len, void *buf, tagg_rcache_fill_fn fill, void *ctx);

#endif
