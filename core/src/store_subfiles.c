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
 * size) for its size and CRC-64 and rank 0 writes the final index.
 *
 * destination=nvr (node-local subfiles, index format 2; MA-TAPIOCA's SSD as a
 * destination, seed 002 section 4.4). One subfile per node, in that node's
 * node-local directory (tagg_nvr_dir(): nvr_dir, $TMPDIR, /tmp, as the node's
 * ranks see it) under "tagg-nvr.<node>/", where <node> is the host name, or
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
#include "fault.h"
#include "tier.h"

#include <tagg/topology.h>

#include <errno.h>
#include <fcntl.h>
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
} sub_t;

static sub_t *sub_of(const tagg_file_t *f) { return f->store; }

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
static int remove_listed(const char *path, const tagg_sf_index_t *old, char *err)
{
    if (old->nvr && old->meta.name) { /* the node-local subfiles: by their nodes (remove_local) */
        char *p = tagg_sf_subfile_path(path, old->meta.name);
        if (p && unlink(p) < 0 && errno != ENOENT) {
            snprintf(err, ERRLEN, "cannot remove the metadata file '%s': %s", p, strerror(errno));
            free(p);
            return -1;
        }
        free(p);
        return 0;
    }
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
    ix->nvr      = 1;
    ix->meta.crc = tagg_crc64(0, NULL, 0);
    for (uint32_t k = 0; rc == 0 && k < N; k++) {
        ix->sub[k].crc = tagg_crc64(0, NULL, 0);
        if (!(ix->sub[k].node = strdup(NODE_OF(nodes, first[k]))) ||
            !(ix->sub[k].name = tagg_sf_nvr_path(DIR_OF(nodes, first[k]), NODE_OF(nodes, first[k]), f->path, k, N)))
            rc = -1;
    }
    free(first);
    if (rc < 0)
        return snprintf(err, ERRLEN, "out of memory"), -1;
    char *mp = tagg_sf_subfile_path(f->path, ix->meta.name);
    int   fd = mp ? open(mp, O_WRONLY | O_CREAT | O_TRUNC, 0666) : -1;
    if (fd < 0 || close(fd) < 0) {
        snprintf(err, ERRLEN, "cannot create the metadata file '%s': %s", mp ? mp : "?", strerror(errno));
        free(mp);
        return -1;
    }
    free(mp);
    return tagg_sf_index_write(f->path, ix, f->cfg.fsync, err, ERRLEN);
}

/* Rank 0: creates a new subfiled file (subfiles empty, index "open"). */
static int create_files(tagg_file_t *f, tagg_sf_index_t *ix, uint32_t N, int had_index, const char *nodes, char *err)
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
    if (nodes)
        return create_nvr(f, ix, nodes, err);
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
    if (ix->nvr) { /* the node-local subfiles are checked by their nodes (nvr_setup) */
        struct stat st;
        char       *p = tagg_sf_subfile_path(f->path, ix->meta.name);
        if (!p || stat(p, &st) < 0) {
            snprintf(err, ERRLEN, "the metadata file of '%s' is missing: '%s': %s", f->path, p ? p : "?",
                     p ? strerror(errno) : "out of memory");
            free(p);
            return -1;
        }
        free(p);
    }
    for (uint32_t k = 0; !ix->nvr && k < ix->count; k++) {
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

/* Collective, destination=nvr, after the index is known everywhere: which
 * ranks own which subfile, then each subfile's lowest owner creates it (new
 * file) or checks it (existing file). The first failure's message reaches
 * every rank. */
static int nvr_setup(tagg_file_t *f, sub_t *s, const char *nodes, int created)
{
    uint32_t N  = s->ix.count;
    int      rc = 0, minown = f->size;
    char     err[ERRLEN] = "";
    s->own  = calloc(N, sizeof *s->own);
    s->nown = calloc(N, sizeof *s->nown);
    s->mine = calloc(N, sizeof *s->mine);
    s->meta_path = tagg_sf_subfile_path(f->path, s->ix.meta.name);
    if (!s->own || !s->nown || !s->mine || !s->meta_path)
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
        struct stat st;
        int         fd;
        if (created) {
            if (tagg_sf_mkdir_for(s->paths[k]) < 0 ||
                (fd = open(s->paths[k], O_WRONLY | O_CREAT | O_TRUNC, 0666)) < 0 || close(fd) < 0)
                snprintf(err, sizeof err, "cannot create node-local subfile %u '%s' on node %s: %s", (unsigned)k,
                         s->paths[k], s->ix.sub[k].node, strerror(errno)), rc = -1;
            else
                f->stats.nvr_opens++;
        }
        else if (stat(s->paths[k], &st) < 0)
            snprintf(err, sizeof err,
                     "node-local subfile %u of '%s' is missing on node %s: '%s': %s (node-local files do not "
                     "outlive the job or a reboot; drain them with drain=close or tagg-fuse --drain)",
                     (unsigned)k, f->path, s->ix.sub[k].node, s->paths[k], strerror(errno)), rc = -1;
        else if (s->ix.closed && (uint64_t)st.st_size != s->ix.sub[k].size)
            snprintf(err, sizeof err,
                     "node-local subfile '%s' has %llu bytes, its index records %llu: changed or damaged since it was "
                     "closed (see tagg-fuse --check)",
                     s->paths[k], (unsigned long long)st.st_size, (unsigned long long)s->ix.sub[k].size), rc = -1;
    }
    if (agree_msg(f, rc, err, "opening the node-local subfiles") < 0)
        return -1;
    f->size_everywhere = 1;
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
    if (s)
        s->meta_fd = -1;
    if ((flags & TAGG_OPEN_CREAT) && f->cfg.subfiles == 0 && !nvr_create && count_nodes(f, &nodes) < 0)
        rc = -1;
    if (tagg_agree(f->comm, s ? rc : -1, "subfiles open (set-up)") < 0) {
        if (!s)
            TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        free(s);
        return -1;
    }
    if (nvr_create && gather_nodes(f, &names) < 0) {
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
    /* every rank gets rank 0's index text, or its error message */
    int code = MPI_Bcast(hdr, 3, MPI_UINT64_T, 0, f->comm);
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
    f->store = s;
    return 0;
}

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
        if ((s->fd[k] = open(s->paths[k], s->writable ? O_RDWR : O_RDONLY)) < 0)
            TAGG_ERR(TAGG_E_IO, "cannot open %ssubfile '%s': %s", s->ix.nvr ? "node-local " : "", s->paths[k],
                     strerror(errno));
        else if (s->ix.nvr)
            f->stats.nvr_opens++;
    }
    return s->fd[k];
}

/* The metadata file (node-local subfiles only), opened on first use. */
static int meta_fd_of(tagg_file_t *f)
{
    sub_t *s = sub_of(f);
    if (s->meta_fd < 0 && (s->meta_fd = open(s->meta_path, s->writable ? O_RDWR : O_RDONLY)) < 0)
        TAGG_ERR(TAGG_E_IO, "cannot open the metadata file '%s': %s", s->meta_path, strerror(errno));
    return s->meta_fd;
}

/* Moves one piece that lies within one stripe. */
static int piece(tagg_file_t *f, uint64_t off, uint64_t n, char *buf, tagg_dir_t dir)
{
    sub_t   *s = sub_of(f);
    uint32_t k;
    uint64_t local;
    int      fd;
    const char *name;
    tagg_sf_locate(off, s->ix.stripe, s->ix.count, &k, &local);
    if (s->ix.nvr && f->io_meta) /* metadata: the shared metadata file, at the logical address */
        fd = meta_fd_of(f), local = off, name = s->meta_path;
    else
        fd = fd_of(f, k, off), name = s->paths[k];
    if (fd < 0)
        return -1;
    if (s->ix.nvr && dir == TAGG_WRITE && tagg_fault("nvr_write", f->rank)) {
        TAGG_ERR(TAGG_E_IO, "write of %llu bytes at offset %llu of '%s' failed: %s (injected by TAGG_FAULT)",
                 (unsigned long long)n, (unsigned long long)local, name, strerror(ENOSPC));
        return -1;
    }
    for (uint64_t done = 0; done < n;) {
        ssize_t got = dir == TAGG_WRITE ? pwrite(fd, buf + done, n - done, (off_t)(local + done))
                                        : pread(fd, buf + done, n - done, (off_t)(local + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 || (got == 0 && dir == TAGG_WRITE)) {
            TAGG_ERR(TAGG_E_IO, "%s of %llu bytes at offset %llu of subfile '%s' (address %llu) %s: %s",
                     dir == TAGG_WRITE ? "write" : "read", (unsigned long long)(n - done),
                     (unsigned long long)(local + done), name, (unsigned long long)(off + done),
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

/* The rank that sizes, checksums and drains subfile k: for node-local
 * subfiles its node's lowest rank, else rank k mod size. */
static int keeper(const tagg_file_t *f, const sub_t *s, uint32_t k)
{
    return s->ix.nvr ? s->own[k][0] : (int)(k % (uint32_t)f->size);
}

/* Size of the metadata file (node-local subfiles), 0 when absent. */
static int meta_size(tagg_file_t *f, uint64_t *size)
{
    sub_t      *s = sub_of(f);
    struct stat st;
    if ((s->meta_fd >= 0 ? fstat(s->meta_fd, &st) : stat(s->meta_path, &st)) < 0) {
        TAGG_ERR(TAGG_E_IO, "cannot stat the metadata file '%s': %s", s->meta_path, strerror(errno));
        return -1;
    }
    *size = (uint64_t)st.st_size;
    return 0;
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
        uint64_t e = tagg_sf_logical_end(n, s->ix.stripe, s->ix.count, k);
        end        = e > end ? e : end;
    }
    if (s->ix.nvr && f->rank == 0) {
        if (meta_size(f, &n) < 0)
            return -1;
        end = n > end ? n : end;
    }
    *size = end;
    return 0;
}

/* Collective: subfile k is cut or extended by its keeper (the metadata file
 * by rank 0). */
static int sub_set_size(tagg_file_t *f, uint64_t size)
{
    sub_t *s  = sub_of(f);
    int    rc = 0;
    for (uint32_t k = 0; k < s->ix.count; k++) {
        if (keeper(f, s, k) != f->rank)
            continue;
        uint64_t want = tagg_sf_subfile_size(size, s->ix.stripe, s->ix.count, k);
        if (truncate(s->paths[k], (off_t)want) < 0) {
            TAGG_ERR(TAGG_E_IO, "cannot set the size of subfile '%s' to %llu: %s", s->paths[k],
                     (unsigned long long)want, strerror(errno));
            rc = -1;
        }
    }
    /* the metadata file is only ever cut: extending it would make a sparse copy
     * as long as the file, read whole for its checksum at close; the raw
     * subfiles already carry the logical size */
    uint64_t msize = 0;
    if (s->ix.nvr && f->rank == 0 && meta_size(f, &msize) < 0)
        rc = -1;
    else if (s->ix.nvr && f->rank == 0 && msize > size && truncate(s->meta_path, (off_t)size) < 0) {
        TAGG_ERR(TAGG_E_IO, "cannot set the size of the metadata file '%s' to %llu: %s", s->meta_path,
                 (unsigned long long)size, strerror(errno));
        rc = -1;
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
    if (s->meta_fd >= 0 && fsync(s->meta_fd) < 0) {
        TAGG_ERR(TAGG_E_IO, "fsync of the metadata file '%s': %s", s->meta_path, strerror(errno));
        rc = -1;
    }
    return rc;
}

/* Collective, writers only: every subfile's size and checksum, read back by
 * its keeper (the metadata file's by rank 0), then rank 0 writes the final
 * index. Every rank ends with the final sizes in s->ix (drain needs them). */
static int write_index(tagg_file_t *f)
{
    sub_t    *s = sub_of(f);
    uint32_t  N = s->ix.count;
    size_t    n = 2 * (size_t)N + 2; /* the last two: the metadata file */
    uint64_t *mine = calloc(n, sizeof *mine), *all = calloc(n, sizeof *all);
    char      err[ERRLEN] = "";
    int       rc = mine && all ? 0 : -1, code;
    if (rc < 0)
        snprintf(err, sizeof err, "out of memory");
    for (uint32_t k = 0; rc == 0 && k < N; k++)
        if (keeper(f, s, k) == f->rank && tagg_sf_file_crc(s->paths[k], &mine[2 * k], &mine[2 * k + 1], err, sizeof err) < 0)
            rc = -1;
    if (rc == 0 && s->ix.nvr && f->rank == 0 &&
        tagg_sf_file_crc(s->meta_path, &mine[2 * N], &mine[2 * N + 1], err, sizeof err) < 0)
        rc = -1;
    if (agree_msg(f, rc, err, "checksumming the subfiles") < 0) {
        free(mine), free(all);
        return -1;
    }
    if ((code = MPI_Allreduce(mine, all, (int)n, MPI_UINT64_T, MPI_BOR, f->comm)) != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allreduce (subfile checksums)", code);
        rc = -1;
    }
    if (rc == 0) {
        s->ix.logical_size = 0;
        for (uint32_t k = 0; k < N; k++) {
            s->ix.sub[k].size = all[2 * k];
            s->ix.sub[k].crc  = all[2 * k + 1];
            uint64_t e        = tagg_sf_logical_end(all[2 * k], s->ix.stripe, N, k);
            s->ix.logical_size = e > s->ix.logical_size ? e : s->ix.logical_size;
        }
        if (s->ix.nvr) {
            s->ix.meta.size    = all[2 * N];
            s->ix.meta.crc     = all[2 * N + 1];
            s->ix.logical_size = s->ix.meta.size > s->ix.logical_size ? s->ix.meta.size : s->ix.logical_size;
        }
        s->ix.closed = 1;
    }
    if (rc == 0 && f->rank == 0 && tagg_sf_index_write(f->path, &s->ix, f->cfg.fsync, err, sizeof err) < 0) {
        TAGG_ERR(TAGG_E_IO, "%s", err);
        rc = -1;
    }
    free(mine), free(all);
    return tagg_agree(f->comm, rc, "writing the subfile index");
}

/* Collective, drain=close of a closed file with node-local subfiles: each
 * keeper copies its node's subfile beside the index, metadata merged in
 * (tagg_sf_drain_one), rank 0 replaces the index by an ordinary (format 1)
 * one, then the node-local subfiles and the metadata file go. On failure the
 * copies are removed and the node-local file stays as it was. */
static int drain(tagg_file_t *f)
{
    sub_t          *s = sub_of(f);
    uint32_t        N = s->ix.count;
    uint64_t       *mine = calloc(2 * (size_t)N, sizeof *mine), *all = calloc(2 * (size_t)N, sizeof *all);
    char          **out = calloc(N, sizeof *out);
    char            err[ERRLEN] = "";
    int             rc = mine && all && out ? 0 : -1, mfd = -1;
    tagg_sf_index_t nx;
    memset(&nx, 0, sizeof nx);
    if (rc < 0)
        snprintf(err, sizeof err, "out of memory");
    for (uint32_t k = 0; rc == 0 && k < N; k++) {
        char *name = tagg_sf_default_name(f->path, k, N);
        out[k]     = name ? tagg_sf_subfile_path(f->path, name) : NULL;
        free(name);
        if (!out[k])
            snprintf(err, sizeof err, "out of memory"), rc = -1;
    }
    for (uint32_t k = 0; rc == 0 && k < N; k++) {
        if (keeper(f, s, k) != f->rank)
            continue;
        if (mfd < 0 && (mfd = open(s->meta_path, O_RDONLY)) < 0)
            snprintf(err, sizeof err, "cannot open the metadata file '%s': %s", s->meta_path, strerror(errno)), rc = -1;
        else if (tagg_sf_drain_one(f->path, &s->ix, k, mfd, out[k], &mine[2 * k], &mine[2 * k + 1], err, sizeof err) < 0)
            rc = -1;
    }
    if (mfd >= 0)
        close(mfd);
    rc = agree_msg(f, rc, err, "draining the node-local subfiles (drain=close)");
    int code;
    if (rc == 0 && (code = MPI_Reduce(mine, all, (int)(2 * N), MPI_UINT64_T, MPI_BOR, 0, f->comm)) != MPI_SUCCESS)
        TAGG_ERR_MPI("MPI_Reduce (drained checksums)", code), rc = -1;
    if (rc == 0 && f->rank == 0) { /* the ordinary index replaces the node-local one */
        if (tagg_sf_index_init(&nx, s->ix.stripe, N) < 0)
            snprintf(err, sizeof err, "out of memory"), rc = -1;
        nx.closed       = 1;
        nx.logical_size = s->ix.logical_size;
        for (uint32_t k = 0; rc == 0 && k < N; k++) {
            nx.sub[k].size = all[2 * k], nx.sub[k].crc = all[2 * k + 1];
            if (!(nx.sub[k].name = tagg_sf_default_name(f->path, k, N)))
                snprintf(err, sizeof err, "out of memory"), rc = -1;
        }
        if (rc == 0)
            rc = tagg_sf_index_write(f->path, &nx, 1, err, sizeof err);
        tagg_sf_index_free(&nx);
    }
    rc = agree_msg(f, rc, err, "writing the drained index");
    for (uint32_t k = 0; k < N; k++) /* keepers: the node-local copy when drained, the drained copy when not */
        if (keeper(f, s, k) == f->rank && out && (rc == 0 ? s->paths[k] : out[k]))
            unlink(rc == 0 ? s->paths[k] : out[k]);
    if (rc == 0 && f->rank == 0)
        unlink(s->meta_path);
    for (uint32_t k = 0; out && k < N; k++)
        free(out[k]);
    free(out), free(mine), free(all);
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
    s->meta_fd = -1;
    /* every rank's writes are done (the agreement is a barrier) before the read-back */
    if (s->writable) {
        rc = tagg_agree(f->comm, rc, "closing the subfiles");
        if (rc == 0)
            rc = write_index(f); /* on failure the index stays "open": tagg-fuse --check says so */
    }
    if (rc == 0 && s->ix.nvr && s->ix.closed && f->cfg.drain == TAGG_DRAIN_CLOSE)
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
                rc = -1; /* its subfiles cannot be found: keep the stub, say why */
            else
                rc = remove_listed(path, &ix, err);
        }
        else if (is_index < 0)
            rc = -1;
    }
    /* node-local subfiles: removed by the ranks of their nodes (any of them; ENOENT is fine) */
    int nvr = rank == 0 && rc == 0 && ix.nvr;
    MPI_Bcast(&nvr, 1, MPI_INT, 0, comm);
    if (nvr) {
        char  *text = NULL;
        size_t len  = 0;
        uint64_t n  = 0;
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
            if (!strcmp(ix.sub[k].node, node) && unlink(ix.sub[k].name) < 0 && errno != ENOENT)
                snprintf(err, sizeof err, "cannot remove node-local subfile '%s': %s", ix.sub[k].name,
                         strerror(errno)), rc = -1;
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
