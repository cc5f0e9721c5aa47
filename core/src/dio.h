/* Direct I/O (O_DIRECT) for a layout's large accesses.
 *
 * A FUSE client such as GlusterFS's writes a buffered file through the page
 * cache one request at a time; with O_DIRECT it hands the pages to the server
 * without the copy and keeps several requests in flight. On the testbed
 * (`dd`, 256 MiB, caches dropped): writes 253-322 MB/s direct against 198-209
 * buffered (+fsync), reads 319-501 against 198-240, at any request size from
 * 1 MiB. MPI-IO (ROMIO's ufs driver) and HDF5's MPI-IO driver access files
 * buffered only.
 *
 * A layout gives each file a tagg_dio_t and passes every access through
 * tagg_dio_access, with two functions of its own: one that opens a second
 * descriptor of the same file with O_DIRECT, and its buffered access. An
 * access of at least `min` bytes then moves its aligned middle (whole blocks
 * of `align` bytes) through the direct descriptor -- from the caller's memory
 * when it lies on the same alignment, else through an aligned bounce buffer
 * -- and its unaligned head and tail through the buffered path. Smaller
 * accesses, and all of them when the descriptor cannot be opened or the file
 * system refuses a direct access (EINVAL: no O_DIRECT, or a larger block),
 * take the buffered path: the bytes are the same either way.
 *
 * Coherency: Linux writes back and drops the page cache of the range of a
 * direct access of a file, so buffered and direct accesses of one node see
 * each other's bytes; between nodes the file system's rules are unchanged.
 * Thread-safe: the open is under the mutex, each access takes its own bounce
 * buffer (idle ones are kept by the process for any file's next access:
 * bufpool.h), the counters are added to atomically. */
#ifndef TAGG_DIO_H
#define TAGG_DIO_H

#include <pthread.h>
#include <stdint.h>

#define TAGG_DIO_ALIGN 4096u             /* offsets, lengths and memory: the largest logical block in common use */
#define TAGG_DIO_BOUNCE ((size_t)4 << 20) /* bounce buffer: the aligned middle in pieces of this size */

typedef struct tagg_dio_ops {
    /* A new descriptor of the layout's file opened with O_DIRECT (and
     * O_CLOEXEC), or -1 (the file then stays buffered; no error pushed). */
    int (*open)(void *ctx);
    /* The layout's buffered access of [off, off + len): 0, or -1 with an
     * error pushed or errno set (the layout's own convention, which
     * tagg_dio_access keeps: a failed direct request pushes its message and
     * sets errno). Reads fill bytes past the end of the file with zeros. */
    int (*buffered)(void *ctx, int write, uint64_t off, uint64_t len, void *buf);
} tagg_dio_ops_t;

enum { TAGG_DIO_OFF = -1, TAGG_DIO_UNTRIED = 0, TAGG_DIO_ON = 1 };
/* What a file's accesses may do (tagg_dio_wanted, tagg_dio_init's enabled). */
enum { TAGG_DIO_WANT_NONE = 0, TAGG_DIO_WANT_ALL = 1, TAGG_DIO_WANT_WRITES = 2 };

typedef struct tagg_dio {
    const tagg_dio_ops_t *ops;
    void                 *ctx;
    const char           *name;  /* the file, for messages */
    uint64_t              min;   /* accesses shorter than this stay buffered */
    uint64_t              align; /* TAGG_DIO_ALIGN; tests may lower it */
    int                   state; /* TAGG_DIO_*: OFF also when disabled */
    int                   writes_only; /* reads stay buffered (direct_io=write) */
    int                   reserve; /* set by the layout (local disks): tagg_dio_reserve, and a write
                                      moved in several direct requests, allocate their blocks first */
    int                   fd;
    pthread_mutex_t       mu;
    uint64_t             *bytes; /* moved through the direct descriptor: [0] read, [1] written; of them
                                     through the bounce buffer [2] read, [3] written (atomic adds) */
} tagg_dio_t;

/* The direct_io key's rule (config.h TAGG_DIO_MODE_*), a TAGG_DIO_WANT_*: on
 * (all), off (none), write (writes), or auto = all when the file system's
 * client is FUSE (fs_view of fs_kind.h has TAGG_FS_SERIAL); writes when it is
 * a local disk (TAGG_FS_LOCAL) and synced: the file's writes will be synced
 * (fsync=1, or tagg_dio_synced); else none. Pure. */
int tagg_dio_wanted(int mode, unsigned fs_view, int synced);

/* The application of this process has synced a file open for writing on a
 * file system of this kind (fs_view's low byte): tagg_file_sync notes it,
 * later opens ask. Process-wide, atomic; never reset (an application that
 * syncs its files once syncs the next ones: checkpoints, timesteps). */
void tagg_dio_note_sync(unsigned fs_view);
int  tagg_dio_synced(unsigned fs_view);
/* A layout's open (rdwr: open for writing): tagg_dio_wanted for its file in
 * this process, synced when fsync (the file's configuration) or
 * tagg_dio_synced; writes only in a read-only open are none; *reserve (the
 * tagg_dio_t field) 1 on a local disk. */
int tagg_dio_file_rule(int mode, int fsync, unsigned fs_view, int rdwr, int *reserve);

/* enabled, a TAGG_DIO_WANT_*: NONE, every access buffered; WRITES, reads
 * buffered. bytes[4]: the counters the accesses add to (the file's
 * statistics; several tagg_dio_t may share them). */
void tagg_dio_init(tagg_dio_t *d, const tagg_dio_ops_t *ops, void *ctx, const char *name, int enabled, uint64_t min,
                   uint64_t *bytes);
/* Closes the descriptor. */
void tagg_dio_fini(tagg_dio_t *d);
/* d->reserve set and writes going direct: the blocks of [off, off + len)
 * are allocated now, in one piece where the file system can (fallocate,
 * FALLOC_FL_KEEP_SIZE: the file's size is unchanged, the range reads as
 * before). Without it, two writers of one file on a local disk, each writing
 * its part of the file in 4 MiB requests at the same time, get their blocks
 * allocated in the order of the requests: one extent per request,
 * interleaved on the disk (ext4: 31 extents for 256 MiB written so, 3 with
 * the parts reserved first), and a later sequential read of either part
 * jumps between them. An advice: a file system that refuses it (or is full)
 * gets the writes as before, whose own errors count. */
void tagg_dio_reserve(tagg_dio_t *d, uint64_t off, uint64_t len);
/* For a layout's open: descriptor fd's file opened again with O_DIRECT
 * (read-write when write, else read-only; close-on-exec) through
 * /proc/self/fd -- the file fd holds, whatever its path names now, checked
 * by device and inode -- or -1. */
int tagg_dio_reopen(int fd, int write);
/* The whole range or an error (pushed). write 1: from buf; 0: into buf. */
int tagg_dio_access(tagg_dio_t *d, int write, uint64_t off, uint64_t len, void *buf);
/* The same, min judged by `as` bytes instead of len (as >= len): an
 * aggregator's access that holds all of its round's data is judged by the
 * call's round (store.h round_access), so that every aggregator of a call
 * moves its rounds the same way; with as >= min, any whole aligned block of
 * the range goes direct. as == len: tagg_dio_access. */
int tagg_dio_access_as(tagg_dio_t *d, int write, uint64_t off, uint64_t len, void *buf, uint64_t as);

#endif
