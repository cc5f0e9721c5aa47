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
 * says "state open"; a file whose index still says so (the writer crashed or
 * failed) is refused unless salvage=1 (then read-only, unverified).
 *
 * Checksums (index format 3, subfile_index.h): one CRC-64 per stripe, made
 * while writing. Each rank notes the stripes it writes: a piece that covers a
 * whole stripe gets its CRC from the buffer, any other piece marks the stripe
 * dirty. At close rank 0 gathers the notes; a stripe written whole by exactly
 * one rank keeps that CRC. In a file this open created, every stripe began as
 * zeros: each write also notes the change it makes to the stripe's padded CRC
 * form (crc_shift.h; over bytes the same rank wrote before, those are read
 * first) and the spans of bytes it covered (stripe_notes.h), so a stripe
 * whose ranks' spans do not overlap gets the CRC the changes compose, with
 * no read. Every other written stripe (ranks' bytes overlapping, a cut
 * through written bytes, a compressed slot rewritten in part, a read-write
 * open of an existing file) is read back once by its keeper; untouched
 * stripes keep their record, and read-back all-zero stripes become holes (no
 * record): a sparse file of any extent costs what its written stripes cost.
 * The summary counts both ways (sf_composed, sf_reread). Reads of a read-only
 * open (verify=1) check each stripe against its record the first time this
 * rank reads it (the whole stored stripe is read for that), and never read
 * past the size the index records; a mismatch is an error naming the subfile
 * and stripe. Paths: only those sf_path.h derives, opened without following
 * links, regular files only.
 *
 * Read-write opens of a closed file (verify=1) never bless damage. The old
 * records are the base. A partial write first reads the bytes it replaces
 * and notes the change it makes to the stripe's padded CRC form (crc_shift.h:
 * changes add by XOR, in any order, from any rank); at close a re-read
 * stripe must equal its base plus every rank's changes, unless a write
 * covered it whole (then nothing old is left in it). A mismatch fails the
 * close on every rank, and the index records the checksum the stripe should
 * have, so every later read of it fails too. A rank reading a stripe it has
 * not written checks it whole against the base; it cannot know at once
 * whether another rank changed it meanwhile (that needs no synchronisation
 * in MPI-IO when the bytes differ), so a mismatch is noted and judged at
 * close: a stripe nobody wrote in this open that did not match its base is
 * damage, and fails the close on every rank.
 * Compression (compression=, issue 15; the logic in sf_stripe_codec.{c,h},
 * the hooks in store_subfiles_io.c): zwrite() sends a whole-stripe piece
 * through the codec and a partial piece through the expansion of a
 * compressed stripe; zread() decodes compressed stripes (by the index when
 * the file is closed and read-only, by the slot's header otherwise); the
 * notes carry the stored form of whole stripes, the close's read-back probes
 * dirty slots, and a cut through a compressed stripe expands it first
 * (zexpand()).
 *
 * destination=nvr (node-local subfiles, index format 2; MA-TAPIOCA's SSD as a
 * destination, seed 002 section 4.4). One subfile per node, in that node's
 * node-local directory (tagg_nvr_dir(): nvr_dir, $TMPDIR, /tmp, as the node's
 * ranks see it) under "tagg-<uid>/<node>/" (both private, 0700, checked:
 * sf_path.h), where <node> is the host name, or
 * "<host>.vnode<i>" when a topology file (topology=) splits one host into
 * virtual nodes, so that tests on one host see distinct nodes. The rule: a
 * subfile is created, written, read, sized, checksummed and removed only by
 * ranks of its node (`own`, from every rank's node name and the index's node
 * lines). Raw data reaches it through collective requests, whose file
 * domains are single stripes aggregated on the stripe's node
 * (tagg_sub_owner(), engine_plan.c); an independent raw access to another
 * node's stripe is refused with an error that says so (counted as
 * nvr_refused in the summary). Everything that is not
 * raw data (HDF5 metadata, which any rank reads and writes) goes to the
 * metadata file `<path>.tagg.meta` beside the index, at its logical address.
 * The files stay after close, for a later phase on the same nodes; drain=close
 * (or `tagg-fuse --drain`) turns them into an ordinary subfiled file.
 *
 * Files: this one opens, creates, sizes, syncs, closes and deletes;
 * store_subfiles_io.c has the I/O path (verified reads, the read-write checks,
 * the compression hooks), store_subfiles_close.c the close's note merge and
 * final index, store_subfiles_nvr.c the node-local set-up and drain; the state
 * they share is in store_subfiles_int.h. */
#include "bufpool.h"
#include "error.h"
#include "mpi_wait.h"
#include "store.h"
#include "store_subfiles_int.h"
#include "crc_shift.h"
#include "sf_path.h"
#include "compression.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Indexes this process holds open for writing (as rank 0 of their
 * communicator), by device and inode: a second, read-only open of one of them
 * in this process (HDF5's probes, h5py reopening a file it writes) meets its
 * own writer's "state open", not a crashed one's. */
static struct {
    dev_t dev;
    ino_t ino;
} held[64];
static int             nheld;
static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;

static int held_find(dev_t dev, ino_t ino)
{
    for (int i = 0; i < nheld; i++)
        if (held[i].dev == dev && held[i].ino == ino)
            return i;
    return -1;
}

static int held_has(const char *path)
{
    struct stat st;
    int         r = 0;
    if (stat(path, &st) == 0) {
        pthread_mutex_lock(&held_mu);
        r = held_find(st.st_dev, st.st_ino) >= 0;
        pthread_mutex_unlock(&held_mu);
    }
    return r;
}

/* Notes (add) the index this writer wrote, id (device and inode, from the
 * descriptor that wrote it, never looked up by path: the close writes into
 * that file), or forgets it; *dev, *ino keep what was noted. */
static void held_note(const unsigned long long *id, int add, dev_t *dev, ino_t *ino)
{
    pthread_mutex_lock(&held_mu);
    if (add && id && id[1] && nheld < (int)(sizeof held / sizeof *held)) {
        held[nheld].dev = *dev = (dev_t)id[0], held[nheld++].ino = *ino = (ino_t)id[1];
    }
    else if (!add) {
        int i = held_find(*dev, *ino);
        if (i >= 0)
            held[i] = held[--nheld];
    }
    pthread_mutex_unlock(&held_mu);
}


static void sub_free(sub_t *s)
{
    if (!s)
        return;
    for (uint32_t k = 0; s->paths && k < s->ix.count; k++)
        free(s->paths[k]);
    free(s->paths);
    for (uint32_t k = 0; s->fd && k < s->ix.count; k++) /* an open that failed after rank 0 kept some open */
        if (s->fd[k] >= 0)
            close(s->fd[k]);
    free(s->fd);
    free(s->wend);
    for (uint32_t k = 0; s->own && k < s->ix.count; k++)
        free(s->own[k]);
    free(s->own), free(s->nown), free(s->mine), free(s->meta_path);
    if (s->meta_fd >= 0)
        close(s->meta_fd);
    if (s->ixfd.fd >= 0) /* a close that failed before the final index: it stays "state open" */
        close(s->ixfd.fd);
    size_t S = (size_t)s->ix.stripe; /* the size of every stripe buffer of the open */
    tagg_sf_index_free(&s->ix);
    tagg_notes_free(&s->written);
    tagg_notes_free(&s->checked);
    tagg_sfz_free(&s->z), free(s->zbuf);
    tagg_sub_dio_free(s);
    for (int i = 0; i < TAGG_SUB_COPIES; i++) /* kept for the process's next files */
        tagg_buf_put(s->copy[i].buf, S);
    tagg_buf_put(s->vbuf, S);
    tagg_buf_put(s->runbuf, 2 * S);
    if (s->held)
        held_note(NULL, 0, &s->hdev, &s->hino);
    pthread_mutex_destroy(&s->mu);
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
    if ((code = tagg_mpi_allreduce(&first, nodes, 1, MPI_INT, MPI_SUM, f->comm)) != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allreduce (counting nodes)", code);
        return -1;
    }
    return 0;
}

/* Collective agreement that carries the first failing rank's message to every
 * rank (a missing node-local subfile is seen by one node only). */
int tagg_sub_agree_msg(tagg_file_t *f, int rc, const char *msg, const char *what)
{
    int in[2] = {rc < 0 ? 0 : 1, f->rank}, out[2];
    int code  = tagg_mpi_allreduce(in, out, 1, MPI_2INT, MPI_MINLOC, f->comm);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allreduce (error agreement)", code);
        return -1;
    }
    if (out[0] == 1)
        return 0;
    char text[ERRLEN];
    snprintf(text, sizeof text, "%s", f->rank == out[1] ? msg : "");
    code = tagg_mpi_bcast(text, ERRLEN, MPI_CHAR, out[1], f->comm);
    if (f->rank == out[1])
        TAGG_ERR(TAGG_E_IO, "%s: %s", what, text);
    else
        TAGG_ERR(TAGG_E_IO, "%s failed on rank %d: %s", what, out[1], code == MPI_SUCCESS ? text : "(no message)");
    return -1;
}

/* ------------------------------------------------------------ create, open */

/* Rank 0: removes the files an existing (checked) index implies (TRUNC,
 * delete): derived names only. Node-local subfiles: by their nodes. */
static int remove_listed(const char *path, const tagg_sf_index_t *old, char *err)
{
    if (old->nvr) {
        char *p = tagg_sf_path_meta(path);
        int   rc = p ? tagg_sf_remove(p, err, ERRLEN) : (snprintf(err, ERRLEN, "out of memory"), -1);
        free(p);
        return rc;
    }
    for (uint32_t k = 0; k < old->count; k++) {
        char *p  = tagg_sf_path_beside(path, k, old->count);
        int   rc = p ? tagg_sf_remove(p, err, ERRLEN) : (snprintf(err, ERRLEN, "out of memory"), -1);
        free(p);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* n descriptors, none open (-1 each); NULL without memory. */
static int *fds_none(uint32_t n)
{
    int *fd = malloc((n ? n : 1) * sizeof *fd);
    for (uint32_t k = 0; fd && k < n; k++)
        fd[k] = -1;
    return fd;
}

/* Rank 0: creates a new subfiled file (subfiles new and empty, index "open");
 * made: the index's device and inode. */
static int create_files(tagg_file_t *f, tagg_sf_index_t *ix, uint32_t N, int had_index, const char *nodes, char *err,
                        int **kept, unsigned long long made[2], tagg_sf_ixfd_t *ixfd)
{
    if (had_index) {
        tagg_sf_index_t old;
        if (tagg_sf_index_read(f->path, &old, err, ERRLEN) == 0) {
            int rc = remove_listed(f->path, &old, err);
            tagg_sf_index_free(&old);
            if (rc < 0)
                return -1;
        } /* an unreadable or hostile old index: nothing it names is touched; the stub is replaced */
    }
    if (nodes)
        return tagg_sub_create_nvr(f, ix, nodes, err, made, ixfd);
    if (tagg_sf_index_init(ix, (uint64_t)f->cfg.stripe_size, N) < 0) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    *kept = fds_none(N); /* the new subfiles stay open for rank 0's own writes */
    for (uint32_t k = 0; k < N; k++) {
        char *p = tagg_sf_path_beside(f->path, k, N);
        int   fd;
        if (!p || !(ix->sub[k].name = tagg_sf_default_name(f->path, k, N))) {
            snprintf(err, ERRLEN, "out of memory");
            free(p);
            return -1;
        }
        if ((fd = tagg_sf_create(p, err, ERRLEN)) < 0) {
            free(p);
            return -1;
        }
        if (*kept)
            (*kept)[k] = fd;
        else
            close(fd);
        free(p);
    }
    return tagg_sf_index_write_mode(f->path, ix, f->cfg.fsync, 1, made, ixfd, err, ERRLEN);
}

/* Opens path (a derived one) and checks its size against the index's. */
int tagg_sub_check_file(const char *index, const char *path, int closed, uint64_t want, const char *what, char *err,
                        int *keep)
{
    struct stat st;
    int         fd = tagg_sf_open(path, O_RDONLY, err, ERRLEN);
    if (fd < 0) {
        char why[ERRLEN];
        if (errno == ENOENT)
            snprintf(err, ERRLEN, "%.100s of '%.400s' is missing: '%.400s': %s", what, index, path, strerror(ENOENT));
        else {
            snprintf(why, sizeof why, "%s", err);
            snprintf(err, ERRLEN, "%.100s: %.900s", what, why);
        }
        return -1;
    }
    int rc = fstat(fd, &st);
    if (rc < 0)
        snprintf(err, ERRLEN, "%s '%s': %s", what, path, strerror(errno));
    else if (closed && (uint64_t)st.st_size != want)
        rc = -1, snprintf(err, ERRLEN,
                          "%s '%s' has %llu bytes, its index records %llu: changed or damaged since it was closed "
                          "(see tagg-fuse --check)",
                          what, path, (unsigned long long)st.st_size, (unsigned long long)want);
    if (rc == 0 && keep)
        *keep = fd;
    else
        close(fd);
    return rc < 0 ? -1 : 0;
}

/* Rank 0: reads an existing index (names checked), refuses a file left open
 * by a writer (unless salvage, read-only) and old formats for writing, and
 * checks that its subfiles are there. A read-only open keeps the descriptors
 * of the subfiles it checked in *kept ([count], -1 where none; freed and
 * closed by the caller): its reads need them, and on a parallel file system
 * an open is a round trip. */
static int open_existing(tagg_file_t *f, tagg_sf_index_t *ix, int rewrite, char *err, int **kept,
                         unsigned long long made[2], tagg_sf_ixfd_t *ixfd)
{
    char what[128];
    /* the text the file layer's look at the path read a moment before, or a read of its own */
    if (f->seen_text ? tagg_sf_index_from_text(f->path, f->seen_text, f->seen_len, ix, err, ERRLEN) < 0
                     : tagg_sf_index_read(f->path, ix, err, ERRLEN) < 0)
        return -1;
    if (!ix->closed && (rewrite || !(f->cfg.salvage || held_has(f->path))))
        return snprintf(err, ERRLEN,
                        "'%s' was not closed: its index says 'state open' (the writer crashed or failed), so its data may "
                        "be incomplete or inconsistent. Refused%s. Check it with `tagg-fuse --check %s`; to read what is "
                        "there, open it read-only with salvage=1 (unverified)",
                        f->path, rewrite ? " for writing" : "", f->path),
               -1;
    if (rewrite && ix->version < TAGG_SF_VERSION_3)
        return snprintf(err, ERRLEN,
                        "'%s' has an index of format %u, which this tagg reads but does not write: open it read-only, "
                        "or rewrite it (h5repack through tagg, or tagg-fuse to one HDF5 file)",
                        f->path, ix->version),
               -1;
    if (ix->nvr) { /* the node-local subfiles are checked by their nodes (tagg_sub_nvr_setup) */
        char *p = tagg_sf_path_meta(f->path);
        int   rc = p ? tagg_sub_check_file(f->path, p, 0, 0, "the metadata file", err, NULL) : (snprintf(err, ERRLEN, "out of memory"), -1);
        free(p);
        if (rc < 0)
            return -1;
    }
    if (!rewrite && !ix->nvr)
        *kept = fds_none(ix->count);
    for (uint32_t k = 0; !ix->nvr && k < ix->count; k++) {
        char *p = tagg_sf_path_beside(f->path, k, ix->count);
        snprintf(what, sizeof what, "subfile %u", (unsigned)k);
        int rc = p ? tagg_sub_check_file(f->path, p, ix->closed, ix->sub[k].size, what, err, *kept ? &(*kept)[k] : NULL)
                   : (snprintf(err, ERRLEN, "out of memory"), -1);
        free(p);
        if (rc < 0)
            return -1;
    }
    if (rewrite) { /* a writer has it: mark it open until close */
        ix->closed = 0;
        return tagg_sf_index_write_mode(f->path, ix, f->cfg.fsync, 0, made, ixfd, err, ERRLEN);
    }
    return 0;
}

/* Compression of this open (the same on every rank: the configuration and
 * the index are): the codec of whole-stripe writes, and whether any stripe
 * may be compressed. */
static int zsetup(tagg_file_t *f, sub_t *s, unsigned enc)
{
    tagg_codec_opts_t o;
    char              err[ERRLEN];
    tagg_codec_opts_default(&o);
    o.level    = f->cfg.compression_level;
    o.shuffle  = (tagg_shuffle_t)f->cfg.compression_shuffle;
    o.typesize = (size_t)f->cfg.compression_typesize;
    tagg_sfz_free(&s->z);
    if (tagg_sfz_init(&s->z, enc, &o, s->ix.stripe, err, sizeof err) < 0) {
        TAGG_ERR(TAGG_E_CONFIG, "compression: %s", err);
        return -1;
    }
    s->zmay = enc || tagg_sf_any_compressed(&s->ix);
    return 0;
}

static int sub_open(tagg_file_t *f, unsigned flags)
{
    char     err[ERRLEN] = "";
    int      nodes = 0, rc = 0, *kept = NULL; /* rank 0: the subfiles it created or (read-only) checked, still open */
    uint32_t nkept = 0;
    uint64_t hdr[3] = {0, 0, 0}; /* rank 0's result (0 ok, 1 failed), length of what follows, created */
    unsigned long long made[2] = {0, 0}; /* rank 0 of a writer: the device and inode of the index it wrote */
    char    *text = NULL, *names = NULL;
    size_t   len  = 0;
    sub_t   *s    = calloc(1, sizeof *s);
    int      nvr_create = (flags & TAGG_OPEN_CREAT) && f->cfg.destination == TAGG_DEST_NVR;
    if (s) {
        s->meta_fd = -1;
        s->ixfd.fd = -1;
        s->cut     = UINT64_MAX;
        pthread_mutex_init(&s->mu, NULL);
        tagg_sfz_init(&s->z, 0, NULL, 1, NULL, 0);
    }
    if ((flags & TAGG_OPEN_CREAT) && f->cfg.subfiles == 0 && !nvr_create && count_nodes(f, &nodes) < 0)
        rc = -1;
    if (tagg_agree(f->comm, s ? rc : -1, "subfiles open (set-up)") < 0) {
        if (!s)
            TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        else
            sub_free(s);
        return -1;
    }
    if (nvr_create && tagg_sub_gather_nodes(f, &names) < 0) {
        sub_free(s);
        return -1;
    }
    if (f->rank == 0) {
        tagg_sf_index_t ix;
        struct stat     st;
        /* what the file layer's look at the path found just before, or a look of its own */
        int exists = f->seen ? f->seen >= 2 : stat(f->path, &st) == 0, is_index = f->seen == 3;
        memset(&ix, 0, sizeof ix);
        if (exists && !f->seen && (is_index = tagg_sf_probe(f->path, err, sizeof err)) < 0)
            rc = -1;
        else if (exists && (flags & TAGG_OPEN_EXCL))
            snprintf(err, sizeof err, "'%s' exists (exclusive create)", f->path), rc = -1;
        else if ((flags & TAGG_OPEN_CREAT) && (!exists || (flags & TAGG_OPEN_TRUNC))) {
            rc     = create_files(f, &ix, f->cfg.subfiles ? (uint32_t)f->cfg.subfiles : (uint32_t)nodes, is_index,
                                  nvr_create ? names : NULL, err, &kept, made, &s->ixfd);
            nkept  = kept ? ix.count : 0;
            hdr[2] = 1;
        }
        else if (!exists)
            snprintf(err, sizeof err, "cannot open '%s': %s", f->path, strerror(ENOENT)), rc = -1;
        else if (!is_index)
            snprintf(err, sizeof err, "'%s' is not a tagg subfiled file (layout=subfiles; its index starts with \"%s\")",
                     f->path, TAGG_SF_MAGIC), rc = -1;
        else
            rc = open_existing(f, &ix, (flags & TAGG_OPEN_RDWR) != 0, err, &kept, made, &s->ixfd),
            nkept = kept ? ix.count : 0;
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
    /* every rank gets rank 0's index text (names checked there), or its error message */
    int code = tagg_mpi_bcast(hdr, 3, MPI_UINT64_T, 0, f->comm);
    if (code == MPI_SUCCESS && hdr[1] > (uint64_t)INT_MAX)
        hdr[0] = 1, hdr[1] = 0;
    if (code == MPI_SUCCESS && f->rank != 0 && !(text = malloc(hdr[1] + 1)))
        hdr[1] = 0; /* cannot receive: take part with nothing; fails below */
    if (code == MPI_SUCCESS && hdr[1])
        code = tagg_mpi_bcast(text, (int)hdr[1], MPI_CHAR, 0, f->comm);
    rc = 0;
    if (code != MPI_SUCCESS)
        TAGG_ERR_MPI("MPI_Bcast (subfile index)", code), rc = -1;
    else if (hdr[0])
        TAGG_ERR(TAGG_E_IO, "%s%.*s", f->rank ? "rank 0: " : "", (int)hdr[1], text ? text : "(no message)"), rc = -1;
    else if (!text || !hdr[1])
        TAGG_ERR(TAGG_E_NOMEM, "out of memory"), rc = -1;
    else if (tagg_sf_index_parse(text, (size_t)hdr[1], &s->ix, err, sizeof err) < 0)
        TAGG_ERR(TAGG_E_IO, "%s: %s", f->path, err), rc = -1;
    else if (!(s->paths = calloc(s->ix.count, sizeof *s->paths)) || !(s->fd = fds_none(s->ix.count)) ||
             (s->ix.nvr && !(s->meta_path = tagg_sf_path_meta(f->path))))
        TAGG_ERR(TAGG_E_NOMEM, "out of memory"), rc = -1;
    for (uint32_t k = 0; rc == 0 && k < s->ix.count; k++) {
        if (!(s->paths[k] = tagg_sf_path_of(f->path, &s->ix, k)))
            TAGG_ERR(TAGG_E_NOMEM, "out of memory"), rc = -1;
    }
    for (uint32_t k = 0; k < nkept; k++) /* the index every rank parsed is rank 0's: the same subfiles */
        if (kept[k] >= 0 && rc == 0 && k < s->ix.count)
            s->fd[k] = kept[k];
        else if (kept[k] >= 0)
            close(kept[k]);
    free(kept);
    free(text);
    s->writable = (flags & TAGG_OPEN_RDWR) != 0;
    s->limit    = !s->writable && s->ix.closed;
    s->verify   = !s->writable && f->cfg.verify && s->ix.closed;
    s->base_on  = s->writable && f->cfg.verify && !hdr[2] && s->ix.version >= TAGG_SF_VERSION_3;
    s->base_L   = s->ix.logical_size;
    s->fresh    = s->writable && hdr[2];
    /* format 4 (subfile_index.h): a writer follows its writes' changes block by
     * block too, so that close records block checksums (not node-local files) */
    if (rc == 0 && s->writable && !s->ix.nvr)
        s->ix.block = tagg_sf_block_size(s->ix.stripe);
    s->written.nb = s->writable && s->ix.block ? TAGG_SF_BLOCKS : 0;
    s->bunit      = s->ix.block;
    /* the block is the read's unit when every stripe has block checksums (a
     * compressed stripe has none: it is decoded whole) */
    for (uint64_t i = 0, b = 0; s->bunit && i < s->ix.nst; i++) { /* both lists ascending */
        while (b < s->ix.nblk && s->ix.blk[TAGG_SF_BREC * b] < s->ix.st[i].j)
            b++;
        if (s->ix.st[i].form || b == s->ix.nblk || s->ix.blk[TAGG_SF_BREC * b] != s->ix.st[i].j)
            s->bunit = 0;
    }
    if (rc == 0 && s->fresh && !s->ix.nvr && !(s->wend = calloc(s->ix.count ? s->ix.count : 1, sizeof *s->wend)))
        TAGG_ERR(TAGG_E_NOMEM, "out of memory"), rc = -1;
    /* the codec of this open: rank 0's (compression=auto reads the tiers file) */
    unsigned enc = rc == 0 && f->rank == 0 && s->writable && !s->ix.nvr ? tagg_compression_codec(&f->cfg, s->ix.stripe) : 0;
    if ((code = tagg_mpi_bcast(&enc, 1, MPI_UNSIGNED, 0, f->comm)) != MPI_SUCCESS)
        TAGG_ERR_MPI("MPI_Bcast (compression)", code), rc = -1;
    if (rc == 0 && zsetup(f, s, enc) < 0)
        rc = -1;
    if (rc == 0 && tagg_sub_dio_setup(f, s) < 0)
        rc = -1;
    f->comp_codec = rc == 0 ? enc : 0; /* the summary names it (compression=auto) */
    if (tagg_agree(f->comm, rc, "opening the subfiles") < 0) {
        free(names);
        sub_free(s);
        return -1;
    }
    /* node-local subfiles: every rank knows the index now (the same on all) */
    if (s->ix.nvr) {
        rc = names ? 0 : tagg_sub_gather_nodes(f, &names);
        if (rc == 0)
            rc = tagg_agree(f->comm, tagg_sub_nvr_setup(f, s, names, (int)hdr[2]), "opening the node-local subfiles");
        free(names);
        if (rc < 0) {
            f->size_everywhere = 0;
            sub_free(s);
            return -1;
        }
    }
    else
        free(names);
    if (s->writable && f->rank == 0) /* our own "state open" from now to close */
        held_note(made, 1, &s->hdev, &s->hino), s->held = s->hino != 0;
    f->store = s;
    if (tagg_sub_share_first(f) < 0) { /* the broadcast failed: MPI is broken on every rank */
        f->store = NULL;
        sub_free(s);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ sizes, sync */

/* Current size of a derived file, from storage (never through a link). */
static int file_size(int fd, const char *path, const char *what, uint64_t *size)
{
    struct stat st;
    if ((fd >= 0 ? fstat(fd, &st) : lstat(path, &st)) < 0 || (fd < 0 && !S_ISREG(st.st_mode))) {
        TAGG_ERR(TAGG_E_IO, "cannot stat %s '%s': %s", what, path, fd < 0 && errno == 0 ? "not a regular file" : strerror(errno));
        return -1;
    }
    *size = (uint64_t)st.st_size;
    return 0;
}

int tagg_sub_subfile_size(tagg_file_t *f, uint32_t k, uint64_t *size)
{
    sub_t *s = sub_of(f);
    errno    = 0;
    return file_size(s->fd[k], s->paths[k], "subfile", size);
}

/* The rank that sizes, checksums and drains subfile k: for node-local
 * subfiles its node's lowest rank, else rank k mod size. */
int tagg_sub_keeper(const tagg_file_t *f, const sub_t *s, uint32_t k)
{
    return s->ix.nvr ? s->own[k][0] : (int)(k % (uint32_t)f->size);
}

/* Size of the metadata file (node-local subfiles). */
int tagg_sub_meta_size(tagg_file_t *f, uint64_t *size)
{
    sub_t *s = sub_of(f);
    errno    = 0;
    return file_size(s->meta_fd, s->meta_path, "the metadata file", size);
}

/* Shared subfiles: on rank 0, every subfile. Node-local (size_everywhere):
 * on every rank, what it may see (the subfiles it keeps, and on rank 0 the
 * metadata file); the file layer takes the maximum. */
static int sub_get_size(tagg_file_t *f, uint64_t *size)
{
    sub_t   *s   = sub_of(f);
    uint64_t end = 0, n;
    for (uint32_t k = 0; k < s->ix.count; k++) {
        if (s->ix.nvr && tagg_sub_keeper(f, s, k) != f->rank)
            continue;
        if (tagg_sub_subfile_size(f, k, &n) < 0)
            return -1;
        if (s->limit && n > s->ix.sub[k].size)
            n = s->ix.sub[k].size;
        uint64_t e = tagg_sf_logical_end(n, s->ix.stripe, s->ix.count, k);
        end        = e > end ? e : end;
    }
    if (s->ix.nvr && f->rank == 0) {
        if (tagg_sub_meta_size(f, &n) < 0)
            return -1;
        if (s->limit && n > s->ix.meta.size)
            n = s->ix.meta.size;
        end = n > end ? n : end;
    }
    *size = end;
    return 0;
}

/* ftruncate through a safe descriptor (the open one, or opened for it). */
static int cut_file(int fd, const char *path, uint64_t size, const char *what)
{
    char err[ERRLEN];
    int  own = fd < 0;
    if (own && (fd = tagg_sf_open(path, O_RDWR, err, sizeof err)) < 0) {
        TAGG_ERR(TAGG_E_IO, "cannot set the size of %s: %s", what, err);
        return -1;
    }
    int rc = ftruncate(fd, (off_t)size);
    if (rc < 0)
        TAGG_ERR(TAGG_E_IO, "cannot set the size of %s '%s' to %llu: %s", what, path, (unsigned long long)size,
                 strerror(errno));
    if (own)
        close(fd);
    return rc < 0 ? -1 : 0;
}

/* Read-write open of a closed file: the stripe holding a new end (space sp,
 * slot at `slot` in the file at path) loses its bytes past the end; the
 * change that makes to its padded CRC form goes into this rank's notes. */
static int note_cut(tagg_file_t *f, int fd, const char *path, int sp, uint64_t size, uint64_t slot)
{
    sub_t   *s = sub_of(f);
    uint64_t S = s->ix.stripe, at = size % S, t = S - at;
    int      own = fd < 0, rc = 0;
    char     err[ERRLEN];
    if (!s->base_on || !at)
        return 0;
    if (!tagg_sub_vbuf(s))
        return -1;
    if (own && (fd = tagg_sf_open(path, O_RDONLY, err, sizeof err)) < 0)
        return TAGG_ERR(TAGG_E_IO, "cannot set the size: %s", err), -1;
    if (tagg_sf_pread_upto(fd, s->vbuf, (size_t)t, slot + at, UINT64_MAX) < 0)
        rc = -1, TAGG_ERR(TAGG_E_IO, "reading the end of '%s' before cutting it: %s", path, strerror(errno));
    else {
        uint64_t d = tagg_crc_delta(tagg_crc64(0, s->vbuf, (size_t)t), tagg_crc_zeros(t), at, t, S);
        pthread_mutex_lock(&s->mu);
        if (tagg_notes_write(&s->written, 2 * (size / S) + (uint64_t)sp, 0, 0, 0, d, NULL, 0, 0, 0) < 0)
            rc = -1, TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        pthread_mutex_unlock(&s->mu);
    }
    if (own)
        close(fd);
    return rc;
}

/* The stripe at slot base of subfile k, expanded if it is compressed. */
static int zexpand(tagg_file_t *f, uint32_t k, uint64_t base)
{
    sub_t *s  = sub_of(f);
    int    fd = tagg_sub_fd_of(f, k, base);
    char   err[ERRLEN];
    if (fd < 0)
        return -1;
    if (tagg_sfz_expand(&s->z, fd, base, err, sizeof err) < 0) {
        TAGG_ERR(TAGG_E_IO, "setting the size: subfile '%s' at %llu: %s", s->paths[k], (unsigned long long)base, err);
        return -1;
    }
    return 0;
}

/* Collective: subfile k is cut or extended by its keeper (the metadata file
 * by rank 0). Notes of stripes past the new end go; the stripe holding the
 * end is re-read at close. */
static int sub_set_size(tagg_file_t *f, uint64_t size)
{
    sub_t   *s  = sub_of(f);
    int      rc = 0;
    uint64_t S  = s->ix.stripe;
    for (uint32_t k = 0; k < s->ix.count; k++) {
        if (tagg_sub_keeper(f, s, k) != f->rank)
            continue;
        uint64_t want = tagg_sf_subfile_size(size, S, s->ix.count, k);
        int end = size % S && (size / S) % s->ix.count == k;
        if (end && tagg_sub_zmay(s, size / S) && zexpand(f, k, want - want % S) < 0)
            rc = -1; /* a cut through a compressed stripe: expanded first, so note_cut reads logical bytes */
        else if (end && note_cut(f, s->fd[k], s->paths[k], 0, size, (size / S / s->ix.count) * S) < 0)
            rc = -1;
        else if (cut_file(s->fd[k], s->paths[k], want, "subfile") < 0)
            rc = -1;
    }
    /* the metadata file is only ever cut: extending it would make a sparse copy
     * as long as the file; the raw subfiles already carry the logical size */
    uint64_t msize = 0;
    if (s->ix.nvr && f->rank == 0 && tagg_sub_meta_size(f, &msize) < 0)
        rc = -1;
    else if (s->ix.nvr && f->rank == 0 && msize > size &&
             (note_cut(f, s->meta_fd, s->meta_path, 1, size, size - size % S) < 0 ||
              cut_file(s->meta_fd, s->meta_path, size, "the metadata file") < 0))
        rc = -1;
    pthread_mutex_lock(&s->mu);
    for (uint32_t k = 0; s->wend && k < s->ix.count; k++) /* every rank: the size each subfile now has */
        s->wend[k] = tagg_sf_subfile_size(size, S, s->ix.count, k);
    tagg_notes_cut(&s->written, size / S + (size % S != 0));
    tagg_notes_cut(&s->checked, size / S + (size % S != 0));
    tagg_notes_cut_within(&s->written, size / S, size % S);
    s->nrecent = 0; /* a cut may have zeroed bytes they remember */
    if (f->rank == 0 && size % S &&
        (tagg_notes_put(&s->written, 2 * (size / S), NOTE_DIRTY, 0) < 0 ||
         (s->ix.nvr && tagg_notes_put(&s->written, 2 * (size / S) + 1, NOTE_DIRTY, 0) < 0)))
        TAGG_ERR(TAGG_E_NOMEM, "out of memory"), rc = -1;
    if (size < s->cut)
        s->cut = size;
    pthread_mutex_unlock(&s->mu);
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
    if (s->meta_fd >= 0 && fsync(s->meta_fd) < 0) {
        TAGG_ERR(TAGG_E_IO, "fsync of the metadata file '%s': %s", s->meta_path, strerror(errno));
        rc = -1;
    }
    return rc;
}

/* ------------------------------------------------------------ close, delete */

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
    if (s->meta_fd >= 0 && close(s->meta_fd) < 0) {
        TAGG_ERR(TAGG_E_IO, "closing the metadata file '%s': %s", s->meta_path, strerror(errno));
        rc = -1;
    }
    s->meta_fd    = -1;
    int drain_now = s->ix.nvr && f->cfg.drain == TAGG_DRAIN_CLOSE;
    /* every rank's writes are done (the agreement is a barrier) before the notes are merged */
    if (s->writable) {
        rc = tagg_agree(f->comm, rc, "closing the subfiles");
        if (rc == 0)
            rc = tagg_sub_write_index(f, drain_now); /* on failure the index stays "open": tagg-fuse --check says so */
    }
    if (rc == 0 && drain_now && s->ix.closed)
        rc = tagg_sub_drain(f);
    sub_free(s);
    f->store = NULL;
    return rc;
}

static int sub_del(const char *path, MPI_Comm comm, MPI_Info info, const tagg_config_t *cfg)
{
    int             rank, rc = 0;
    char            err[ERRLEN] = "";
    tagg_sf_index_t ix;
    (void)info;
    memset(&ix, 0, sizeof ix);
    MPI_Comm_rank(comm, &rank);
    tagg_mpi_barrier(comm);
    if (rank == 0) {
        int is_index = tagg_sf_probe(path, err, sizeof err);
        if (is_index == 1) {
            if (tagg_sf_index_read(path, &ix, err, sizeof err) < 0)
                rc = -1; /* names not checked, or its subfiles cannot be found: keep it all, say why */
            else
                rc = remove_listed(path, &ix, err);
        }
        else if (is_index < 0)
            rc = -1;
    }
    /* node-local subfiles: removed by the ranks of their nodes (any of them;
     * ENOENT is fine), in their private directories only */
    int nvr = rank == 0 && rc == 0 && ix.nvr;
    tagg_mpi_bcast(&nvr, 1, MPI_INT, 0, comm);
    if (nvr)
        rc = tagg_sub_del_nvr(comm, rank, cfg, &ix, rc, err);
    tagg_sf_index_free(&ix);
    if (rank == 0 && rc == 0 && unlink(path) < 0)
        snprintf(err, sizeof err, "cannot delete '%s': %s", path, strerror(errno)), rc = -1;
    if (rc < 0)
        TAGG_ERR(TAGG_E_IO, "deleting '%s': %s", path, err);
    return tagg_agree(comm, rc, "deleting the file");
}

static uint64_t sub_stripe(const tagg_file_t *f) { return sub_of(f)->ix.stripe; }
static uint32_t sub_files(const tagg_file_t *f) { return sub_of(f)->ix.count; }
/* A read-only open with verify=1 checks each stripe a rank reads, read whole
 * the first time (read_checked), or, in format 4, each block of it (when
 * every stripe has block checksums: the unit is the block); so does a
 * read-write open of a closed file, whole stripes (read_base_checked).
 * Formats 1 and 2 check whole subfiles: not priced. From the index (rank
 * 0's), the open's mode and the configuration: the same on every rank. */
static uint64_t sub_read_unit(const tagg_file_t *f)
{
    const sub_t *s = sub_of(f);
    if (s->base_on)
        return s->ix.stripe;
    return s->verify && s->ix.version >= TAGG_SF_VERSION_3 ? (s->bunit ? s->bunit : s->ix.stripe) : 0;
}
/* direct_io: whole stripes are whole blocks when the stripe is a multiple of
 * one (every subfile's tagg_dio_t has the same rule: reads not under write) */
static uint64_t sub_dio_block(const tagg_file_t *f, int write)
{
    const sub_t *s = sub_of(f);
    return s->dio && (write || !s->dio[0].writes_only) && s->ix.stripe % TAGG_DIO_ALIGN == 0 ? TAGG_DIO_ALIGN : 0;
}

/* the subfiles are POSIX descriptors (see the top of this file) */
static int sub_posix_only(const tagg_file_t *f)
{
    (void)f;
    return 1;
}

const tagg_store_ops_t tagg_store_subfiles = {
    .name     = "subfiles",
    .open     = sub_open,
    .close    = sub_close,
    .pwrite   = tagg_sub_pwrite,
    .pread    = tagg_sub_pread,
    .get_size = sub_get_size,
    .set_size = sub_set_size,
    .sync     = sub_sync,
    .del      = sub_del,
    .stripe   = sub_stripe,
    .files    = sub_files,
    .dio_block = sub_dio_block,
    .read_unit = sub_read_unit,
    .owner    = tagg_sub_owner,
    .owner_window = tagg_sub_owner_window,
    .posix_only = sub_posix_only,
};

