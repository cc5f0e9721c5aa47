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
 * one rank keeps that CRC, every other written stripe is read back once by
 * its keeper (HDF5 metadata stripes, partial stripes), untouched stripes keep
 * their record, and all-zero stripes become holes (no record): a sparse file
 * of any extent costs what its written stripes cost. Reads of a read-only
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
 * here only hooks): zwrite() sends a whole-stripe piece through the codec and
 * a partial piece through the expansion of a compressed stripe; zread()
 * decodes compressed stripes (by the index when the file is closed and
 * read-only, by the slot's header otherwise); the notes carry the stored form
 * of whole stripes, the close's read-back probes dirty slots, and a cut
 * through a compressed stripe expands it first (zexpand()).
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
 * lines). Raw data reaches it through collective requests, whose file domains
 * are single stripes aggregated on the stripe's node (owner(), engine_plan.c);
 * an independent raw access to another node's stripe is refused with an error
 * that says so (counted as nvr_refused in the summary). Everything that is not
 * raw data (HDF5 metadata, which any rank reads and writes) goes to the
 * metadata file `<path>.tagg.meta` beside the index, at its logical address.
 * The files stay after close, for a later phase on the same nodes; drain=close
 * (or `tagg-fuse --drain`) turns them into an ordinary subfiled file. */
#include "error.h"
#include "io.h"
#include "store.h"
#include "subfile_index.h"
#include "crc_shift.h"
#include "sf_path.h"
#include "stripe_notes.h"
#include "sf_stripe_codec.h"
#include "compression.h"
#include "fault.h"
#include "tier.h"

#include <tagg/topology.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ERRLEN 1024
#define NODELEN 256 /* node names */
#define DIRLEN 1024 /* node-local directories */

typedef struct {
    tagg_sf_index_t ix;    /* stripe, count, names (sizes, checksums: as of the last close) */
    char          **paths; /* full path of each subfile */
    int            *fd;    /* -1 until this rank touches the subfile */
    int             writable;
    /* destination=nvr */
    int   *mine;      /* [count] this rank is on subfile k's node */
    int  **own;       /* [count] the ranks on subfile k's node, ascending */
    int   *nown;      /* [count] how many */
    int    window;    /* count x min nown: stripes one collective pass can give an owner each */
    char  *meta_path; /* the metadata file beside the index */
    int    meta_fd;   /* -1 until this rank touches metadata */
    /* checksums */
    int             verify;  /* read-only open, verify=1, closed file: check stripes on first read */
    int             base_on; /* read-write open of a closed file, verify=1: its records are the base (below) */
    uint64_t        base_L;  /* the logical size the records describe */
    int             limit;   /* read-only: never read past the sizes the index records */
    notes_t         written; /* writers: stripes this rank wrote (FULL with crc, or DIRTY) */
    notes_t         checked; /* readers: stripes (legacy formats: subfiles) this rank verified */
    char           *vbuf;    /* one stripe, for verification */
    uint64_t        cut;     /* smallest size set in this open (UINT64_MAX: none) */
    pthread_mutex_t mu;      /* the notes (async workers write too) */
    int             held;    /* rank 0 of a writer: the index is in held[] */
    /* compression (sf_stripe_codec.h): z.enc codec of whole-stripe writes; zmay:
     * a stripe may be stored compressed (z.enc, or the index has some) */
    tagg_sfz_t      z;
    int             zmay;
    char           *zbuf; /* 2 stripes: a decoded stripe (zj: its number + 1) and scratch */
    uint64_t        zj;
    dev_t           hdev;
    ino_t           hino;
} sub_t;

static sub_t *sub_of(const tagg_file_t *f) { return f->store; }

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

/* Notes (add) or forgets the index at path; *dev, *ino keep what was noted. */
static void held_note(const char *path, int add, dev_t *dev, ino_t *ino)
{
    struct stat st;
    pthread_mutex_lock(&held_mu);
    if (add && stat(path, &st) == 0 && nheld < (int)(sizeof held / sizeof *held)) {
        held[nheld].dev = *dev = st.st_dev, held[nheld++].ino = *ino = st.st_ino;
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
    free(s->fd);
    for (uint32_t k = 0; s->own && k < s->ix.count; k++)
        free(s->own[k]);
    free(s->own), free(s->nown), free(s->mine), free(s->meta_path);
    if (s->meta_fd >= 0)
        close(s->meta_fd);
    tagg_sf_index_free(&s->ix);
    tagg_notes_free(&s->written);
    tagg_notes_free(&s->checked);
    tagg_sfz_free(&s->z), free(s->zbuf);
    free(s->vbuf);
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
    if ((code = MPI_Allreduce(&first, nodes, 1, MPI_INT, MPI_SUM, f->comm)) != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allreduce (counting nodes)", code);
        return -1;
    }
    return 0;
}

/* This process's node name: the host name, or "<host>.vnode<i>" when the
 * configuration's topology file places this rank on virtual node i. 0 or -1. */
static int node_name(const tagg_config_t *cfg, int rank, char *name, size_t len)
{
    char host[NODELEN];
    if (gethostname(host, sizeof host) < 0) {
        TAGG_ERR(TAGG_E_IO, "gethostname: %s", strerror(errno));
        return -1;
    }
    host[sizeof host - 1] = '\0';
    if (cfg->topology && *cfg->topology) {
        tagg_topology_t *t = NULL;
        tagg_err_t       err;
        if (tagg_topology_load(cfg->topology, &t, &err) < 0) {
            TAGG_ERR(TAGG_E_CONFIG, "topology: %s", err.msg);
            return -1;
        }
        int node = rank < tagg_topology_nranks(t) ? tagg_topology_rank_node(t, rank) : -1;
        tagg_topology_free(t);
        if (node < 0) {
            TAGG_ERR(TAGG_E_CONFIG, "topology %s does not place rank %d", cfg->topology, rank);
            return -1;
        }
        snprintf(name, len, "%.200s.vnode%d", host, node);
    }
    else
        snprintf(name, len, "%s", host);
    return 0;
}

/* Collective: every rank's node name and node-local directory (NODELEN and
 * DIRLEN bytes per rank, rank order), in *all (malloc'd). Agreed. */
static int gather_nodes(tagg_file_t *f, char **all)
{
    char  mine[NODELEN + DIRLEN];
    int   rc = 0;
    memset(mine, 0, sizeof mine);
    *all = malloc((size_t)f->size * sizeof mine);
    if (!*all)
        TAGG_ERR(TAGG_E_NOMEM, "out of memory"), rc = -1;
    if (rc == 0 && node_name(&f->cfg, f->rank, mine, NODELEN) < 0)
        rc = -1;
    const char *dir = tagg_nvr_dir(&f->cfg);
    if (rc == 0 && (strlen(dir) >= DIRLEN || dir[0] != '/')) {
        TAGG_ERR(TAGG_E_CONFIG, "destination=nvr: the node-local directory '%s' must be an absolute path of less than %d bytes",
                 dir, DIRLEN);
        rc = -1;
    }
    else
        snprintf(mine + NODELEN, DIRLEN, "%s", dir);
    if (tagg_agree(f->comm, rc, "naming the nodes") < 0) {
        free(*all);
        *all = NULL;
        return -1;
    }
    int code = MPI_Allgather(mine, (int)sizeof mine, MPI_CHAR, *all, (int)sizeof mine, MPI_CHAR, f->comm);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allgather (node names)", code);
        free(*all);
        *all = NULL;
        return -1;
    }
    return 0;
}
#define NODE_OF(all, r) ((all) + (size_t)(r) * (NODELEN + DIRLEN))
#define DIR_OF(all, r) (NODE_OF(all, r) + NODELEN)

/* Collective agreement that carries the first failing rank's message to every
 * rank (a missing node-local subfile is seen by one node only). */
static int agree_msg(tagg_file_t *f, int rc, const char *msg, const char *what)
{
    int in[2] = {rc < 0 ? 0 : 1, f->rank}, out[2];
    int code  = MPI_Allreduce(in, out, 1, MPI_2INT, MPI_MINLOC, f->comm);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allreduce (error agreement)", code);
        return -1;
    }
    if (out[0] == 1)
        return 0;
    char text[ERRLEN];
    snprintf(text, sizeof text, "%s", f->rank == out[1] ? msg : "");
    code = MPI_Bcast(text, ERRLEN, MPI_CHAR, out[1], f->comm);
    if (f->rank == out[1])
        TAGG_ERR(TAGG_E_IO, "%s: %s", what, text);
    else
        TAGG_ERR(TAGG_E_IO, "%s failed on rank %d: %s", what, out[1], code == MPI_SUCCESS ? text : "(no message)");
    return -1;
}

/* Rank 0: removes the subfiles an existing index names (TRUNC, delete). */

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

/* Rank 0, destination=nvr: the index of a new file; subfile k belongs to the
 * k-th node in rank order (the node's ranks create it, in their directory). */
static int create_nvr(tagg_file_t *f, tagg_sf_index_t *ix, const char *nodes, char *err)
{
    uint32_t N = 0;
    int     *first = malloc((size_t)f->size * sizeof *first); /* lowest rank of each node */
    if (!first)
        return snprintf(err, ERRLEN, "out of memory"), -1;
    for (int r = 0; r < f->size; r++) {
        uint32_t k = 0;
        while (k < N && strcmp(NODE_OF(nodes, first[k]), NODE_OF(nodes, r)))
            k++;
        if (k == N)
            first[N++] = r;
    }
    int rc = 0;
    if (tagg_sf_index_init(ix, (uint64_t)f->cfg.stripe_size, N) < 0 || !(ix->meta.name = tagg_sf_meta_name(f->path)))
        rc = -1;
    ix->nvr = 1;
    for (uint32_t k = 0; rc == 0 && k < N; k++) {
        if (!(ix->sub[k].node = strdup(NODE_OF(nodes, first[k]))) ||
            !(ix->sub[k].name = tagg_sf_path_nvr(DIR_OF(nodes, first[k]), NODE_OF(nodes, first[k]), f->path, k, N)))
            rc = -1;
    }
    free(first);
    if (rc < 0)
        return snprintf(err, ERRLEN, "out of memory"), -1;
    char *mp = tagg_sf_path_meta(f->path);
    int   fd = mp ? tagg_sf_create(mp, err, ERRLEN) : -1;
    free(mp);
    if (fd < 0 || close(fd) < 0)
        return -1;
    return tagg_sf_index_write(f->path, ix, f->cfg.fsync, err, ERRLEN);
}

/* Rank 0: creates a new subfiled file (subfiles new and empty, index "open"). */
static int create_files(tagg_file_t *f, tagg_sf_index_t *ix, uint32_t N, int had_index, const char *nodes, char *err)
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
        return create_nvr(f, ix, nodes, err);
    if (tagg_sf_index_init(ix, (uint64_t)f->cfg.stripe_size, N) < 0) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    for (uint32_t k = 0; k < N; k++) {
        char *p = tagg_sf_path_beside(f->path, k, N);
        int   fd;
        if (!p || !(ix->sub[k].name = tagg_sf_default_name(f->path, k, N))) {
            snprintf(err, ERRLEN, "out of memory");
            free(p);
            return -1;
        }
        if ((fd = tagg_sf_create(p, err, ERRLEN)) < 0 || close(fd) < 0) {
            free(p);
            return -1;
        }
        free(p);
    }
    return tagg_sf_index_write(f->path, ix, f->cfg.fsync, err, ERRLEN);
}

/* Opens path (a derived one) and checks its size against the index's. */
static int check_file(const char *index, const char *path, int closed, uint64_t want, const char *what, char *err)
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
    close(fd);
    if (rc < 0)
        return snprintf(err, ERRLEN, "%s '%s': %s", what, path, strerror(errno)), -1;
    if (closed && (uint64_t)st.st_size != want)
        return snprintf(err, ERRLEN,
                        "%s '%s' has %llu bytes, its index records %llu: changed or damaged since it was closed "
                        "(see tagg-fuse --check)",
                        what, path, (unsigned long long)st.st_size, (unsigned long long)want),
               -1;
    return 0;
}

/* Rank 0: reads an existing index (names checked), refuses a file left open
 * by a writer (unless salvage, read-only) and old formats for writing, and
 * checks that its subfiles are there. */
static int open_existing(tagg_file_t *f, tagg_sf_index_t *ix, int rewrite, char *err)
{
    char what[128];
    if (tagg_sf_index_read(f->path, ix, err, ERRLEN) < 0)
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
    if (ix->nvr) { /* the node-local subfiles are checked by their nodes (nvr_setup) */
        char *p = tagg_sf_path_meta(f->path);
        int   rc = p ? check_file(f->path, p, 0, 0, "the metadata file", err) : (snprintf(err, ERRLEN, "out of memory"), -1);
        free(p);
        if (rc < 0)
            return -1;
    }
    for (uint32_t k = 0; !ix->nvr && k < ix->count; k++) {
        char *p = tagg_sf_path_beside(f->path, k, ix->count);
        snprintf(what, sizeof what, "subfile %u", (unsigned)k);
        int rc = p ? check_file(f->path, p, ix->closed, ix->sub[k].size, what, err) : (snprintf(err, ERRLEN, "out of memory"), -1);
        free(p);
        if (rc < 0)
            return -1;
    }
    if (rewrite) { /* a writer has it: mark it open until close */
        ix->closed = 0;
        return tagg_sf_index_write(f->path, ix, f->cfg.fsync, err, ERRLEN);
    }
    return 0;
}

/* Collective, destination=nvr, after the index is known everywhere: which
 * ranks own which subfile, then each subfile's lowest owner creates it (new
 * file) or checks it (existing file), and its private directories. The first
 * failure's message reaches every rank. */
static int nvr_setup(tagg_file_t *f, sub_t *s, const char *nodes, int created)
{
    uint32_t N  = s->ix.count;
    int      rc = 0, minown = f->size;
    char     err[ERRLEN] = "";
    s->own  = calloc(N, sizeof *s->own);
    s->nown = calloc(N, sizeof *s->nown);
    s->mine = calloc(N, sizeof *s->mine);
    if (!s->own || !s->nown || !s->mine)
        return TAGG_ERR(TAGG_E_NOMEM, "out of memory"), -1; /* the caller agrees */
    for (uint32_t k = 0; k < N; k++) {
        if (!(s->own[k] = malloc((size_t)f->size * sizeof(int))))
            return TAGG_ERR(TAGG_E_NOMEM, "out of memory"), -1;
        for (int r = 0; r < f->size; r++)
            if (!strcmp(NODE_OF(nodes, r), s->ix.sub[k].node))
                s->own[k][s->nown[k]++] = r;
        s->mine[k] = !strcmp(NODE_OF(nodes, f->rank), s->ix.sub[k].node);
        if (s->nown[k] == 0) { /* every rank sees the same: the same error everywhere */
            TAGG_ERR(TAGG_E_IO,
                     "'%s': subfile %u is node-local on node '%s', where none of the %d ranks runs "
                     "(destination=nvr files are read on the nodes that wrote them; drain them first: drain=close "
                     "on those nodes, or tagg-fuse --drain)",
                     f->path, (unsigned)k, s->ix.sub[k].node, f->size);
            return -1;
        }
        minown = s->nown[k] < minown ? s->nown[k] : minown;
    }
    s->window = (int)N * minown;
    for (uint32_t k = 0; k < N && rc == 0; k++) {
        if (s->own[k][0] != f->rank)
            continue;
        int fd;
        if (tagg_sf_nvr_dirs(s->paths[k], s->ix.version, created, err, sizeof err) < 0)
            rc = -1;
        else if (created) {
            if ((fd = tagg_sf_create(s->paths[k], err, sizeof err)) < 0 || close(fd) < 0)
                rc = -1;
            else
                f->stats.nvr_opens++;
        }
        else {
            char        what[160];
            struct stat st;
            snprintf(what, sizeof what, "node-local subfile %u on node %s", (unsigned)k, s->ix.sub[k].node);
            if (lstat(s->paths[k], &st) < 0 && errno == ENOENT) {
                snprintf(err, sizeof err,
                         "node-local subfile %u of '%s' is missing on node %s: '%s': %s (node-local files do not "
                         "outlive the job or a reboot; drain them with drain=close or tagg-fuse --drain)",
                         (unsigned)k, f->path, s->ix.sub[k].node, s->paths[k], strerror(ENOENT));
                rc = -1;
            }
            else
            if (check_file(f->path, s->paths[k], s->ix.closed, s->ix.sub[k].size, what, err) < 0)
                rc = -1;
        }
        if (rc < 0 && created) {
            char tmp[ERRLEN];
            snprintf(tmp, sizeof tmp, "creating node-local subfile %u on node %s: %s", (unsigned)k, s->ix.sub[k].node, err);
            snprintf(err, sizeof err, "%s", tmp);
        }
    }
    if (agree_msg(f, rc, err, "opening the node-local subfiles") < 0)
        return -1;
    f->size_everywhere = 1;
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
    int      nodes = 0, rc = 0;
    uint64_t hdr[3] = {0, 0, 0}; /* rank 0's result (0 ok, 1 failed), length of what follows, created */
    char    *text = NULL, *names = NULL;
    size_t   len  = 0;
    sub_t   *s    = calloc(1, sizeof *s);
    int      nvr_create = (flags & TAGG_OPEN_CREAT) && f->cfg.destination == TAGG_DEST_NVR;
    if (s) {
        s->meta_fd = -1;
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
    if (nvr_create && gather_nodes(f, &names) < 0) {
        sub_free(s);
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
        else if ((flags & TAGG_OPEN_CREAT) && (!exists || (flags & TAGG_OPEN_TRUNC))) {
            rc     = create_files(f, &ix, f->cfg.subfiles ? (uint32_t)f->cfg.subfiles : (uint32_t)nodes, is_index,
                                  nvr_create ? names : NULL, err);
            hdr[2] = 1;
        }
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
    /* every rank gets rank 0's index text (names checked there), or its error message */
    int code = MPI_Bcast(hdr, 3, MPI_UINT64_T, 0, f->comm);
    if (code == MPI_SUCCESS && hdr[1] > (uint64_t)INT_MAX)
        hdr[0] = 1, hdr[1] = 0;
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
    else if (!(s->paths = calloc(s->ix.count, sizeof *s->paths)) || !(s->fd = malloc(s->ix.count * sizeof *s->fd)) ||
             (s->ix.nvr && !(s->meta_path = tagg_sf_path_meta(f->path))))
        TAGG_ERR(TAGG_E_NOMEM, "out of memory"), rc = -1;
    for (uint32_t k = 0; rc == 0 && k < s->ix.count; k++) {
        s->fd[k] = -1;
        if (!(s->paths[k] = tagg_sf_path_of(f->path, &s->ix, k)))
            TAGG_ERR(TAGG_E_NOMEM, "out of memory"), rc = -1;
    }
    free(text);
    s->writable = (flags & TAGG_OPEN_RDWR) != 0;
    s->limit    = !s->writable && s->ix.closed;
    s->verify   = !s->writable && f->cfg.verify && s->ix.closed;
    s->base_on  = s->writable && f->cfg.verify && !hdr[2] && s->ix.version >= TAGG_SF_VERSION_3;
    s->base_L   = s->ix.logical_size;
    /* the codec of this open: rank 0's (compression=auto reads the tiers file) */
    unsigned enc = rc == 0 && f->rank == 0 && s->writable && !s->ix.nvr ? tagg_compression_codec(&f->cfg, s->ix.stripe) : 0;
    if ((code = MPI_Bcast(&enc, 1, MPI_UNSIGNED, 0, f->comm)) != MPI_SUCCESS)
        TAGG_ERR_MPI("MPI_Bcast (compression)", code), rc = -1;
    if (rc == 0 && zsetup(f, s, enc) < 0)
        rc = -1;
    if (tagg_agree(f->comm, rc, "opening the subfiles") < 0) {
        free(names);
        sub_free(s);
        return -1;
    }
    /* node-local subfiles: every rank knows the index now (the same on all) */
    if (s->ix.nvr) {
        rc = names ? 0 : gather_nodes(f, &names);
        if (rc == 0)
            rc = tagg_agree(f->comm, nvr_setup(f, s, names, (int)hdr[2]), "opening the node-local subfiles");
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
        held_note(f->path, 1, &s->hdev, &s->hino), s->held = 1;
    f->store = s;
    return 0;
}

/* ------------------------------------------------------------ I/O */

/* The descriptor of subfile k, opened on first use. */
static int fd_of(tagg_file_t *f, uint32_t k, uint64_t off)
{
    sub_t *s = sub_of(f);
    if (s->ix.nvr && !s->mine[k]) { /* the node-ownership rule */
        f->stats.nvr_refused++;
        TAGG_ERR(TAGG_E_IO,
                 "destination=nvr: rank %d may not access address %llu of '%s': it is in node-local subfile %u on "
                 "node %s, another node. Raw data of node-local subfiles moves only in collective transfers "
                 "(H5FD_MPIO_COLLECTIVE), aggregated on the node that holds it",
                 f->rank, (unsigned long long)off, f->path, (unsigned)k, s->ix.sub[k].node);
        return -1;
    }
    if (s->fd[k] < 0) {
        char err[ERRLEN];
        if ((s->fd[k] = tagg_sf_open(s->paths[k], s->writable ? O_RDWR : O_RDONLY, err, sizeof err)) < 0)
            TAGG_ERR(TAGG_E_IO, "%ssubfile %u: %s", s->ix.nvr ? "node-local " : "", (unsigned)k, err);
        else if (s->ix.nvr)
            f->stats.nvr_opens++;
    }
    return s->fd[k];
}

/* The metadata file (node-local subfiles only), opened on first use. */
static int meta_fd_of(tagg_file_t *f)
{
    sub_t *s = sub_of(f);
    char   err[ERRLEN];
    if (s->meta_fd < 0 && (s->meta_fd = tagg_sf_open(s->meta_path, s->writable ? O_RDWR : O_RDONLY, err, sizeof err)) < 0)
        TAGG_ERR(TAGG_E_IO, "the metadata file: %s", err);
    return s->meta_fd;
}

/* One stripe of memory for checks and read-backs, allocated on first use. */
static char *vbuf_of(sub_t *s)
{
    if (!s->vbuf && !(s->vbuf = malloc((size_t)s->ix.stripe)))
        TAGG_ERR(TAGG_E_NOMEM, "out of memory (a stripe of %llu bytes for checksums)", (unsigned long long)s->ix.stripe);
    return s->vbuf;
}

/* Formats 1 and 2: the whole subfile (or metadata file, k = count) against
 * its size and CRC, the first time this rank reads it. */
static int verify_whole(tagg_file_t *f, int fd, uint32_t k, const char *name)
{
    sub_t                 *s   = sub_of(f);
    const tagg_sf_entry_t *e   = k < s->ix.count ? &s->ix.sub[k] : &s->ix.meta;
    uint64_t               crc = 0, at = 0;
    struct stat            st;
    if (!vbuf_of(s))
        return -1;
    if (fstat(fd, &st) < 0 || (uint64_t)st.st_size != e->size) {
        TAGG_ERR(TAGG_E_IO, "SIZE MISMATCH: '%s' has %llu bytes, the index records %llu (see tagg-fuse --check)", name,
                 (unsigned long long)st.st_size, (unsigned long long)e->size);
        return -1;
    }
    while (at < e->size) {
        size_t n = e->size - at < s->ix.stripe ? (size_t)(e->size - at) : (size_t)s->ix.stripe;
        if (tagg_sf_pread_upto(fd, s->vbuf, n, at, e->size) < 0) {
            TAGG_ERR(TAGG_E_IO, "reading '%s' at %llu: %s", name, (unsigned long long)at, strerror(errno));
            return -1;
        }
        crc = tagg_crc64(crc, s->vbuf, n);
        at += n;
    }
    if (crc != e->crc) {
        TAGG_ERR(TAGG_E_IO,
                 "CHECKSUM MISMATCH in '%s': crc64 %016llx, the index records %016llx (changed or damaged after it was "
                 "written; see tagg-fuse --check)",
                 name, (unsigned long long)crc, (unsigned long long)e->crc);
        return -1;
    }
    return 0;
}

/* The padded CRC form (crc_shift.h) stripe j of space sp had when this
 * read-write open began, as far as this open's cuts left it: zeros past a
 * cut or the old end, else its record (a hole: zeros). */
static uint64_t base_form(const sub_t *s, int sp, uint64_t j)
{
    uint64_t S = s->ix.stripe;
    if ((s->cut != UINT64_MAX && j * S >= s->cut) || j * S >= s->base_L)
        return 0;
    const tagg_sf_stripe_t *r  = tagg_sf_stripe_find(sp ? s->ix.mst : s->ix.st, sp ? s->ix.nmst : s->ix.nst, j);
    uint64_t                L0 = tagg_sf_stripe_len(s->base_L, S, j);
    return r ? tagg_crc_pad(r->crc, L0, S) : 0;
}

/* A read of a read-write open (base_on), the first of stripe j by a rank
 * that has not written it: the whole slot's logical bytes (a compressed one
 * decoded, its own header's CRC checked) against the base. A mismatch is
 * noted (suspect) and judged at close, when every rank's writes are known;
 * the read returns what the slot holds. */
static int zread(tagg_file_t *f, int fd, uint32_t k, uint64_t j, uint64_t local, uint64_t n, char *buf, const char *name,
                 uint64_t limit);
static int read_base_checked(tagg_file_t *f, int fd, uint32_t k, int sp, uint64_t j, uint64_t local, uint64_t n,
                             char *buf, const char *name)
{
    sub_t   *s = sub_of(f);
    uint64_t S = s->ix.stripe, key = 2 * j + (uint64_t)sp, base = sp ? j * S : local - local % S;
    if (!vbuf_of(s))
        return -1;
    int zr = !sp && s->zmay ? zread(f, fd, k, j, base, S, s->vbuf, name, UINT64_MAX) : 0;
    if (zr < 0)
        return -1;
    if (!zr && tagg_sf_pread_upto(fd, s->vbuf, (size_t)S, base, UINT64_MAX) < 0) {
        TAGG_ERR(TAGG_E_IO, "read of stripe %llu of '%s' failed: %s", (unsigned long long)j, name, strerror(errno));
        return -1;
    }
    uint64_t form = tagg_crc_pad(tagg_crc64(0, s->vbuf, (size_t)S), S, S);
    if (tagg_notes_put(&s->checked, key, form == base_form(s, sp, j) ? NOTE_VERIFIED : NOTE_SUSPECT, 0) < 0)
        return TAGG_ERR(TAGG_E_NOMEM, "out of memory"), -1;
    memcpy(buf, s->vbuf + (local - base), (size_t)n);
    return 0;
}

/* A read of a read-only open: n bytes at local in fd, stripe j of space sp
 * (0 data, 1 metadata file), never past the recorded size; verified the first
 * time this rank reads the stripe. */
static int read_checked(tagg_file_t *f, int fd, uint32_t k, int sp, uint64_t j, uint64_t local, uint64_t n, char *buf,
                        const char *name)
{
    sub_t   *s     = sub_of(f);
    uint64_t S     = s->ix.stripe;
    uint64_t limit = !s->limit ? UINT64_MAX : sp ? s->ix.meta.size : s->ix.sub[k].size;
    if (s->base_on && !tagg_notes_get(&s->checked, 2 * j + (uint64_t)sp) &&
        !tagg_notes_get(&s->written, 2 * j + (uint64_t)sp))
        return read_base_checked(f, fd, k, sp, j, local, n, buf, name);
    int      zr    = !sp && s->zmay ? zread(f, fd, k, j, local, n, buf, name, limit) : 0; /* compressed stripes */
    if (zr)
        return zr < 0 ? -1 : 0;
    if (s->verify && s->ix.version < TAGG_SF_VERSION_3) { /* old formats: whole files */
        uint64_t key = UINT64_MAX / 2 - (sp ? s->ix.count : k);
        if (!tagg_notes_get(&s->checked, key)) {
            if (verify_whole(f, fd, sp ? s->ix.count : k, name) < 0)
                return -1;
            if (tagg_notes_put(&s->checked, key, NOTE_VERIFIED, 0) < 0)
                return TAGG_ERR(TAGG_E_NOMEM, "out of memory"), -1;
        }
    }
    else if (s->verify && !tagg_notes_get(&s->checked, 2 * j + (uint64_t)sp)) {
        if (!vbuf_of(s))
            return -1;
        uint64_t slen = tagg_sf_stripe_len(s->ix.logical_size, S, j), base = sp ? j * S : local - local % S, got;
        if (slen) {
            if (tagg_sf_pread_upto(fd, s->vbuf, (size_t)slen, base, limit) < 0) {
                TAGG_ERR(TAGG_E_IO, "read of stripe %llu of '%s' failed: %s", (unsigned long long)j, name, strerror(errno));
                return -1;
            }
            const tagg_sf_stripe_t *st = sp ? s->ix.mst : s->ix.st;
            uint64_t                nst = sp ? s->ix.nmst : s->ix.nst;
            if (!tagg_sf_stripe_ok(st, nst, j, s->vbuf, (size_t)slen, &got)) {
                const tagg_sf_stripe_t *r = tagg_sf_stripe_find(st, nst, j);
                char                    what[40];
                if (sp)
                    snprintf(what, sizeof what, "metadata file");
                else
                    snprintf(what, sizeof what, "subfile %u", (unsigned)k);
                TAGG_ERR(TAGG_E_IO,
                         "CHECKSUM MISMATCH %s '%s', stripe %llu (its bytes %llu..%llu): crc64 %016llx, the index "
                         "records %s%016llx (the file was changed or damaged after it was written; see tagg-fuse --check; "
                         "verify=0 skips the check)",
                         what, name, (unsigned long long)j, (unsigned long long)base,
                         (unsigned long long)(base + slen - 1), (unsigned long long)got, r ? "crc64 " : "a hole (zeros), not ",
                         (unsigned long long)(r ? r->crc : got));
                return -1;
            }
            if (tagg_notes_put(&s->checked, 2 * j + (uint64_t)sp, NOTE_VERIFIED, 0) < 0)
                return TAGG_ERR(TAGG_E_NOMEM, "out of memory"), -1;
            uint64_t in = local - base; /* the piece from the verified copy */
            if (in < slen)
                memcpy(buf, s->vbuf + in, (size_t)(n < slen - in ? n : slen - in));
            if (in + n > slen)
                memset(buf + (in < slen ? slen - in : 0), 0, (size_t)(in + n - (in > slen ? in : slen)));
            return 0;
        }
    }
    if (tagg_sf_pread_upto(fd, buf, (size_t)n, local, limit) < 0) {
        TAGG_ERR(TAGG_E_IO, "read of %llu bytes at offset %llu of '%s' failed: %s", (unsigned long long)n,
                 (unsigned long long)local, name, strerror(errno));
        return -1;
    }
    return 0;
}

/* Compression hooks (sf_stripe_codec.h). A write of n bytes at local of
 * data stripe j: a whole stripe goes through the codec, a partial one expands
 * a compressed stripe first. 1 done (*form: the stored form), 0 not this
 * hook's (write raw as usual), -1 failed. */
static int zwrite(tagg_file_t *f, int fd, uint64_t j, uint64_t local, uint64_t n, const char *buf, uint64_t crc,
                  uint64_t *form, const char *name, char *old)
{
    sub_t   *s = sub_of(f);
    uint64_t S = s->ix.stripe, base = local - local % S;
    char     err[ERRLEN];
    int      expanded = 0, rc;
    if (!s->zmay)
        return 0;
    if (n == S && local % S == 0) {
        if (!s->z.enc) /* raw, over whatever the slot held */
            return 0;
        rc = tagg_sfz_put_whole(&s->z, fd, base, buf, (size_t)n, crc, form, err, sizeof err);
        if (rc == 0) {
            __atomic_add_fetch(&f->stats.comp_logical, n, __ATOMIC_RELAXED);
            __atomic_add_fetch(&f->stats.comp_stored, *form ? TAGG_SFZ_FORM_STORED(*form) : n, __ATOMIC_RELAXED);
            __atomic_add_fetch(*form ? &f->stats.comp_stripes : &f->stats.comp_raw, 1, __ATOMIC_RELAXED);
        }
    }
    else
        rc = tagg_sfz_put_part(&s->z, fd, base, S, local % S, buf, (size_t)n, old, &expanded, err, sizeof err);
    if (rc < 0) {
        TAGG_ERR(TAGG_E_IO, "stripe %llu of subfile '%s' (compression): %s", (unsigned long long)j, name, err);
        return -1;
    }
    return 1;
}

/* A read of n bytes at local of data stripe j (read_checked): 1 done from a
 * compressed stripe, 0 raw (read as usual), -1 failed (damaged: the message
 * names the subfile and stripe). A closed file read-only: the index says
 * which stripes are compressed; an open one: the slot's header does. */
static int zread(tagg_file_t *f, int fd, uint32_t k, uint64_t j, uint64_t local, uint64_t n, char *buf, const char *name,
                 uint64_t limit)
{
    sub_t   *s = sub_of(f);
    uint64_t S = s->ix.stripe, base = local - local % S, form = 0;
    char     err[ERRLEN] = "";
    int      rc = 0;
    if (s->limit) { /* closed, read-only: by the index, decoded once per stripe */
        const tagg_sf_stripe_t *r = tagg_sf_stripe_find(s->ix.st, s->ix.nst, j);
        if (!r || !r->form)
            return 0;
        if (!s->zbuf && !(s->zbuf = malloc(2 * (size_t)S)))
            return TAGG_ERR(TAGG_E_NOMEM, "out of memory (decompression buffers)"), -1;
        if (s->zj != j + 1) {
            s->zj = 0;
            rc    = tagg_sfz_load_form(fd, base, (size_t)S, limit, r->form, r->crc, s->zbuf, s->zbuf + S, err, sizeof err);
            form  = r->form;
            if (rc == 0)
                s->zj = j + 1;
        }
        else
            form = r->form;
    }
    else { /* an open file: probe the slot's header first (raw stripes cost 40 bytes more) */
        /* under a shared lock on the slot: another rank's (or thread's)
         * expansion of it is never seen half done */
        unsigned char h[TAGG_SFZ_HDR];
        unsigned      enc;
        uint64_t      lg, pl, crc;
        int           probe;
        if (!s->zbuf && !(s->zbuf = malloc(2 * (size_t)S)))
            return TAGG_ERR(TAGG_E_NOMEM, "out of memory (decompression buffers)"), -1;
        pthread_mutex_lock(&s->z.mu);
        if (tagg_sfz_slot_lock(fd, base, S, 2) < 0) {
            pthread_mutex_unlock(&s->z.mu);
            return TAGG_ERR(TAGG_E_IO, "cannot lock stripe %llu of '%s': %s", (unsigned long long)j, name,
                            strerror(errno)),
                   -1;
        }
        if ((probe = tagg_sf_pread_upto(fd, h, sizeof h, base, limit)) < 0)
            TAGG_ERR(TAGG_E_IO, "read of stripe %llu of '%s' failed: %s", (unsigned long long)j, name, strerror(errno));
        else if (tagg_sfz_header(h, &enc, &lg, &pl, &crc) && lg == S) {
            s->zj = 0; /* other ranks write: no cache */
            rc    = tagg_sfz_slot_load(fd, base, (size_t)S, limit, s->zbuf, s->zbuf + S, &form, err, sizeof err);
            probe = 1;
        }
        tagg_sfz_slot_lock(fd, base, S, 0);
        pthread_mutex_unlock(&s->z.mu);
        if (probe <= 0)
            return probe; /* -1 failed, 0 raw */
    }
    if (rc < 0) {
        TAGG_ERR(TAGG_E_IO,
                 "subfile %u '%s', stripe %llu (compressed%s%s, file addresses %llu..%llu): %s (the file was changed or "
                 "damaged after it was written; see tagg-fuse --check)",
                 (unsigned)k, name, (unsigned long long)j, form ? ", " : "",
                 form ? tagg_sfz_name(TAGG_SFZ_FORM_ENC(form)) : "", (unsigned long long)(j * S),
                 (unsigned long long)(j * S + S - 1), err);
        return -1;
    }
    if (!form)
        return 0;
    memcpy(buf, s->zbuf + local % S, (size_t)n);
    return 1;
}

/* Moves one piece that lies within one stripe. */
static int piece(tagg_file_t *f, uint64_t off, uint64_t n, char *buf, tagg_dir_t dir)
{
    sub_t   *s = sub_of(f);
    uint32_t k;
    uint64_t local, S = s->ix.stripe, j = off / S;
    int      fd, sp = s->ix.nvr && f->io_meta;
    const char *name;
    tagg_sf_locate(off, S, s->ix.count, &k, &local);
    if (sp) /* metadata: the shared metadata file, at the logical address */
        fd = meta_fd_of(f), local = off, name = s->meta_path;
    else
        fd = fd_of(f, k, off), name = s->paths[k];
    if (fd < 0)
        return -1;
    if (dir == TAGG_READ) {
        pthread_mutex_lock(&s->mu);
        int rc = read_checked(f, fd, k, sp, j, local, n, buf, name);
        pthread_mutex_unlock(&s->mu);
        return rc;
    }
    if (s->ix.nvr && tagg_fault("nvr_write", f->rank)) {
        TAGG_ERR(TAGG_E_IO, "write of %llu bytes at offset %llu of '%s' failed: %s (injected by TAGG_FAULT)",
                 (unsigned long long)n, (unsigned long long)local, name, strerror(ENOSPC));
        return -1;
    }
    /* the note: a whole stripe brings its checksum (and stored form), anything
     * else re-reads it at close; in a read-write open of a closed file a
     * partial write brings the change it makes (the logical bytes it replaces
     * are read first: a compressed stripe decoded) */
    int      full  = off % S == 0 && n == S;
    uint64_t crc   = full ? tagg_crc64(0, buf, (size_t)n) : 0, delta = 0, form = 0;
    char *old = NULL; /* the logical bytes a partial write replaces (read-write open of a closed file) */
    if (!full && s->base_on && !(old = malloc((size_t)n))) {
        TAGG_ERR(TAGG_E_NOMEM, "out of memory (%llu bytes to check a rewrite)", (unsigned long long)n);
        return -1;
    }
    /* raw slots: read here; possibly compressed ones: by the codec, under the slot's lock */
    if (old && (sp || !s->zmay) && tagg_sf_pread_upto(fd, old, (size_t)n, local, UINT64_MAX) < 0) {
        TAGG_ERR(TAGG_E_IO, "read of the %llu bytes at offset %llu of '%s' before rewriting them failed: %s",
                 (unsigned long long)n, (unsigned long long)local, name, strerror(errno));
        free(old);
        return -1;
    }
    int zr = sp ? 0 : zwrite(f, fd, j, local, n, buf, crc, &form, name, old); /* compression: 1 done, -1 failed */
    if (zr < 0) {
        free(old);
        return -1;
    }
    if (old) {
        delta = tagg_crc_delta(tagg_crc64(0, old, (size_t)n), tagg_crc64(0, buf, (size_t)n), off % S, n, S);
        free(old);
    }
    for (uint64_t done = 0; !zr && done < n;) {
        ssize_t got = pwrite(fd, buf + done, n - done, (off_t)(local + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            TAGG_ERR(TAGG_E_IO, "write of %llu bytes at offset %llu of subfile '%s' (address %llu) %s: %s",
                     (unsigned long long)(n - done), (unsigned long long)(local + done), name,
                     (unsigned long long)(off + done), got == 0 ? "wrote nothing" : "failed",
                     got == 0 ? "short write (no space?)" : strerror(errno));
            return -1;
        }
        done += (uint64_t)got;
    }
    pthread_mutex_lock(&s->mu);
    int rc = tagg_notes_write(&s->written, 2 * j + (uint64_t)sp, full, crc, form, delta);
    pthread_mutex_unlock(&s->mu);
    if (rc < 0)
        TAGG_ERR(TAGG_E_NOMEM, "out of memory (noting written stripes)");
    return rc;
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

static int subfile_size(tagg_file_t *f, uint32_t k, uint64_t *size)
{
    sub_t *s = sub_of(f);
    errno    = 0;
    return file_size(s->fd[k], s->paths[k], "subfile", size);
}

/* The rank that sizes, checksums and drains subfile k: for node-local
 * subfiles its node's lowest rank, else rank k mod size. */
static int keeper(const tagg_file_t *f, const sub_t *s, uint32_t k)
{
    return s->ix.nvr ? s->own[k][0] : (int)(k % (uint32_t)f->size);
}

/* Size of the metadata file (node-local subfiles). */
static int meta_size(tagg_file_t *f, uint64_t *size)
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
        if (s->ix.nvr && keeper(f, s, k) != f->rank)
            continue;
        if (subfile_size(f, k, &n) < 0)
            return -1;
        if (s->limit && n > s->ix.sub[k].size)
            n = s->ix.sub[k].size;
        uint64_t e = tagg_sf_logical_end(n, s->ix.stripe, s->ix.count, k);
        end        = e > end ? e : end;
    }
    if (s->ix.nvr && f->rank == 0) {
        if (meta_size(f, &n) < 0)
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
    if (!vbuf_of(s))
        return -1;
    if (own && (fd = tagg_sf_open(path, O_RDONLY, err, sizeof err)) < 0)
        return TAGG_ERR(TAGG_E_IO, "cannot set the size: %s", err), -1;
    if (tagg_sf_pread_upto(fd, s->vbuf, (size_t)t, slot + at, UINT64_MAX) < 0)
        rc = -1, TAGG_ERR(TAGG_E_IO, "reading the end of '%s' before cutting it: %s", path, strerror(errno));
    else {
        uint64_t d = tagg_crc_delta(tagg_crc64(0, s->vbuf, (size_t)t), tagg_crc_zeros(t), at, t, S);
        pthread_mutex_lock(&s->mu);
        if (tagg_notes_write(&s->written, 2 * (size / S) + (uint64_t)sp, 0, 0, 0, d) < 0)
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
    int    fd = fd_of(f, k, base);
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
        if (keeper(f, s, k) != f->rank)
            continue;
        uint64_t want = tagg_sf_subfile_size(size, S, s->ix.count, k);
        int end = size % S && (size / S) % s->ix.count == k;
        if (s->zmay && end && zexpand(f, k, want - want % S) < 0)
            rc = -1; /* a cut through a compressed stripe: expanded first, so note_cut reads logical bytes */
        else if (end && note_cut(f, s->fd[k], s->paths[k], 0, size, (size / S / s->ix.count) * S) < 0)
            rc = -1;
        else if (cut_file(s->fd[k], s->paths[k], want, "subfile") < 0)
            rc = -1;
    }
    /* the metadata file is only ever cut: extending it would make a sparse copy
     * as long as the file; the raw subfiles already carry the logical size */
    uint64_t msize = 0;
    if (s->ix.nvr && f->rank == 0 && meta_size(f, &msize) < 0)
        rc = -1;
    else if (s->ix.nvr && f->rank == 0 && msize > size &&
             (note_cut(f, s->meta_fd, s->meta_path, 1, size, size - size % S) < 0 ||
              cut_file(s->meta_fd, s->meta_path, size, "the metadata file") < 0))
        rc = -1;
    pthread_mutex_lock(&s->mu);
    tagg_notes_cut(&s->written, size / S + (size % S != 0));
    tagg_notes_cut(&s->checked, size / S + (size % S != 0));
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

/* ------------------------------------------------------------ close: the final index */

enum { NOTE_WORDS = 4 }; /* a gathered note: key, state, crc, delta */

/* By key; a key's writes before its suspects. */
static int cmp_note(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    int             sx = NOTE_KIND(x[1]) == NOTE_SUSPECT, sy = NOTE_KIND(y[1]) == NOTE_SUSPECT;
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : sx - sy;
}

/* What close learns from the merged notes (rank 0). */
typedef struct {
    tagg_sf_stripe_t *out[2]; /* records final now (both spaces) */
    uint64_t          nout[2];
    uint64_t         *dirty; /* keys of stripes to read back */
    uint64_t         *expect; /* [nd] the padded form each must have (read-write opens of closed files) */
    uint8_t          *chk;    /* [nd] expect[] applies */
    uint64_t          nd, dcap;
    uint64_t          nsuspect, suspect; /* stripes read unlike their base that nobody wrote; the first key */
} merged_t;

static int add_dirty(merged_t *m, uint64_t key, int chk, uint64_t expect)
{
    if (m->nd == m->dcap) {
        uint64_t  c  = m->dcap ? 2 * m->dcap : 64;
        uint64_t *t  = realloc(m->dirty, (size_t)c * sizeof *t);
        uint64_t *e  = t ? realloc(m->expect, (size_t)c * sizeof *e) : NULL;
        uint8_t  *ck = e ? realloc(m->chk, (size_t)c) : NULL;
        if (t)
            m->dirty = t;
        if (e)
            m->expect = e;
        if (!ck)
            return -1;
        m->chk = ck, m->dcap = c;
    }
    m->expect[m->nd] = expect, m->chk[m->nd] = (uint8_t)chk;
    m->dirty[m->nd++] = key;
    return 0;
}

/* Is key noted as written (binary search over the sorted notes)? */
static int noted(const uint64_t *notes, uint64_t nn, uint64_t key)
{
    uint64_t lo = 0, hi = nn;
    while (lo < hi) {
        uint64_t mid = (lo + hi) / 2;
        if (notes[NOTE_WORDS * mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < nn && notes[NOTE_WORDS * lo] == key && NOTE_KIND(notes[NOTE_WORDS * lo + 1]) != NOTE_SUSPECT;
}

static int merge_notes(sub_t *s, uint64_t *notes, uint64_t nn, uint64_t L, merged_t *m)
{
    uint64_t S = s->ix.stripe, top = L / S + (L % S != 0);
    qsort(notes, (size_t)nn, NOTE_WORDS * sizeof *notes, cmp_note);
    for (int sp = 0; sp < 2; sp++) { /* untouched stripes keep their record (wholly below every cut) */
        const tagg_sf_stripe_t *old  = sp ? s->ix.mst : s->ix.st;
        uint64_t                nold = sp ? s->ix.nmst : s->ix.nst;
        for (uint64_t i = 0; i < nold; i++) {
            uint64_t j = old[i].j, key = 2 * j + (uint64_t)sp;
            if (j >= top || (s->cut != UINT64_MAX && (j + 1) * S > s->cut) || noted(notes, nn, key))
                continue;
            /* the old last stripe, partial then, is longer now: its record no longer covers it */
            if (tagg_sf_stripe_len(s->ix.logical_size, S, j) != tagg_sf_stripe_len(L, S, j)) {
                if (add_dirty(m, key, s->base_on, s->base_on ? base_form(s, sp, j) : 0) < 0)
                    return -1;
                continue;
            }
            if (tagg_sf_stripe_append_form(&m->out[sp], &m->nout[sp], j, old[i].crc, old[i].form) < 0)
                return -1;
        }
    }
    for (uint64_t i = 0; i < nn;) {
        uint64_t key = notes[NOTE_WORDS * i], e = i, writers = 0, dx = 0;
        int      dirty_ = 0, hadfull = 0, suspect = 0;
        for (; e < nn && notes[NOTE_WORDS * e] == key; e++) {
            uint64_t st = notes[NOTE_WORDS * e + 1];
            if (NOTE_KIND(st) == NOTE_SUSPECT) {
                suspect = 1;
                continue;
            }
            writers++;
            dirty_ |= NOTE_KIND(st) != NOTE_FULL;
            hadfull |= (st & NOTE_HADFULL) != 0;
            dx ^= notes[NOTE_WORDS * e + 3];
        }
        dirty_ |= writers > 1; /* several ranks wrote it: their order is unknown */
        uint64_t j  = key / 2;
        int      sp = (int)(key % 2);
        if (!writers) { /* read unlike its base, and nobody changed it: damage */
            if (suspect && !m->nsuspect++)
                m->suspect = key;
        }
        else if (j < top) {
            if (dirty_) {
                int chk = s->base_on && !hadfull;
                if (add_dirty(m, key, chk, chk ? base_form(s, sp, j) ^ dx : 0) < 0)
                    return -1;
            }
            else if (tagg_sf_stripe_append_form(&m->out[sp], &m->nout[sp], j, notes[NOTE_WORDS * i + 2],
                                                notes[NOTE_WORDS * i + 1] >> 8) < 0)
                return -1;
        }
        i = e;
    }
    return 0;
}

/* The message of a close that found damage (rank 0): stripes changed outside
 * this open, seen by its reads or under its partial writes. */
static void damage_msg(tagg_file_t *f, uint64_t nbad, uint64_t bad, uint64_t nsus, uint64_t sus, char *err)
{
    sub_t   *s   = sub_of(f);
    uint64_t key = nbad ? bad : sus, j = key / 2;
    char     where[600];
    if (key % 2)
        snprintf(where, sizeof where, "the metadata file '%s', stripe %llu", s->meta_path, (unsigned long long)j);
    else
        snprintf(where, sizeof where, "subfile %u '%s', stripe %llu", (unsigned)(j % s->ix.count),
                 s->paths[j % s->ix.count], (unsigned long long)j);
    snprintf(err, ERRLEN,
             "CHECKSUM MISMATCH found at close of '%s': %llu stripe(s) did not hold what the index recorded when this "
             "read-write open began (damaged or changed outside tagg; first: %s). %s The index keeps checksums that "
             "fail every later read of them; see tagg-fuse --check",
             f->path, (unsigned long long)(nbad + nsus), where,
             nsus ? "Reads of them in this open returned those bytes unverified." :
                    "This open's partial writes to them were applied over the damaged bytes.");
}

/* Collective, writers only: the subfile sizes (stat by their keepers), the
 * per-stripe checksums (the ranks' notes, dirty stripes read back by their
 * keepers), then rank 0 writes the final index. Every rank ends with the final
 * index in s->ix when drain needs it. */
static int write_index(tagg_file_t *f, int want_final)
{
    sub_t           *s = sub_of(f);
    uint32_t         N = s->ix.count;
    uint64_t         S = s->ix.stripe, L = 0;
    size_t           n = (size_t)N + 1; /* the last: the metadata file */
    uint64_t        *mine = calloc(n, sizeof *mine), *all = calloc(n, sizeof *all);
    uint64_t        *notes = NULL, *allnotes = NULL, *dirty = NULL, nd = 0, *res = NULL, *allres = NULL;
    uint64_t         nbad = 0, bad = 0;
    merged_t         mg;
    int             *counts = NULL, *displs = NULL, *rfd = NULL;
    char             err[ERRLEN] = "", *text = NULL;
    int              rc = mine && all ? 0 : -1, code;
    size_t           tlen = 0;
    memset(&mg, 0, sizeof mg);
    if (rc < 0)
        snprintf(err, sizeof err, "out of memory");
    for (uint32_t k = 0; rc == 0 && k < N; k++)
        if (keeper(f, s, k) == f->rank && subfile_size(f, k, &mine[k]) < 0)
            rc = -1, snprintf(err, sizeof err, "cannot stat subfile %u", (unsigned)k);
    if (rc == 0 && s->ix.nvr && f->rank == 0 && meta_size(f, &mine[N]) < 0)
        rc = -1, snprintf(err, sizeof err, "cannot stat the metadata file");
    if (agree_msg(f, rc, err, "sizing the subfiles") < 0)
        goto done;
    if ((code = MPI_Allreduce(mine, all, (int)n, MPI_UINT64_T, MPI_BOR, f->comm)) != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allreduce (subfile sizes)", code);
        rc = -1;
        goto done;
    }
    for (uint32_t k = 0; k < N; k++) {
        uint64_t e = tagg_sf_logical_end(all[k], S, N, k);
        L          = e > L ? e : L;
    }
    if (s->ix.nvr)
        L = all[N] > L ? all[N] : L;

    /* the notes (writes, and reads that did not match their base), to rank 0 */
    size_t nsus = 0;
    for (size_t i = 0; i < s->checked.cap; i++)
        nsus += s->checked.key[i] && NOTE_KIND(s->checked.state[i]) == NOTE_SUSPECT;
    int m = (int)((s->written.n + nsus) * NOTE_WORDS), nn = 0;
    notes = malloc(((size_t)m + 1) * sizeof *notes);
    if (f->rank == 0 && (!(counts = malloc((size_t)f->size * sizeof *counts)) ||
                         !(displs = malloc((size_t)f->size * sizeof *displs))))
        rc = -1;
    size_t w = 0;
    for (size_t i = 0; notes && i < s->written.cap; i++)
        if (s->written.key[i])
            notes[w++] = s->written.key[i] - 1, notes[w++] = s->written.state[i] | s->written.form[i] << 8,
            notes[w++] = s->written.crc[i], notes[w++] = s->written.delta[i]; /* state | stored form << 8 */
    for (size_t i = 0; notes && i < s->checked.cap; i++)
        if (s->checked.key[i] && NOTE_KIND(s->checked.state[i]) == NOTE_SUSPECT)
            notes[w++] = s->checked.key[i] - 1, notes[w++] = NOTE_SUSPECT, notes[w++] = 0, notes[w++] = 0;
    if (tagg_agree(f->comm, notes && rc == 0 ? 0 : -1, "gathering the stripe notes") < 0) {
        rc = -1;
        goto done;
    }
    MPI_Gather(&m, 1, MPI_INT, counts, 1, MPI_INT, 0, f->comm);
    if (f->rank == 0) {
        for (int r = 0; r < f->size; r++)
            displs[r] = nn, nn += counts[r];
        if (!(allnotes = malloc(((size_t)nn + 1) * sizeof *allnotes)))
            rc = -1;
    }
    if (tagg_agree(f->comm, rc, "gathering the stripe notes") < 0)
        goto done;
    if ((code = MPI_Gatherv(notes, m, MPI_UINT64_T, allnotes, counts, displs, MPI_UINT64_T, 0, f->comm)) != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Gatherv (stripe notes)", code);
        rc = -1;
        goto done;
    }
    if (f->rank == 0 && merge_notes(s, allnotes, (uint64_t)nn / NOTE_WORDS, L, &mg) < 0)
        rc = -1, snprintf(err, sizeof err, "out of memory");
    dirty = mg.dirty, nd = mg.nd, mg.dirty = NULL;
    if (agree_msg(f, rc, err, "merging the stripe notes") < 0)
        goto done;

    /* the dirty stripes, read back by their keepers */
    if ((code = MPI_Bcast(&nd, 1, MPI_UINT64_T, 0, f->comm)) != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Bcast (dirty stripes)", code);
        rc = -1;
        goto done;
    }
    if (f->rank != 0 && nd && !(dirty = malloc((size_t)nd * sizeof *dirty)))
        rc = -1;
    if (nd && !vbuf_of(s))
        rc = -1;
    res    = calloc(3 * (size_t)nd + 1, sizeof *res);
    allres = calloc(3 * (size_t)nd + 1, sizeof *allres);
    rfd    = malloc(((size_t)N + 1) * sizeof *rfd);
    if (!res || !allres || !rfd)
        rc = -1;
    if (tagg_agree(f->comm, rc, "reading back the dirty stripes") < 0)
        goto done;
    for (uint32_t k = 0; k <= N; k++)
        rfd[k] = -1;
    if (nd && (code = MPI_Bcast(dirty, (int)nd, MPI_UINT64_T, 0, f->comm)) != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Bcast (dirty stripes)", code);
        rc = -1;
        goto done;
    }
    for (uint64_t i = 0; rc == 0 && i < nd; i++) {
        uint64_t j = dirty[i] / 2, len = tagg_sf_stripe_len(L, S, j), local;
        int      sp = (int)(dirty[i] % 2);
        uint32_t k  = (uint32_t)(j % N), slot = sp ? N : k;
        if (sp ? (int)(j % (uint64_t)f->size) != f->rank : keeper(f, s, k) != f->rank)
            continue;
        const char *path = sp ? s->meta_path : s->paths[k];
        local            = sp ? j * S : (j / N) * S;
        if (rfd[slot] < 0 && (rfd[slot] = tagg_sf_open(path, O_RDONLY, err, sizeof err)) < 0) {
            rc = -1;
            break;
        }
        uint64_t form = 0;
        if (!sp && s->zmay) { /* the slot says whether it is compressed (sf_stripe_codec.h) */
            char zerr[ERRLEN];
            if (!s->zbuf && !(s->zbuf = malloc(2 * (size_t)S)))
                snprintf(zerr, sizeof zerr, "out of memory"), rc = -1;
            else if (tagg_sfz_slot_load(rfd[slot], local, (size_t)len, UINT64_MAX, s->vbuf, s->zbuf, &form, zerr,
                                        sizeof zerr) < 0)
                rc = -1;
            if (rc < 0) {
                snprintf(err, sizeof err, "reading back stripe %llu of '%.400s': %.500s", (unsigned long long)j, path, zerr);
                break;
            }
        }
        else if (tagg_sf_pread_upto(rfd[slot], s->vbuf, (size_t)len, local, UINT64_MAX) < 0) {
            snprintf(err, sizeof err, "reading back stripe %llu of '%s': %s", (unsigned long long)j, path, strerror(errno));
            rc = -1;
            break;
        }
        if (form || !tagg_sf_all_zero(s->vbuf, (size_t)len)) /* a compressed slot is never a hole */
            res[3 * i] = tagg_crc64(0, s->vbuf, (size_t)len), res[3 * i + 1] = 1, res[3 * i + 2] = form;
    }
    for (uint32_t k = 0; k <= N; k++)
        if (rfd[k] >= 0)
            close(rfd[k]);
    if (agree_msg(f, rc, err, "checksumming the written stripes") < 0)
        goto done;
    if (nd && (code = MPI_Reduce(res, allres, (int)(3 * nd), MPI_UINT64_T, MPI_BOR, 0, f->comm)) != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Reduce (stripe checksums)", code);
        rc = -1;
        goto done;
    }

    /* rank 0: the final index; a re-read stripe that is not its base plus
     * this open's changes keeps the checksum it should have */
    if (f->rank == 0) {
        tagg_sf_stripe_t **out = mg.out;
        uint64_t          *nout = mg.nout;
        for (uint64_t i = 0; rc == 0 && i < nd; i++) {
            uint64_t j = dirty[i] / 2, len = tagg_sf_stripe_len(L, S, j), form = allres[3 * i + 2];
            uint64_t crc = allres[3 * i + 1] ? allres[3 * i] : tagg_crc_zeros(len);
            int      sp = (int)(dirty[i] % 2), damaged = mg.chk[i] && tagg_crc_pad(crc, len, S) != mg.expect[i];
            if (damaged && !nbad++)
                bad = dirty[i];
            if (damaged)
                crc = tagg_crc_unpad(mg.expect[i], len, S);
            if ((allres[3 * i + 1] || damaged) && tagg_sf_stripe_append_form(&out[sp], &nout[sp], j, crc, form) < 0)
                rc = -1;
        }
        tagg_sf_stripes_sort(out[0], nout[0]);
        tagg_sf_stripes_sort(out[1], nout[1]);
        free(s->ix.st), free(s->ix.mst);
        s->ix.st = out[0], s->ix.nst = nout[0], s->ix.mst = out[1], s->ix.nmst = nout[1];
        out[0] = out[1] = NULL;
        for (uint32_t k = 0; k < N; k++)
            s->ix.sub[k].size = all[k];
        s->ix.meta.size    = all[N];
        s->ix.logical_size = L;
        s->ix.closed       = 1;
        s->ix.version      = TAGG_SF_VERSION_3;
        if (rc < 0)
            snprintf(err, sizeof err, "out of memory");
        else if (tagg_sf_index_write(f->path, &s->ix, f->cfg.fsync, err, sizeof err) < 0)
            rc = -1;
        else if (want_final && tagg_sf_index_format(&s->ix, &text, &tlen) < 0)
            snprintf(err, sizeof err, "out of memory"), rc = -1;
        else if (nbad || mg.nsuspect)
            damage_msg(f, nbad, bad, mg.nsuspect, mg.suspect, err), rc = -1;
    }
    if (agree_msg(f, rc, err, "writing the subfile index") < 0)
        goto done;
    if (want_final) { /* every rank: the final index (drain checks the stripes with it) */
        uint64_t tl = tlen;
        MPI_Bcast(&tl, 1, MPI_UINT64_T, 0, f->comm);
        if (f->rank != 0 && !(text = malloc(tl + 1)))
            rc = -1;
        if (tagg_agree(f->comm, rc, "sharing the final index") < 0)
            goto done;
        MPI_Bcast(text, (int)tl, MPI_CHAR, 0, f->comm);
        if (f->rank != 0) {
            tagg_sf_index_t nx;
            if (tagg_sf_index_parse(text, (size_t)tl, &nx, err, sizeof err) < 0)
                rc = -1;
            else {
                tagg_sf_index_free(&s->ix);
                s->ix = nx;
            }
        }
        rc = tagg_agree(f->comm, rc, "sharing the final index");
    }
done:
    free(mine), free(all), free(notes), free(allnotes), free(dirty), free(res), free(allres), free(rfd);
    free(counts), free(displs), free(mg.out[0]), free(mg.out[1]), free(mg.expect), free(mg.chk), free(mg.dirty), free(text);
    return rc;
}

/* Collective, drain=close of a closed file with node-local subfiles: each
 * keeper copies its node's subfile beside the index, metadata merged in and
 * every stripe verified (tagg_sf_drain_one), rank 0 replaces the index by an
 * ordinary format 3 one, then the node-local subfiles and the metadata file
 * go. On failure the copies are removed and the node-local file stays as it was. */
static int drain(tagg_file_t *f)
{
    sub_t            *s = sub_of(f);
    uint32_t          N = s->ix.count;
    uint64_t         *mine = calloc(N, sizeof *mine), *all = calloc(N, sizeof *all), nst = 0;
    tagg_sf_stripe_t *st = NULL, *allst = NULL;
    char            **out = calloc(N, sizeof *out);
    char              err[ERRLEN] = "";
    int               rc = mine && all && out ? 0 : -1, mfd = -1, *counts = NULL, *displs = NULL, tot = 0;
    tagg_sf_index_t   nx;
    memset(&nx, 0, sizeof nx);
    if (rc < 0)
        snprintf(err, sizeof err, "out of memory");
    for (uint32_t k = 0; rc == 0 && k < N; k++)
        if (!(out[k] = tagg_sf_path_beside(f->path, k, N)))
            snprintf(err, sizeof err, "out of memory"), rc = -1;
    for (uint32_t k = 0; rc == 0 && k < N; k++) {
        if (keeper(f, s, k) != f->rank)
            continue;
        if (mfd < 0 && (mfd = tagg_sf_open(s->meta_path, O_RDONLY, err, sizeof err)) < 0)
            rc = -1;
        else if (tagg_sf_drain_one(f->path, &s->ix, k, mfd, out[k], &mine[k], &st, &nst, err, sizeof err) < 0)
            rc = -1;
    }
    if (mfd >= 0)
        close(mfd);
    rc = agree_msg(f, rc, err, "draining the node-local subfiles (drain=close)");
    /* the records travel as words: a tagg_sf_stripe_t is SW uint64_t (j, crc, form) */
    enum { SW = sizeof(tagg_sf_stripe_t) / sizeof(uint64_t) };
    int code, m = (int)(SW * nst);
    if (rc == 0 && (code = MPI_Reduce(mine, all, (int)N, MPI_UINT64_T, MPI_BOR, 0, f->comm)) != MPI_SUCCESS)
        TAGG_ERR_MPI("MPI_Reduce (drained sizes)", code), rc = -1;
    if (rc == 0 && f->rank == 0 &&
        (!(counts = malloc((size_t)f->size * sizeof *counts)) || !(displs = malloc((size_t)f->size * sizeof *displs))))
        rc = -1;
    if (rc == 0)
        rc = tagg_agree(f->comm, rc, "gathering the drained checksums");
    if (rc == 0)
        MPI_Gather(&m, 1, MPI_INT, counts, 1, MPI_INT, 0, f->comm);
    if (rc == 0 && f->rank == 0) {
        for (int r = 0; r < f->size; r++)
            displs[r] = tot, tot += counts[r];
        if (!(allst = malloc(((size_t)tot / SW + 1) * sizeof *allst)))
            rc = -1;
    }
    if (rc == 0)
        rc = tagg_agree(f->comm, rc, "gathering the drained checksums");
    if (rc == 0)
        MPI_Gatherv(st, m, MPI_UINT64_T, allst, counts, displs, MPI_UINT64_T, 0, f->comm);
    if (rc == 0 && f->rank == 0) { /* the ordinary index replaces the node-local one */
        if (tagg_sf_index_init(&nx, s->ix.stripe, N) < 0)
            snprintf(err, sizeof err, "out of memory"), rc = -1;
        nx.closed       = 1;
        nx.logical_size = s->ix.logical_size;
        for (uint32_t k = 0; rc == 0 && k < N; k++) {
            nx.sub[k].size = all[k];
            if (!(nx.sub[k].name = tagg_sf_default_name(f->path, k, N)))
                snprintf(err, sizeof err, "out of memory"), rc = -1;
        }
        if (rc == 0) {
            tagg_sf_stripes_sort(allst, (uint64_t)tot / SW);
            nx.st  = allst, nx.nst = (uint64_t)tot / SW;
            allst  = NULL;
            rc     = tagg_sf_index_write(f->path, &nx, 1, err, sizeof err);
        }
        tagg_sf_index_free(&nx);
    }
    rc = agree_msg(f, rc, err, "writing the drained index");
    for (uint32_t k = 0; k < N; k++) /* keepers: the node-local copy when drained, the drained copy when not */
        if (keeper(f, s, k) == f->rank && out && (rc == 0 ? s->paths[k] : out[k]))
            tagg_sf_remove(rc == 0 ? s->paths[k] : out[k], NULL, 0);
    if (rc == 0 && f->rank == 0)
        tagg_sf_remove(s->meta_path, NULL, 0);
    for (uint32_t k = 0; out && k < N; k++)
        free(out[k]);
    free(out), free(mine), free(all), free(st), free(allst), free(counts), free(displs);
    return rc;
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
            rc = write_index(f, drain_now); /* on failure the index stays "open": tagg-fuse --check says so */
    }
    if (rc == 0 && drain_now && s->ix.closed)
        rc = drain(f);
    sub_free(s);
    f->store = NULL;
    return rc;
}

static int sub_del(const char *path, MPI_Comm comm, MPI_Info info, const tagg_config_t *cfg)
{
    int             rank, rc = 0;
    char            err[ERRLEN] = "", node[NODELEN];
    tagg_sf_index_t ix;
    (void)info;
    memset(&ix, 0, sizeof ix);
    MPI_Comm_rank(comm, &rank);
    MPI_Barrier(comm);
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
    MPI_Bcast(&nvr, 1, MPI_INT, 0, comm);
    if (nvr) {
        char    *text = NULL;
        size_t   len  = 0;
        uint64_t n    = 0;
        if (rank == 0 && tagg_sf_index_format(&ix, &text, &len) == 0)
            n = len;
        MPI_Bcast(&n, 1, MPI_UINT64_T, 0, comm);
        if (rank != 0 && n && !(text = malloc(n)))
            n = 0; /* fails below */
        if (n)
            MPI_Bcast(text, (int)n, MPI_CHAR, 0, comm);
        if (rank != 0 && (!n || tagg_sf_index_parse(text, (size_t)n, &ix, err, sizeof err) < 0))
            snprintf(err, sizeof err, "%s", n ? err : "out of memory"), rc = -1;
        if (rc == 0 && node_name(cfg, rank, node, sizeof node) < 0)
            snprintf(err, sizeof err, "cannot name this node"), rc = -1;
        for (uint32_t k = 0; rc == 0 && k < ix.count; k++)
            if (!strcmp(ix.sub[k].node, node) && (tagg_sf_nvr_dirs(ix.sub[k].name, ix.version, 0, err, sizeof err) < 0 ||
                                                  tagg_sf_remove(ix.sub[k].name, err, sizeof err) < 0)) {
                if (errno == ENOENT || strstr(err, "No such file"))
                    continue; /* already gone with its directory */
                rc = -1;
            }
        free(text);
        MPI_Barrier(comm);
    }
    tagg_sf_index_free(&ix);
    if (rank == 0 && rc == 0 && unlink(path) < 0)
        snprintf(err, sizeof err, "cannot delete '%s': %s", path, strerror(errno)), rc = -1;
    if (rc < 0)
        TAGG_ERR(TAGG_E_IO, "deleting '%s': %s", path, err);
    return tagg_agree(comm, rc, "deleting the file");
}
static int sub_owner(const tagg_file_t *f, uint64_t off, int i)
{
    const sub_t *s = sub_of(f);
    if (!s->ix.nvr)
        return -1;
    uint32_t k;
    uint64_t local;
    tagg_sf_locate(off, s->ix.stripe, s->ix.count, &k, &local);
    return i >= 0 && i < s->nown[k] ? s->own[k][i] : -1;
}

static int sub_owner_window(const tagg_file_t *f) { return sub_of(f)->ix.nvr ? sub_of(f)->window : 0; }

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
    .owner    = sub_owner,
    .owner_window = sub_owner_window,
};
