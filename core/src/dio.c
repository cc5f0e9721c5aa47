/* Direct I/O for a layout's large accesses (dio.h). */
#define _GNU_SOURCE
#include "dio.h"

#include "bufpool.h"
#include "config.h"
#include "error.h"
#include "fs_kind.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tagg_dio_wanted(int mode, unsigned fs_view, int synced)
{
    if (mode == TAGG_DIO_MODE_WRITE)
        return TAGG_DIO_WANT_WRITES;
    if (mode == TAGG_DIO_MODE_ON)
        return TAGG_DIO_WANT_ALL;
    if (mode != TAGG_DIO_MODE_AUTO)
        return TAGG_DIO_WANT_NONE;
    if (fs_view & TAGG_FS_SERIAL)
        return TAGG_DIO_WANT_ALL;
    return synced && (fs_view & 0xffu) == TAGG_FS_LOCAL ? TAGG_DIO_WANT_WRITES : TAGG_DIO_WANT_NONE;
}

/* one bit per file-system kind (fs_kind.h: kinds below 32) */
static unsigned synced_kinds;

void tagg_dio_note_sync(unsigned fs_view)
{
    unsigned kind = fs_view & 0xffu;
    if (kind < 32)
        __atomic_fetch_or(&synced_kinds, 1u << kind, __ATOMIC_RELAXED);
}

int tagg_dio_synced(unsigned fs_view)
{
    unsigned kind = fs_view & 0xffu;
    return kind < 32 && (__atomic_load_n(&synced_kinds, __ATOMIC_RELAXED) & (1u << kind)) != 0;
}

int tagg_dio_file_rule(int mode, int fsync, unsigned fs_view, int rdwr, int *reserve)
{
    *reserve  = (fs_view & 0xffu) == TAGG_FS_LOCAL;
    int want  = tagg_dio_wanted(mode, fs_view, fsync || tagg_dio_synced(fs_view));
    return want == TAGG_DIO_WANT_WRITES && !rdwr ? TAGG_DIO_WANT_NONE : want;
}

void tagg_dio_init(tagg_dio_t *d, const tagg_dio_ops_t *ops, void *ctx, const char *name, int enabled, uint64_t min,
                   uint64_t *bytes)
{
    memset(d, 0, sizeof *d);
    d->ops   = ops;
    d->ctx   = ctx;
    d->name  = name;
    d->min   = min;
    d->align = TAGG_DIO_ALIGN;
    d->state = enabled ? TAGG_DIO_UNTRIED : TAGG_DIO_OFF;
    d->writes_only = enabled == TAGG_DIO_WANT_WRITES;
    d->fd    = -1;
    d->bytes = bytes;
    pthread_mutex_init(&d->mu, NULL);
}

int tagg_dio_reopen(int fd, int write)
{
    char        p[64];
    struct stat a, b;
    if (fd < 0)
        return -1;
    snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
    int dfd = open(p, (write ? O_RDWR : O_RDONLY) | O_DIRECT | O_CLOEXEC);
    if (dfd >= 0 && (fstat(fd, &a) < 0 || fstat(dfd, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)) {
        close(dfd);
        dfd = -1;
    }
    return dfd;
}

void tagg_dio_fini(tagg_dio_t *d)
{
    if (d->fd >= 0)
        close(d->fd);
    d->fd = -1;
    pthread_mutex_destroy(&d->mu);
}

/* Bounce buffers, taken for one access and given back to the process's pool
 * of large buffers (bufpool.h), not allocated per file: a buffer allocated
 * per file was first touched by every file's first unaligned access, 1.5 ms
 * of page faults for 2.75 MiB on this machine, every file and rank (a rank's
 * own direct read of S3D 32^3 on the GlusterFS testbed takes 9-10 ms).
 * Several threads take several buffers. */
static char *bounce_get(uint64_t align)
{
    char *b = NULL;
    if (align <= TAGG_DIO_ALIGN)
        return tagg_buf_get(TAGG_DIO_BOUNCE);
    if (posix_memalign((void **)&b, align, TAGG_DIO_BOUNCE) != 0)
        b = NULL;
    return b;
}

static void bounce_put(char *b, uint64_t align)
{
    if (align <= TAGG_DIO_ALIGN)
        tagg_buf_put(b, TAGG_DIO_BOUNCE);
    else
        free(b);
}

/* The direct descriptor, opened on first use; -1 when the file stays buffered. */
static int descriptor(tagg_dio_t *d)
{
    pthread_mutex_lock(&d->mu);
    if (d->state == TAGG_DIO_UNTRIED) {
        d->fd    = d->ops->open(d->ctx);
        d->state = d->fd >= 0 ? TAGG_DIO_ON : TAGG_DIO_OFF;
    }
    int fd = d->state == TAGG_DIO_ON ? d->fd : -1;
    pthread_mutex_unlock(&d->mu);
    return fd;
}

/* The file system refused a direct access (EINVAL): buffered from now on. The
 * descriptor stays open until fini (another thread may be using it). */
static void refused(tagg_dio_t *d)
{
    pthread_mutex_lock(&d->mu);
    d->state = TAGG_DIO_OFF;
    pthread_mutex_unlock(&d->mu);
}

/* Atomic: the counters are the file's, which several of a layout's files
 * (subfiles) may add to from several threads. */
static void count(tagg_dio_t *d, int write, int bounced, uint64_t n)
{
    __atomic_fetch_add(&d->bytes[write ? 1 : 0], n, __ATOMIC_RELAXED);
    if (bounced)
        __atomic_fetch_add(&d->bytes[write ? 3 : 2], n, __ATOMIC_RELAXED);
}

/* One direct request of n bytes (aligned) at off from or into mem (aligned).
 * Returns the bytes moved (a short read at the end of the file: fewer), or -1
 * with errno. */
static ssize_t one(int fd, int write, uint64_t off, size_t n, char *mem)
{
    ssize_t got;
    do
        got = write ? pwrite(fd, mem, n, (off_t)off) : pread(fd, mem, n, (off_t)off);
    while (got < 0 && errno == EINTR);
    return got;
}

/* The aligned middle [off, off + len) through the descriptor, from or into
 * mem, through bounce (not NULL: mem is not aligned; the caller's own). The
 * bytes moved directly in *done; 0, or -1 with errno (EINVAL: refused). Stops early, without error, at a short transfer (the rest goes
 * buffered). */
static int middle(int fd, int write, uint64_t off, uint64_t len, char *mem, char *bounce, uint64_t *done)
{
    *done = 0;
    while (*done < len) {
        size_t n = bounce ? (len - *done < TAGG_DIO_BOUNCE ? (size_t)(len - *done) : TAGG_DIO_BOUNCE)
                          : (len - *done < ((uint64_t)1 << 30) ? (size_t)(len - *done) : (size_t)1 << 30);
        char *at = bounce ? bounce : mem + *done;
        if (bounce && write)
            memcpy(bounce, mem + *done, n);
        ssize_t got = one(fd, write, off + *done, n, at);
        if (got < 0)
            return -1;
        if (bounce && !write && got > 0)
            memcpy(mem + *done, bounce, (size_t)got);
        *done += (uint64_t)got;
        if ((size_t)got < n)
            break;
    }
    return 0;
}

static void reserve_fd(int fd, uint64_t off, uint64_t len)
{
    int rc;
    do
        rc = fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len);
    while (rc < 0 && errno == EINTR);
}

void tagg_dio_reserve(tagg_dio_t *d, uint64_t off, uint64_t len)
{
    int fd = d->reserve && len >= d->min ? descriptor(d) : -1;
    if (fd >= 0)
        reserve_fd(fd, off, len);
}

int tagg_dio_access(tagg_dio_t *d, int write, uint64_t off, uint64_t len, void *buf)
{
    return tagg_dio_access_as(d, write, off, len, buf, len);
}

int tagg_dio_access_as(tagg_dio_t *d, int write, uint64_t off, uint64_t len, void *buf, uint64_t as)
{
    uint64_t A = d->align, a = (off + A - 1) / A * A, b = (off + len) / A * A;
    /* an access judged by itself: its aligned middle reaches min too */
    int big = as > len ? as >= d->min : len >= d->min && b - a >= d->min;
    int fd  = (write || !d->writes_only) && big && b > a ? descriptor(d) : -1;
    if (fd < 0)
        return d->ops->buffered(d->ctx, write, off, len, buf);
    char *mem     = (char *)buf;
    int   aligned = ((uintptr_t)(mem + (a - off)) % A) == 0;
    /* head first, then the middle, then the tail: a file grows in order */
    if (a > off && d->ops->buffered(d->ctx, write, off, a - off, mem) < 0)
        return -1;
    uint64_t done = 0;
    int      rc, err;
    if (aligned) {
        rc  = middle(fd, write, a, b - a, mem + (a - off), NULL, &done);
        err = errno;
    } else {
        char *bounce = bounce_get(A);
        if (bounce && write && d->reserve && b - a > TAGG_DIO_BOUNCE) /* several requests: one allocation */
            reserve_fd(fd, a, b - a);
        if (bounce) {
            rc  = middle(fd, write, a, b - a, mem + (a - off), bounce, &done);
            err = errno;
            bounce_put(bounce, A);
        } else
            rc = 0, done = 0, err = 0; /* no bounce buffer: buffered */
    }
    if (rc < 0 && err != EINVAL) {
        TAGG_ERR(TAGG_E_IO, "direct %s of %llu bytes at offset %llu of '%s' failed: %s", write ? "write" : "read",
                 (unsigned long long)(b - a - done), (unsigned long long)(a + done), d->name, strerror(err));
        errno = err; /* for callers that report errno */
        return -1;
    }
    if (rc < 0) /* EINVAL: the file system takes no direct access here; nothing was moved by the refused request */
        refused(d);
    if (done)
        count(d, write, !aligned, done);
    /* the rest: after a refusal or a short transfer, and the tail */
    if (a + done == off + len)
        return 0;
    return d->ops->buffered(d->ctx, write, a + done, off + len - (a + done), mem + (a + done - off));
}
