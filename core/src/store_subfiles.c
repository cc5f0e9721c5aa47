/* Layout "subfiles": the HDF5 address space striped round-robin over N
 * subfiles (stripe map and index format: subfile_index.h).
 *
 *   <path>                 the index (text, not HDF5: stock tools refuse it)
 *   <path>.tagg.<k>of<N>   subfile k, beside it; the names are in the index,
 *                          so a reader never guesses them
 *
 * I/O is POSIX pread/pwrite on descriptors each rank opens lazily, for the
 * subfiles it touches: any rank may write any stripe, no thread and no
 * MPI_THREAD_MULTIPLE, and errno (ENOSPC, EIO, ...) reaches the message with
 * the subfile's name. MPI-IO on MPI_COMM_SELF would add nothing here but an
 * opaque error class. Collective calls (open, close, set_size, sync, del) end
 * in an agreement so an error on one rank fails every rank.
 *
 * Open: a new file takes S and N from the configuration (N = 0: one per node);
 * an existing one takes them from its index, so any number of ranks, with any
 * configuration, reads it back. While a writer has the file open the index
 * says "state open"; close reads every subfile back (subfile k on rank k mod
 * size) for its size and CRC-64 and rank 0 writes the final index. */
#include "error.h"
#include "io.h"
#include "store.h"
#include "subfile_index.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    tagg_sf_index_t ix;    /* stripe, count, names (sizes, checksums: as of the last close) */
    char          **paths; /* full path of each subfile */
    int            *fd;    /* -1 until this rank touches the subfile */
    int             writable;
} sub_t;

#define ERRLEN 1024

static sub_t *sub_of(const tagg_file_t *f) { return f->store; }

static void sub_free(sub_t *s)
{
    if (!s)
        return;
    for (uint32_t k = 0; s->paths && k < s->ix.count; k++)
        free(s->paths[k]);
    free(s->paths);
    free(s->fd);
    tagg_sf_index_free(&s->ix);
    free(s);
}

/* Collective: number of nodes (distinct shared-memory domains) in comm. */
static int count_nodes(tagg_file_t *f, int *nodes)
{
    MPI_Comm node;
    int      nrank, first, code = MPI_Comm_split_type(f->comm, MPI_COMM_TYPE_SHARED, f->rank, MPI_INFO_NULL, &node);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Comm_split_type (counting nodes for subfiles=0)", code);
        return -1;
    }
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_free(&node);
    first = nrank == 0;
    if ((code = MPI_Allreduce(&first, nodes, 1, MPI_INT, MPI_SUM, f->comm)) != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allreduce (counting nodes)", code);
        return -1;
    }
    return 0;
}

/* Rank 0: removes the subfiles an existing index names (TRUNC, delete). */
static int remove_listed(const char *path, const tagg_sf_index_t *old, char *err)
{
    for (uint32_t k = 0; k < old->count; k++) {
        char *p = tagg_sf_subfile_path(path, old->sub[k].name);
        if (!p || (unlink(p) < 0 && errno != ENOENT)) {
            snprintf(err, ERRLEN, "cannot remove subfile '%s': %s", p ? p : old->sub[k].name,
                     p ? strerror(errno) : "out of memory");
            free(p);
            return -1;
        }
        free(p);
    }
    return 0;
}

/* Rank 0: creates a new subfiled file (subfiles empty, index "open"). */
static int create_files(tagg_file_t *f, tagg_sf_index_t *ix, uint32_t N, int had_index, char *err)
{
    if (had_index) {
        tagg_sf_index_t old;
        if (tagg_sf_index_read(f->path, &old, err, ERRLEN) == 0) {
            int rc = remove_listed(f->path, &old, err);
            tagg_sf_index_free(&old);
            if (rc < 0)
                return -1;
        } /* an unreadable old index: its subfiles cannot be found; the stub is replaced anyway */
    }
    if (tagg_sf_index_init(ix, (uint64_t)f->cfg.stripe_size, N) < 0) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    for (uint32_t k = 0; k < N; k++) {
        char *p = NULL;
        int   fd;
        if (!(ix->sub[k].name = tagg_sf_default_name(f->path, k, N)) || !(p = tagg_sf_subfile_path(f->path, ix->sub[k].name))) {
            snprintf(err, ERRLEN, "out of memory");
            free(p);
            return -1;
        }
        ix->sub[k].crc = tagg_crc64(0, NULL, 0);
        if ((fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0666)) < 0 || close(fd) < 0) {
            snprintf(err, ERRLEN, "cannot create subfile '%s': %s", p, strerror(errno));
            free(p);
            return -1;
        }
        free(p);
    }
    return tagg_sf_index_write(f->path, ix, f->cfg.fsync, err, ERRLEN);
}

/* Rank 0: reads an existing index and checks that its subfiles are there. */
static int open_existing(tagg_file_t *f, tagg_sf_index_t *ix, int rewrite, char *err)
{
    if (tagg_sf_index_read(f->path, ix, err, ERRLEN) < 0)
        return -1;
    for (uint32_t k = 0; k < ix->count; k++) {
        struct stat st;
        char       *p = tagg_sf_subfile_path(f->path, ix->sub[k].name);
        int         bad = !p || stat(p, &st) < 0;
        if (bad)
            snprintf(err, ERRLEN, "subfile %u of '%s' is missing: '%s': %s", (unsigned)k, f->path,
                     p ? p : "?", p ? strerror(errno) : "out of memory");
        else if (ix->closed && (uint64_t)st.st_size != ix->sub[k].size) {
            snprintf(err, ERRLEN,
                     "subfile '%s' has %llu bytes, its index records %llu: changed or damaged since it was "
                     "closed (see tagg-fuse --check)",
                     p, (unsigned long long)st.st_size, (unsigned long long)ix->sub[k].size);
            bad = 1;
        }
        free(p);
        if (bad)
            return -1;
    }
    if (rewrite) { /* a writer has it: mark it open until close */
        ix->closed = 0;
        return tagg_sf_index_write(f->path, ix, f->cfg.fsync, err, ERRLEN);
    }
    return 0;
}

static int sub_open(tagg_file_t *f, unsigned flags)
{
    char     err[ERRLEN] = "";
    int      nodes = 0, rc = 0;
    uint64_t hdr[2] = {0, 0}; /* rank 0's result (0 ok, 1 failed), length of what follows */
    char    *text = NULL;
    size_t   len  = 0;
    sub_t   *s    = calloc(1, sizeof *s);
    if ((flags & TAGG_OPEN_CREAT) && f->cfg.subfiles == 0 && count_nodes(f, &nodes) < 0)
        rc = -1;
    if (tagg_agree(f->comm, s ? rc : -1, "subfiles open (set-up)") < 0) {
        if (!s)
            TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        free(s);
        return -1;
    }
    if (f->rank == 0) {
        tagg_sf_index_t ix;
        struct stat     st;
        int             exists = stat(f->path, &st) == 0, is_index = 0;
        memset(&ix, 0, sizeof ix);
        if (exists && (is_index = tagg_sf_probe(f->path, err, sizeof err)) < 0)
            rc = -1;
        else if (exists && (flags & TAGG_OPEN_EXCL))
            snprintf(err, sizeof err, "'%s' exists (exclusive create)", f->path), rc = -1;
        else if ((flags & TAGG_OPEN_CREAT) && (!exists || (flags & TAGG_OPEN_TRUNC)))
            rc = create_files(f, &ix, f->cfg.subfiles ? (uint32_t)f->cfg.subfiles : (uint32_t)nodes, is_index, err);
        else if (!exists)
            snprintf(err, sizeof err, "cannot open '%s': %s", f->path, strerror(ENOENT)), rc = -1;
        else if (!is_index)
            snprintf(err, sizeof err, "'%s' is not a tagg subfiled file (layout=subfiles; its index starts with \"%s\")",
                     f->path, TAGG_SF_MAGIC), rc = -1;
        else
            rc = open_existing(f, &ix, (flags & TAGG_OPEN_RDWR) != 0, err);
        if (rc == 0 && tagg_sf_index_format(&ix, &text, &len) < 0)
            snprintf(err, sizeof err, "out of memory"), rc = -1;
        tagg_sf_index_free(&ix);
        if (rc < 0) {
            free(text);
            text = strdup(err);
            len  = text ? strlen(text) + 1 : 0;
        }
        hdr[0] = rc < 0;
        hdr[1] = len;
    }
    /* every rank gets rank 0's index text, or its error message */
    int code = MPI_Bcast(hdr, 2, MPI_UINT64_T, 0, f->comm);
    if (code == MPI_SUCCESS && f->rank != 0 && !(text = malloc(hdr[1] + 1)))
        hdr[1] = 0; /* cannot receive: take part with nothing; fails below */
    if (code == MPI_SUCCESS && hdr[1])
        code = MPI_Bcast(text, (int)hdr[1], MPI_CHAR, 0, f->comm);
    rc = 0;
    if (code != MPI_SUCCESS)
        TAGG_ERR_MPI("MPI_Bcast (subfile index)", code), rc = -1;
    else if (hdr[0])
        TAGG_ERR(TAGG_E_IO, "%s%.*s", f->rank ? "rank 0: " : "", (int)hdr[1], text ? text : "(no message)"), rc = -1;
    else if (!text || !hdr[1])
        TAGG_ERR(TAGG_E_NOMEM, "out of memory"), rc = -1;
    else if (tagg_sf_index_parse(text, (size_t)hdr[1], &s->ix, err, sizeof err) < 0)
        TAGG_ERR(TAGG_E_IO, "%s: %s", f->path, err), rc = -1;
    else if (!(s->paths = calloc(s->ix.count, sizeof *s->paths)) || !(s->fd = malloc(s->ix.count * sizeof *s->fd)))
        TAGG_ERR(TAGG_E_NOMEM, "out of memory"), rc = -1;
    for (uint32_t k = 0; rc == 0 && k < s->ix.count; k++) {
        s->fd[k] = -1;
        if (!(s->paths[k] = tagg_sf_subfile_path(f->path, s->ix.sub[k].name)))
            TAGG_ERR(TAGG_E_NOMEM, "out of memory"), rc = -1;
    }
    free(text);
    s->writable = (flags & TAGG_OPEN_RDWR) != 0;
    if (tagg_agree(f->comm, rc, "opening the subfiles") < 0) {
        sub_free(s);
        return -1;
    }
    f->store = s;
    return 0;
}

/* The descriptor of subfile k, opened on first use. */
static int fd_of(tagg_file_t *f, uint32_t k)
{
    sub_t *s = sub_of(f);
    if (s->fd[k] < 0 && (s->fd[k] = open(s->paths[k], s->writable ? O_RDWR : O_RDONLY)) < 0)
        TAGG_ERR(TAGG_E_IO, "cannot open subfile '%s': %s", s->paths[k], strerror(errno));
    return s->fd[k];
}

/* Moves one piece that lies within one stripe. */
static int piece(tagg_file_t *f, uint64_t off, uint64_t n, char *buf, tagg_dir_t dir)
{
    sub_t   *s = sub_of(f);
    uint32_t k;
    uint64_t local;
    tagg_sf_locate(off, s->ix.stripe, s->ix.count, &k, &local);
    int fd = fd_of(f, k);
    if (fd < 0)
        return -1;
    for (uint64_t done = 0; done < n;) {
        ssize_t got = dir == TAGG_WRITE ? pwrite(fd, buf + done, n - done, (off_t)(local + done))
                                        : pread(fd, buf + done, n - done, (off_t)(local + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 || (got == 0 && dir == TAGG_WRITE)) {
            TAGG_ERR(TAGG_E_IO, "%s of %llu bytes at offset %llu of subfile '%s' (address %llu) %s: %s",
                     dir == TAGG_WRITE ? "write" : "read", (unsigned long long)(n - done),
                     (unsigned long long)(local + done), s->paths[k], (unsigned long long)(off + done),
                     got == 0 ? "wrote nothing" : "failed", got == 0 ? "short write (no space?)" : strerror(errno));
            return -1;
        }
        if (got == 0) { /* past the end of the subfile: zeros */
            memset(buf + done, 0, n - done);
            break;
        }
        done += (uint64_t)got;
    }
    return 0;
}

static int sub_io(tagg_file_t *f, uint64_t off, uint64_t len, char *buf, tagg_dir_t dir)
{
    uint64_t S = sub_of(f)->ix.stripe;
    for (uint64_t done = 0; done < len;) {
        uint64_t at = off + done, n = S - at % S;
        if (n > len - done)
            n = len - done;
        if (piece(f, at, n, buf + done, dir) < 0)
            return -1;
        done += n;
    }
    return 0;
}

static int sub_pwrite(tagg_file_t *f, uint64_t off, uint64_t len, const void *buf)
{
    return sub_io(f, off, len, (char *)buf, TAGG_WRITE); /* not written to on TAGG_WRITE */
}

static int sub_pread(tagg_file_t *f, uint64_t off, uint64_t len, void *buf)
{
    return sub_io(f, off, len, buf, TAGG_READ);
}

/* Current size of subfile k, from storage. */
static int subfile_size(tagg_file_t *f, uint32_t k, uint64_t *size)
{
    sub_t      *s = sub_of(f);
    struct stat st;
    if ((s->fd[k] >= 0 ? fstat(s->fd[k], &st) : stat(s->paths[k], &st)) < 0) {
        TAGG_ERR(TAGG_E_IO, "cannot stat subfile '%s': %s", s->paths[k], strerror(errno));
        return -1;
    }
    *size = (uint64_t)st.st_size;
    return 0;
}

static int sub_get_size(tagg_file_t *f, uint64_t *size)
{
    sub_t   *s   = sub_of(f);
    uint64_t end = 0, n;
    for (uint32_t k = 0; k < s->ix.count; k++) {
        if (subfile_size(f, k, &n) < 0)
            return -1;
        uint64_t e = tagg_sf_logical_end(n, s->ix.stripe, s->ix.count, k);
        end        = e > end ? e : end;
    }
    *size = end;
    return 0;
}

/* Collective: subfile k is cut or extended by rank k mod size. */
static int sub_set_size(tagg_file_t *f, uint64_t size)
{
    sub_t *s  = sub_of(f);
    int    rc = 0;
    for (uint32_t k = (uint32_t)f->rank; k < s->ix.count; k += (uint32_t)f->size) {
        uint64_t want = tagg_sf_subfile_size(size, s->ix.stripe, s->ix.count, k);
        if (truncate(s->paths[k], (off_t)want) < 0) {
            TAGG_ERR(TAGG_E_IO, "cannot set the size of subfile '%s' to %llu: %s", s->paths[k],
                     (unsigned long long)want, strerror(errno));
            rc = -1;
        }
    }
    return rc;
}

static int sub_sync(tagg_file_t *f)
{
    sub_t *s  = sub_of(f);
    int    rc = 0;
    for (uint32_t k = 0; k < s->ix.count; k++)
        if (s->fd[k] >= 0 && fsync(s->fd[k]) < 0) {
            TAGG_ERR(TAGG_E_IO, "fsync of subfile '%s': %s", s->paths[k], strerror(errno));
            rc = -1;
        }
    return rc;
}

/* Collective, writers only: every subfile's size and checksum, read back on
 * rank k mod size, then rank 0 writes the final index. */
static int write_index(tagg_file_t *f)
{
    sub_t    *s = sub_of(f);
    uint32_t  N = s->ix.count;
    uint64_t *mine = calloc(2 * (size_t)N, sizeof *mine), *all = calloc(2 * (size_t)N, sizeof *all);
    char      err[ERRLEN];
    int       rc = mine && all ? 0 : -1, code;
    if (rc < 0)
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
    for (uint32_t k = (uint32_t)f->rank; rc == 0 && k < N; k += (uint32_t)f->size)
        if (tagg_sf_file_crc(s->paths[k], &mine[2 * k], &mine[2 * k + 1], err, sizeof err) < 0) {
            TAGG_ERR(TAGG_E_IO, "checksumming subfile: %s", err);
            rc = -1;
        }
    if (tagg_agree(f->comm, rc, "checksumming the subfiles") < 0) {
        free(mine), free(all);
        return -1;
    }
    if ((code = MPI_Reduce(mine, all, (int)(2 * N), MPI_UINT64_T, MPI_BOR, 0, f->comm)) != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Reduce (subfile checksums)", code);
        rc = -1;
    }
    if (rc == 0 && f->rank == 0) {
        s->ix.logical_size = 0;
        for (uint32_t k = 0; k < N; k++) {
            s->ix.sub[k].size = all[2 * k];
            s->ix.sub[k].crc  = all[2 * k + 1];
            uint64_t e        = tagg_sf_logical_end(all[2 * k], s->ix.stripe, N, k);
            s->ix.logical_size = e > s->ix.logical_size ? e : s->ix.logical_size;
        }
        s->ix.closed = 1;
        if (tagg_sf_index_write(f->path, &s->ix, f->cfg.fsync, err, sizeof err) < 0) {
            TAGG_ERR(TAGG_E_IO, "%s", err);
            rc = -1;
        }
    }
    free(mine), free(all);
    return tagg_agree(f->comm, rc, "writing the subfile index");
}

static int sub_close(tagg_file_t *f)
{
    sub_t *s  = sub_of(f);
    int    rc = 0;
    if (!s)
        return 0;
    for (uint32_t k = 0; k < s->ix.count; k++)
        if (s->fd[k] >= 0 && close(s->fd[k]) < 0) {
            TAGG_ERR(TAGG_E_IO, "closing subfile '%s': %s", s->paths[k], strerror(errno));
            rc = -1;
        }
    for (uint32_t k = 0; k < s->ix.count; k++)
        s->fd[k] = -1;
    /* every rank's writes are done (the agreement is a barrier) before the read-back */
    if (s->writable) {
        rc = tagg_agree(f->comm, rc, "closing the subfiles");
        if (rc == 0)
            rc = write_index(f); /* on failure the index stays "open": tagg-fuse --check says so */
    }
    sub_free(s);
    f->store = NULL;
    return rc;
}

static int sub_del(const char *path, MPI_Comm comm, MPI_Info info)
{
    int  rank, rc = 0;
    char err[ERRLEN] = "";
    (void)info;
    MPI_Comm_rank(comm, &rank);
    MPI_Barrier(comm);
    if (rank == 0) {
        int is_index = tagg_sf_probe(path, err, sizeof err);
        if (is_index == 1) {
            tagg_sf_index_t ix;
            if (tagg_sf_index_read(path, &ix, err, sizeof err) < 0)
                rc = -1; /* its subfiles cannot be found: keep the stub, say why */
            else {
                rc = remove_listed(path, &ix, err);
                tagg_sf_index_free(&ix);
            }
        }
        else if (is_index < 0)
            rc = -1;
        if (rc == 0 && unlink(path) < 0)
            snprintf(err, sizeof err, "cannot delete '%s': %s", path, strerror(errno)), rc = -1;
        if (rc < 0)
            TAGG_ERR(TAGG_E_IO, "deleting '%s': %s", path, err);
    }
    return tagg_agree(comm, rc, "deleting the file");
}

static uint64_t sub_stripe(const tagg_file_t *f) { return sub_of(f)->ix.stripe; }

const tagg_store_ops_t tagg_store_subfiles = {
    .name     = "subfiles",
    .open     = sub_open,
    .close    = sub_close,
    .pwrite   = sub_pwrite,
    .pread    = sub_pread,
    .get_size = sub_get_size,
    .set_size = sub_set_size,
    .sync     = sub_sync,
    .del      = sub_del,
    .stripe   = sub_stripe,
};
