/* Layout "subfiles", destination=nvr (store_subfiles.c describes the rule):
 * node names (virtual nodes of a topology file included), the node-local
 * subfiles created or checked by their nodes, which ranks own which subfile,
 * their removal by delete, and drain=close (node-local subfiles turned into an
 * ordinary subfiled file beside the index). */
#include "error.h"
#include "mpi_wait.h"
#include "store_subfiles_int.h"
#include "sf_path.h"
#include "tier.h"

#include <tagg/topology.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* This process's node name: the host name, or "<host>.vnode<i>" when the
 * configuration's topology file places this rank on virtual node i. 0 or -1. */
int tagg_sub_node_name(const tagg_config_t *cfg, int rank, char *name, size_t len)
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
int tagg_sub_gather_nodes(tagg_file_t *f, char **all)
{
    char  mine[NODELEN + DIRLEN];
    int   rc = 0;
    memset(mine, 0, sizeof mine);
    *all = malloc((size_t)f->size * sizeof mine);
    if (!*all)
        TAGG_ERR(TAGG_E_NOMEM, "out of memory"), rc = -1;
    if (rc == 0 && tagg_sub_node_name(&f->cfg, f->rank, mine, NODELEN) < 0)
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
    int code = tagg_mpi_allgather(mine, (int)sizeof mine, MPI_CHAR, *all, (int)sizeof mine, MPI_CHAR, f->comm);
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

/* Rank 0, destination=nvr: the index of a new file; subfile k belongs to the
 * k-th node in rank order (the node's ranks create it, in their directory). */
int tagg_sub_create_nvr(tagg_file_t *f, tagg_sf_index_t *ix, const char *nodes, char *err, unsigned long long made[2],
                        tagg_sf_ixfd_t *ixfd)
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
    return tagg_sf_index_write_mode(f->path, ix, f->cfg.fsync, 1, made, ixfd, err, ERRLEN);
}

/* Collective, destination=nvr, after the index is known everywhere: which
 * ranks own which subfile, then each subfile's lowest owner creates it (new
 * file) or checks it (existing file), and its private directories. The first
 * failure's message reaches every rank. */
int tagg_sub_nvr_setup(tagg_file_t *f, sub_t *s, const char *nodes, int created)
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
            if (tagg_sub_check_file(f->path, s->paths[k], s->ix.closed, s->ix.sub[k].size, what, err, NULL) < 0)
                rc = -1;
        }
        if (rc < 0 && created) {
            char tmp[ERRLEN];
            snprintf(tmp, sizeof tmp, "creating node-local subfile %u on node %s: %s", (unsigned)k, s->ix.sub[k].node, err);
            snprintf(err, sizeof err, "%s", tmp);
        }
    }
    if (tagg_sub_agree_msg(f, rc, err, "opening the node-local subfiles") < 0)
        return -1;
    f->size_everywhere = 1;
    return 0;
}

/* Collective, drain=close of a closed file with node-local subfiles: each
 * keeper copies its node's subfile beside the index, metadata merged in and
 * every stripe verified (tagg_sf_drain_one), rank 0 replaces the index by an
 * ordinary format 3 one, then the node-local subfiles and the metadata file
 * go. On failure the copies are removed and the node-local file stays as it was. */
int tagg_sub_drain(tagg_file_t *f)
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
        if (tagg_sub_keeper(f, s, k) != f->rank)
            continue;
        if (mfd < 0 && (mfd = tagg_sf_open(s->meta_path, O_RDONLY, err, sizeof err)) < 0)
            rc = -1;
        else if (tagg_sf_drain_one(f->path, &s->ix, k, mfd, out[k], &mine[k], &st, &nst, err, sizeof err) < 0)
            rc = -1;
    }
    if (mfd >= 0)
        close(mfd);
    rc = tagg_sub_agree_msg(f, rc, err, "draining the node-local subfiles (drain=close)");
    /* the records travel as words: a tagg_sf_stripe_t is SW uint64_t (j, crc, form) */
    enum { SW = sizeof(tagg_sf_stripe_t) / sizeof(uint64_t) };
    int code, m = (int)(SW * nst);
    if (rc == 0 && (code = tagg_mpi_reduce(mine, all, (int)N, MPI_UINT64_T, MPI_BOR, 0, f->comm)) != MPI_SUCCESS)
        TAGG_ERR_MPI("MPI_Reduce (drained sizes)", code), rc = -1;
    if (rc == 0 && f->rank == 0 &&
        (!(counts = malloc((size_t)f->size * sizeof *counts)) || !(displs = malloc((size_t)f->size * sizeof *displs))))
        rc = -1;
    if (rc == 0)
        rc = tagg_agree(f->comm, rc, "gathering the drained checksums");
    if (rc == 0)
        tagg_mpi_gather(&m, 1, MPI_INT, counts, 1, MPI_INT, 0, f->comm);
    if (rc == 0 && f->rank == 0) {
        for (int r = 0; r < f->size; r++)
            displs[r] = tot, tot += counts[r];
        if (!(allst = malloc(((size_t)tot / SW + 1) * sizeof *allst)))
            rc = -1;
    }
    if (rc == 0)
        rc = tagg_agree(f->comm, rc, "gathering the drained checksums");
    if (rc == 0)
        tagg_mpi_gatherv(st, m, MPI_UINT64_T, allst, counts, displs, MPI_UINT64_T, 0, f->comm);
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
    rc = tagg_sub_agree_msg(f, rc, err, "writing the drained index");
    for (uint32_t k = 0; k < N; k++) /* keepers: the node-local copy when drained, the drained copy when not */
        if (tagg_sub_keeper(f, s, k) == f->rank && out && (rc == 0 ? s->paths[k] : out[k]))
            tagg_sf_remove(rc == 0 ? s->paths[k] : out[k], NULL, 0);
    if (rc == 0 && f->rank == 0)
        tagg_sf_remove(s->meta_path, NULL, 0);
    for (uint32_t k = 0; out && k < N; k++)
        free(out[k]);
    free(out), free(mine), free(all), free(st), free(allst), free(counts), free(displs);
    return rc;
}

/* Collective, delete of a node-local file: its subfiles are removed by the
 * ranks of their nodes (any of them; ENOENT is fine), in their private
 * directories only. Every rank gets rank 0's index (*ix). */
int tagg_sub_del_nvr(MPI_Comm comm, int rank, const tagg_config_t *cfg, tagg_sf_index_t *ix, int rc, char *err)
{
    char     node[NODELEN];
    char    *text = NULL;
    size_t   len  = 0;
    uint64_t n    = 0;
    if (rank == 0 && tagg_sf_index_format(ix, &text, &len) == 0)
        n = len;
    tagg_mpi_bcast(&n, 1, MPI_UINT64_T, 0, comm);
    if (rank != 0 && n && !(text = malloc(n)))
        n = 0; /* fails below */
    if (n)
        tagg_mpi_bcast(text, (int)n, MPI_CHAR, 0, comm);
    if (rank != 0 && !n)
        snprintf(err, ERRLEN, "out of memory"), rc = -1;
    else if (rank != 0 && tagg_sf_index_parse(text, (size_t)n, ix, err, ERRLEN) < 0)
        rc = -1;
    if (rc == 0 && tagg_sub_node_name(cfg, rank, node, sizeof node) < 0)
        snprintf(err, ERRLEN, "cannot name this node"), rc = -1;
    for (uint32_t k = 0; rc == 0 && k < ix->count; k++)
        if (!strcmp(ix->sub[k].node, node) && (tagg_sf_nvr_dirs(ix->sub[k].name, ix->version, 0, err, ERRLEN) < 0 ||
                                              tagg_sf_remove(ix->sub[k].name, err, ERRLEN) < 0)) {
            if (errno == ENOENT || strstr(err, "No such file"))
                continue; /* already gone with its directory */
            rc = -1;
        }
    free(text);
    tagg_mpi_barrier(comm);
    return rc;
}

int tagg_sub_owner(const tagg_file_t *f, uint64_t off, int i)
{
    const sub_t *s = sub_of(f);
    if (!s->ix.nvr)
        return -1;
    uint32_t k;
    uint64_t local;
    tagg_sf_locate(off, s->ix.stripe, s->ix.count, &k, &local);
    return i >= 0 && i < s->nown[k] ? s->own[k][i] : -1;
}

int tagg_sub_owner_window(const tagg_file_t *f) { return sub_of(f)->ix.nvr ? sub_of(f)->window : 0; }
