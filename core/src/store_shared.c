/* Layout "shared": the HDF5 address space is one file, byte for byte, so the
 * file is an ordinary HDF5 file any driver can read. */
#define _GNU_SOURCE /* O_DIRECT */
#include "dio.h"
#include "error.h"
#include "fs_kind.h"
#include "io.h"
#include "mpi_wait.h"
#include "pagecache.h"
#include "rcache.h"
#include "store.h"
#include "subfile_index.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* MPI counts are int: no single call over 1 GiB. */
#define MAX_CALL ((uint64_t)1 << 30)

/* How the file is opened. backend=mpiio hands tagg's calls to ROMIO's
 * collective I/O, so it needs one handle on the file's communicator (a
 * collective MPI_File_open). tagg's own engine only makes independent calls
 * (aggregators and direct accesses), so each rank has a handle of its own on
 * MPI_COMM_SELF, opened the first time that rank touches the file: no
 * collective at open or close (MPI_File_open on a communicator costs several,
 * each a scheduler slice when ranks share cores), and ranks that never touch
 * the file (non-aggregators) never open it, as ROMIO's deferred open. Rank 0
 * opens (and creates) it in the store's open, so the open's agreement orders
 * the creation before any other rank's access and carries its errors.
 *
 * A rank's own handle is a POSIX descriptor (file_io=posix, and auto where
 * ROMIO would use its generic "ufs" driver anyway: the same pread/pwrite,
 * without ROMIO's statfs of the path at every open -- on the GlusterFS
 * testbed one round trip to the server, 0.5-2.7 ms, and the read of a small
 * file is a handful of them) or an MPI-IO handle (its driver's rules: NFS's
 * locks, Lustre's and GPFS's drivers). A read-only open of a plain file keeps
 * the descriptor with which rank 0 looked for the subfile index (file.c). */
typedef struct {
    MPI_File        fh;
    int             fd;    /* posix: this rank's descriptor (valid when opened) */
    int             posix; /* this rank's handle is fd, not fh */
    int             opened, amode, own; /* own: this rank's handle on MPI_COMM_SELF */
    pthread_mutex_t mu;                 /* the first access (asynchronous workers too) */
    tagg_dio_t      dio;                /* large accesses with O_DIRECT (direct_io) */
    tagg_rcache_t   rc;                 /* read-only opens with direct_io: re-reads from memory (rcache.h) */
    int             rc_on;
    dev_t           dev;                /* direct_io: the file the path named right after MPI-IO opened it */
    ino_t           ino;
    int             known;
} shared_t;

static int handle(tagg_file_t *f);
static int buffered_access(void *ctx, int write, uint64_t off, uint64_t len, void *buf);

/* A path ROMIO reads a file-system prefix from ("ufs:", "lustre:"). */
static int romio_prefix(const char *path)
{
    const char *colon = strchr(path, ':'), *slash = strchr(path, '/');
    return colon && (!slash || colon < slash);
}

/* direct_io: a second descriptor of the file, with O_DIRECT. With a POSIX
 * handle, that descriptor reopened through /proc (the same file, whatever
 * the path names now). With an MPI-IO handle, the path is the user's, the
 * one MPI-IO opened on this rank (its handle first, so that its sync covers
 * the file); not followed when it is a link, not opened when ROMIO reads a
 * prefix from it; it must be the regular file the path named right after
 * MPI-IO's open (else this rank stays buffered: the name was moved in
 * between). */
static int dio_open(void *ctx)
{
    tagg_file_t *f = ctx;
    shared_t    *s = f->store;
    int          write = (s->amode & MPI_MODE_RDWR) != 0;
    if (romio_prefix(f->path) || handle(f) < 0 || (!s->posix && !s->known))
        return -1;
    if (s->posix)
        return tagg_dio_reopen(s->fd, write);
    int fd = open(f->path, (write ? O_RDWR : O_RDONLY) | O_DIRECT | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_dev != s->dev || st.st_ino != s->ino)) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static const tagg_dio_ops_t shared_dio = {.open = dio_open, .buffered = buffered_access};

/* file_io (config.h): POSIX calls where ROMIO would make the same ones. */
static int posix_wanted(tagg_file_t *f, int own)
{
    if (!own || romio_prefix(f->path) || f->cfg.file_io == TAGG_FILE_IO_MPIIO)
        return 0;
    if (f->cfg.file_io == TAGG_FILE_IO_POSIX)
        return 1;
    unsigned view = tagg_file_fs_view(f), kind = view & 0xffu;
    return kind == TAGG_FS_LOCAL || kind == TAGG_FS_TMPFS || (view & TAGG_FS_SERIAL);
}

/* direct_io=auto (dio.h): all large accesses on FUSE mounts, where the
 * client's buffered writes go one request at a time; the writes on a local
 * disk when they will be synced; with backend=mpiio none (ROMIO's own path). */
static int dio_wanted(tagg_file_t *f, int *reserve)
{
    int want = tagg_dio_file_rule(f->cfg.direct_io, f->cfg.fsync, tagg_file_fs_view(f),
                                  (f->flags & TAGG_OPEN_RDWR) != 0, reserve);
    return f->cfg.backend != TAGG_BACKEND_MPIIO ? want : TAGG_DIO_WANT_NONE;
}

/* The descriptor the file layer opened before the store's open (rank 0's
 * look at the path, another rank's early open: a regular file, blocking; a
 * create's O_EXCL refused an existing file before), taken as this rank's
 * handle when it is open in the access mode asked: 1 taken, 0 not. */
static int take_seen_fd(tagg_file_t *f, shared_t *s, int amode)
{
    if (f->seen_fd < 0 || (fcntl(f->seen_fd, F_GETFL) & O_ACCMODE) != (amode & MPI_MODE_RDWR ? O_RDWR : O_RDONLY))
        return 0;
    s->fd = f->seen_fd, f->seen_fd = -1, s->opened = 1;
    f->stats.handles[0]++;
    return 1;
}

/* This rank's POSIX descriptor: HDF5's POSIX drivers' wording of a failure
 * (applications parse its errno). Only a regular file (no FIFO can block the
 * open: O_NONBLOCK until it is known). */
static int open_posix(tagg_file_t *f, shared_t *s, int amode)
{
    int fl = (amode & MPI_MODE_RDWR ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, fd, e = 0;
    if (amode & MPI_MODE_CREATE)
        fl |= O_CREAT;
    if (amode & MPI_MODE_EXCL)
        fl |= O_EXCL;
    if (take_seen_fd(f, s, amode)) /* rank 0's look at the path (file.c) */
        return 0;
    do
        fd = open(f->path, fl, 0666);
    while (fd < 0 && errno == EINTR);
    struct stat st;
    int         notreg = 0;
    if (fd < 0)
        e = errno;
    else if (fstat(fd, &st) < 0)
        e = errno;
    else if (!S_ISREG(st.st_mode))
        e = EINVAL, notreg = 1;
    if (e) {
        if (fd >= 0)
            close(fd);
        TAGG_ERR(TAGG_E_IO, "unable to open file: name = '%s', errno = %d, error message = '%s'%s", f->path, e,
                 notreg ? "not a regular file" : strerror(e), f->rank ? " (on this rank)" : "");
        return -1;
    }
    int cur = fcntl(fd, F_GETFL);
    if (cur >= 0 && (cur & O_NONBLOCK))
        fcntl(fd, F_SETFL, cur & ~O_NONBLOCK);
    s->fd = fd, s->opened = 1;
    f->stats.handles[0]++;
    return 0;
}

static int open_handle(tagg_file_t *f, shared_t *s, MPI_Comm comm, int amode)
{
    if (s->posix)
        return open_posix(f, s, amode);
    int code = MPI_File_open(comm, f->path, amode, f->info, &s->fh);
    if (code != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int  len = 0;
        MPI_Error_string(code, text, &len);
        TAGG_ERR(TAGG_E_IO, "cannot open '%s'%s: %s", f->path, comm == MPI_COMM_SELF && f->rank ? " on this rank" : "",
                 text);
        return -1;
    }
    MPI_File_set_errhandler(s->fh, MPI_ERRORS_RETURN);
    s->opened = 1;
    if (s->own)
        f->stats.handles[1]++;
    struct stat st; /* direct_io: what the name holds now, for dio_open */
    if (s->dio.state != TAGG_DIO_OFF && stat(f->path, &st) == 0)
        s->dev = st.st_dev, s->ino = st.st_ino, s->known = 1;
    return 0;
}

/* Ranks other than 0, before the open's first reduction, when the open is of
 * an existing file and this rank's handle will be a POSIX descriptor: the
 * descriptor, opened while rank 0 looks at the path, so that on a network
 * file system the two ranks' round trips overlap instead of following each
 * other (rank 0's look, then the reduction, then this rank's open at its
 * first access). Only a regular file (a stat first: no FIFO or device is
 * opened) that is still the same one once open, opened as rank 0's look
 * opens (tagg_sf_open_named); -1 when not wanted or when anything fails (the
 * handle is then opened on first use, as before, and that open says why).
 * The store's open takes it when its access mode is the one asked, else the
 * file layer closes it. */
int tagg_store_shared_early_fd(tagg_file_t *f, unsigned flags)
{
    struct stat a, b;
    if ((flags & TAGG_OPEN_CREAT) || f->cfg.layout != TAGG_LAYOUT_SHARED ||
        !posix_wanted(f, f->cfg.backend != TAGG_BACKEND_MPIIO) || stat(f->path, &a) != 0 || !S_ISREG(a.st_mode))
        return -1;
    int fd = tagg_sf_open_named(f->path, (flags & TAGG_OPEN_RDWR) != 0, 1, NULL, 0);
    if (fd >= 0 && (fstat(fd, &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino))
        close(fd), fd = -1;
    return fd;
}

static int shared_open(tagg_file_t *f, unsigned flags)
{
    int amode = (flags & TAGG_OPEN_RDWR) ? MPI_MODE_RDWR : MPI_MODE_RDONLY;
    shared_t *s = calloc(1, sizeof *s);
    if (!s) {
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        return -1;
    }
    s->amode = amode;
    s->own   = f->cfg.backend != TAGG_BACKEND_MPIIO;
    s->fd    = -1;
    s->posix = posix_wanted(f, s->own);
    if (s->own && s->posix && f->rank != 0 && take_seen_fd(f, s, amode)) /* tagg_store_shared_early_fd's */
        f->stats.handles[2]++;
    pthread_mutex_init(&s->mu, NULL);
    int reserve, want = dio_wanted(f, &reserve);
    tagg_dio_init(&s->dio, &shared_dio, f, f->path, want, (uint64_t)f->cfg.direct_io_min, f->stats.dio_bytes);
    s->dio.reserve = reserve; /* dio.h: concurrent direct writers */
    /* a read-only open whose large reads go direct keeps its recent large reads
     * (not a SWMR reader: the writer's new bytes must reach its re-reads); a
     * read-only open is never writes-only (tagg_dio_file_rule) */
    s->rc_on = !(flags & (TAGG_OPEN_RDWR | TAGG_OPEN_SWMR_READ)) && s->own && s->dio.state != TAGG_DIO_OFF;
    tagg_rcache_init(&s->rc, TAGG_DIO_ALIGN, (uint64_t)f->cfg.direct_io_min, f->stats.rc_reads);
    if (flags & TAGG_OPEN_CREAT)
        amode |= MPI_MODE_CREATE;
    if (flags & TAGG_OPEN_EXCL)
        amode |= MPI_MODE_EXCL;
    if ((!s->own || f->rank == 0) && open_handle(f, s, s->own ? MPI_COMM_SELF : f->comm, amode) < 0) {
        tagg_rcache_fini(&s->rc);
        tagg_dio_fini(&s->dio);
        pthread_mutex_destroy(&s->mu);
        free(s);
        return -1;
    }
    f->store = s;
    return 0;
}

/* This rank's handle, opened on first use: 0, or -1 (pushed). */
static int handle(tagg_file_t *f)
{
    shared_t *s = f->store;
    pthread_mutex_lock(&s->mu);
    int rc = s->opened ? 0 : open_handle(f, s, MPI_COMM_SELF, s->amode);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

MPI_File tagg_store_shared_fh(const tagg_file_t *f) { return ((shared_t *)f->store)->fh; }

static int shared_close(tagg_file_t *f)
{
    shared_t *s  = f->store;
    int       rc = 0;
    if (!s)
        return 0;
    tagg_rcache_fini(&s->rc);
    tagg_dio_fini(&s->dio);
    if (s->posix) {
        if (s->opened && close(s->fd) != 0 && errno != EINTR) { /* a network file system's last word on the writes */
            TAGG_ERR(TAGG_E_IO, "closing '%s': %s", f->path, strerror(errno));
            rc = -1;
        }
    }
    else {
        int code = s->opened ? MPI_File_close(&s->fh) : MPI_SUCCESS;
        if (code != MPI_SUCCESS) {
            TAGG_ERR_MPI("MPI_File_close", code);
            rc = -1;
        }
    }
    pthread_mutex_destroy(&s->mu);
    free(s);
    f->store = NULL;
    return rc;
}

/* The subfile layer's loops (subfile_index.h: EINTR, short counts, zeros
 * past the end, ENOSPC for a write that writes nothing). The errno of a
 * failure is kept (pushed too). */
static int posix_access(tagg_file_t *f, int fd, int write, uint64_t off, uint64_t len, char *buf)
{
    if ((write ? tagg_sf_pwrite_all(fd, buf, (size_t)len, off) : tagg_sf_pread_upto(fd, buf, (size_t)len, off, UINT64_MAX)) == 0)
        return 0;
    int e = errno;
    TAGG_ERR(TAGG_E_IO, "%s of %llu bytes at offset %llu of '%s': %s", write ? "write" : "read",
             (unsigned long long)len, (unsigned long long)off, f->path, strerror(e));
    errno = e;
    return -1;
}

/* This rank's buffered access: its POSIX descriptor, or ROMIO's contiguous
 * accesses in calls of at most 1 GiB; reads past the end of the file fill
 * zeros. */
static int buffered_access(void *ctx, int write, uint64_t off, uint64_t len, void *buf)
{
    tagg_file_t *f = ctx;
    shared_t    *s = f->store;
    if (handle(f) < 0)
        return -1;
    if (s->posix)
        return posix_access(f, s->fd, write, off, len, buf);
    MPI_File fh = s->fh;
    for (uint64_t done = 0; done < len;) {
        uint64_t   n = len - done < MAX_CALL ? len - done : MAX_CALL;
        MPI_Status st;
        MPI_Count  got = 0;
        char      *at  = (char *)buf + done;
        int code = write ? MPI_File_write_at(fh, (MPI_Offset)(off + done), at, (int)n, MPI_BYTE, &st)
                         : MPI_File_read_at(fh, (MPI_Offset)(off + done), at, (int)n, MPI_BYTE, &st);
        if (code != MPI_SUCCESS) {
            TAGG_ERR_MPI(write ? "MPI_File_write_at" : "MPI_File_read_at", code);
            return -1;
        }
        MPI_Get_elements_x(&st, MPI_BYTE, &got);
        if (write && (uint64_t)got != n) {
            TAGG_ERR(TAGG_E_IO, "write at offset %llu of '%s' wrote %lld of %llu bytes",
                     (unsigned long long)(off + done), f->path, (long long)got, (unsigned long long)n);
            return -1;
        }
        if (!write && (uint64_t)got < n) /* past the end: zeros */
            memset(at + (got > 0 ? got : 0), 0, (size_t)(n - (uint64_t)(got > 0 ? got : 0)));
        done += n;
    }
    return 0;
}

static int shared_pwrite(tagg_file_t *f, uint64_t off, uint64_t len, const void *buf)
{
    return tagg_dio_access(&((shared_t *)f->store)->dio, 1, off, len, (void *)buf);
}

static int shared_pread(tagg_file_t *f, uint64_t off, uint64_t len, void *buf)
{
    return tagg_dio_access(&((shared_t *)f->store)->dio, 0, off, len, buf);
}

static int shared_round_access(tagg_file_t *f, int write, uint64_t off, uint64_t len, void *buf, uint64_t as)
{
    return tagg_dio_access_as(&((shared_t *)f->store)->dio, write, off, len, buf, as);
}

/* rcache.h's fill: the aligned cover, directly where it qualifies. */
static int rc_fill(void *ctx, uint64_t off, uint64_t len, void *buf) { return shared_pread(ctx, off, len, buf); }

/* The application's own extents: through the kept covers where the open
 * keeps them (an aggregator's rounds are read once, straight into its
 * buffers: shared_pread). */
static int shared_pread_extent(tagg_file_t *f, uint64_t off, uint64_t len, void *buf)
{
    shared_t *s = f->store;
    int       r = s->rc_on ? tagg_rcache_read(&s->rc, off, len, buf, rc_fill, f) : 0;
    if (r)
        return r < 0 ? -1 : 0;
    return shared_pread(f, off, len, buf);
}

static int shared_get_size(tagg_file_t *f, uint64_t *size)
{
    shared_t *sh = f->store;
    if (handle(f) < 0)
        return -1;
    if (sh->posix) {
        struct stat st;
        if (fstat(sh->fd, &st) < 0) {
            TAGG_ERR(TAGG_E_IO, "the size of '%s': %s", f->path, strerror(errno));
            return -1;
        }
        *size = (uint64_t)st.st_size;
        return 0;
    }
    MPI_Offset s;
    int        code = MPI_File_get_size(sh->fh, &s);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_File_get_size", code);
        return -1;
    }
    *size = (uint64_t)s;
    return 0;
}

/* Collective (the file layer agrees after it): with handles of their own,
 * rank 0 sets the size. */
static int shared_set_size(tagg_file_t *f, uint64_t size)
{
    shared_t *s = f->store;
    if (s->own && f->rank != 0)
        return 0;
    if (s->own && handle(f) < 0)
        return -1;
    if (s->posix) {
        int rc;
        while ((rc = ftruncate(s->fd, (off_t)size)) != 0 && errno == EINTR)
            ;
        if (rc != 0)
            TAGG_ERR(TAGG_E_IO, "setting the size of '%s' to %llu: %s", f->path, (unsigned long long)size,
                     strerror(errno));
        return rc ? -1 : 0;
    }
    int code = MPI_File_set_size(s->fh, (MPI_Offset)size);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_File_set_size", code);
        return -1;
    }
    return 0;
}

/* Collective (the file layer agrees after it): each rank syncs what it wrote. */
static int shared_sync(tagg_file_t *f)
{
    shared_t *s = f->store;
    if (s->own && !s->opened)
        return 0;
    if (s->posix) { /* the inode: the direct descriptor's writes too */
        if (fsync(s->fd) != 0) {
            TAGG_ERR(TAGG_E_IO, "fsync of '%s': %s", f->path, strerror(errno));
            return -1;
        }
        return 0;
    }
    int code = MPI_File_sync(s->fh);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_File_sync", code);
        return -1;
    }
    return 0;
}

static int shared_del(const char *path, MPI_Comm comm, MPI_Info info, const tagg_config_t *cfg)
{
    int rank, rc = 0;
    (void)cfg;
    MPI_Comm_rank(comm, &rank);
    tagg_mpi_barrier(comm);
    if (rank == 0) {
        int code = MPI_File_delete(path, info);
        if (code != MPI_SUCCESS) {
            TAGG_ERR_MPI("MPI_File_delete", code);
            rc = -1;
        }
    }
    return tagg_agree(comm, rc, "deleting the file");
}

static void shared_reserve(tagg_file_t *f, uint64_t off, uint64_t len)
{
    shared_t *s = f->store;
    tagg_dio_reserve(&s->dio, off, len);
}

static uint64_t shared_dio_block(const tagg_file_t *f, int write)
{
    const shared_t *s = f->store;
    return s->dio.state == TAGG_DIO_OFF || (!write && s->dio.writes_only) ? 0 : s->dio.align;
}

static uint64_t shared_stripe(const tagg_file_t *f)
{
    (void)f;
    return 0;
}

/* file_io=posix: pread, pwrite and the O_DIRECT descriptor; ROMIO's handle is an MPI call */
static int shared_posix_only(const tagg_file_t *f) { return ((const shared_t *)f->store)->posix; }

/* The page cache's share of a range through this rank's descriptor, when it
 * has one open already (opening one only to ask would cost a lookup on a
 * network file system; ranks that never touched the file cannot tell). */
static int shared_resident(tagg_file_t *f, uint64_t off, uint64_t len, uint64_t *bytes, uint64_t *flight)
{
    shared_t *s = f->store;
    pthread_mutex_lock(&s->mu);
    int fd = s->opened && s->posix ? s->fd : -1;
    pthread_mutex_unlock(&s->mu);
    return tagg_pagecache_state(fd, off, len, bytes, flight);
}

const tagg_store_ops_t tagg_store_shared = {
    .name     = "shared",
    .open     = shared_open,
    .close    = shared_close,
    .pwrite   = shared_pwrite,
    .pread    = shared_pread,
    .pread_extent = shared_pread_extent,
    .round_access = shared_round_access,
    .get_size = shared_get_size,
    .set_size = shared_set_size,
    .sync     = shared_sync,
    .del      = shared_del,
    .stripe   = shared_stripe,
    .dio_block = shared_dio_block,
    .reserve   = shared_reserve,
    .posix_only = shared_posix_only,
    .resident = shared_resident,
};
