/* Backend "tapioca": the aggregation engine (engine.h) behind the entry point.
 * Collective calls are planned and moved in rounds by elected aggregators;
 * independent calls go straight to the store. This file holds the per-file
 * engine state: the machine description for the cost model (tier figures from
 * the model's table or from a tier file, `tiers=`) and the aggregation
 * buffers, in the tier engine_tier.c chooses. */
#define _GNU_SOURCE /* dladdr, RTLD_NODELETE */
#include "engine.h"
#include "error.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Figures for the real machine until calibration (issue 5) measures them:
 * 1 us per hop, 10 GB/s links. Only ratios matter for the election. */
#define GENERIC_LATENCY 1e-6
#define GENERIC_BANDWIDTH 10e9

/* Which node each rank is on: from the topology file when one is configured
 * (several virtual nodes on one host), else from the shared-memory split. */
static int machine(tagg_file_t *f, tagg_engine_t *e, MPI_Comm node)
{
    tagg_err_t err;
    int        rc = 0;
    if (e->topo) /* from the topology file, loaded and checked at open */
        return 0;
    MPI_Comm leaders = MPI_COMM_NULL;
    int      lrank = 0, node_id = 0;
    int     *rank_node = malloc((size_t)f->size * sizeof *rank_node);
    MPI_Comm_rank(node, &lrank);
    MPI_Comm_split(f->comm, lrank == 0 ? 0 : MPI_UNDEFINED, f->rank, &leaders);
    if (leaders != MPI_COMM_NULL) {
        MPI_Comm_rank(leaders, &node_id);
        MPI_Comm_free(&leaders);
    }
    MPI_Bcast(&node_id, 1, MPI_INT, 0, node);
    if (!rank_node) {
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        rc = -1;
    }
    if (tagg_agree(f->comm, rc, "describing the machine") < 0) {
        free(rank_node);
        return -1;
    }
    MPI_Allgather(&node_id, 1, MPI_INT, rank_node, 1, MPI_INT, f->comm);
    if (tagg_topology_generic_from_ranks(f->size, rank_node, 0, NULL, GENERIC_LATENCY, GENERIC_BANDWIDTH, &e->topo,
                                         &err) < 0) {
        TAGG_ERR(TAGG_E_CONFIG, "topology: %s", err.msg);
        rc = -1;
    }
    free(rank_node);
    return rc;
}

/* ---- engine resources: the machine description and the aggregation buffers --
 *
 * Both cost collectives (node splits, an allgather, the tier choice, a window
 * allocation), each
 * a scheduler time slice when ranks outnumber cores: about 0.25 s per file on
 * 4 ranks and 2 cores, more than the data movement of a 10 MB write. So they
 * are made at a file's first collective raw-data call, not at open (HDF5 opens
 * an existing file twice, the first time tentatively, and many files only ever
 * see metadata), and, when the file's communicator is congruent to
 * MPI_COMM_WORLD, kept for the next file with the same buffers, topology and
 * tier settings until MPI_Finalize (freed then by a delete callback on MPI_COMM_SELF, when
 * every rank is in MPI_Finalize, so the collective MPI_Win_free is safe).
 * Resources on other communicators belong to their file and go at its close.
 * Decisions about the cache are agreed by one reduction, so a rank whose cache
 * differs (a configuration that differs between ranks) cannot desynchronise
 * the collectives: the file then gets private resources.
 * A consequence users see: a tier that cannot be allocated (out of space in
 * the NVR directory with a forced tier) fails the file's first collective
 * write or read, on every rank, not H5Fcreate. */
typedef struct tagg_engine_res {
    tagg_topology_t *topo;
    tagg_tier_buf_t  buf;            /* window and memory, in the chosen tier */
    int              tier;           /* its index in the tier table */
    char             tier_text[96];  /* for the summary */
    char            *key;            /* what it was made for (res_key) */
    int              users;     /* open files using it */
    int              cached;    /* the world cache owns it */
} res_t;

static res_t *world_res;                       /* at most one cached entry per process */
static int    world_keyval = MPI_KEYVAL_INVALID;

static void res_free(res_t *r)
{
    if (!r)
        return;
    tagg_tier_free(&r->buf);
    if (r->topo)
        tagg_topology_free(r->topo);
    free(r->key);
    free(r);
}

static int res_finalize(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)value, (void)extra;
    res_free(world_res);
    world_res = NULL;
    return MPI_SUCCESS;
}

/* HDF5 unloads plugins (dlclose) at H5close, which applications often call
 * before MPI_Finalize; the MPI_COMM_SELF delete callbacks that free cached
 * resources must still be mapped then. Once a callback is registered, the
 * library holding this code is made resident (RTLD_NODELETE). */
void tagg_engine_pin_library(void)
{
    static int pinned;
    Dl_info    info;
    if (pinned || !dladdr((void *)tagg_engine_pin_library, &info) || !info.dli_fname)
        return;
    pinned = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) != NULL;
}

/* Everything the resources depend on, as text: buffers, topology, tiers. */
static char *res_key(const tagg_file_t *f, const tagg_engine_t *e)
{
    const tagg_config_t *c = &f->cfg;
    char                 key[4096];
    snprintf(key, sizeof key, "%llu|%d|%s|%s|%d|%d|%llu|%llu|%llu|%s|%d", (unsigned long long)e->bufsize, e->nbuf,
             c->topology ? c->topology : "", c->tiers ? c->tiers : "", (int)c->aggr_tier, (int)c->persistency,
             (unsigned long long)c->hbm_capacity, (unsigned long long)c->dram_capacity,
             (unsigned long long)c->nvr_capacity, c->nvr_dir ? c->nvr_dir : "", c->hbm_emulate);
    return strdup(key);
}

/* Collective over f->comm: machine description and window, new. */
static res_t *res_make(tagg_file_t *f, tagg_engine_t *e, char *key)
{
    res_t *r  = calloc(1, sizeof *r);
    int    rc = 0;
    if (!r || !key) {
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        rc = -1;
    }
    if (tagg_agree(f->comm, rc, "starting the engine") < 0) {
        free(r), free(key);
        return NULL;
    }
    r->key     = key;
    r->buf.win = MPI_WIN_NULL;
    /* One shared-memory split serves the machine description and the tier
     * choice (whose capacities are those of the physical node). */
    MPI_Comm node = MPI_COMM_NULL;
    int      code = MPI_Comm_split_type(f->comm, MPI_COMM_TYPE_SHARED, f->rank, MPI_INFO_NULL, &node);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Comm_split_type (node)", code);
        res_free(r);
        return NULL; /* collective: MPI fails it on every rank */
    }
    rc      = machine(f, e, node);
    r->topo = e->topo, e->topo = NULL;
    if (tagg_agree(f->comm, rc, "describing the machine") < 0) {
        MPI_Comm_free(&node);
        res_free(r);
        return NULL;
    }
    e->topo = r->topo; /* the tier choice reads it */
    rc      = tagg_engine_tier_setup(f, e, node);
    MPI_Comm_free(&node);
    if (rc < 0) {
        e->topo = NULL;
        res_free(r);
        return NULL;
    }
    r->buf  = e->buf, r->tier = e->tier;
    memcpy(r->tier_text, e->tier_text, sizeof r->tier_text);
    return r;
}

/* Collective, at the file's first collective raw-data call (engine.h). */
int tagg_engine_ready(tagg_file_t *f, tagg_engine_t *e)
{
    if (e->res)
        return 0;
    int world = MPI_UNEQUAL;
    MPI_Comm_compare(f->comm, MPI_COMM_WORLD, &world);
    /* Asynchronous files run their rounds on worker threads, concurrently with
     * other files' calls: they get private resources, never the cached window. */
    world = (world == MPI_IDENT || world == MPI_CONGRUENT) && !f->cfg.async;
    /* what this rank's cache says: hit, or free to be replaced */
    char *key = res_key(f, e);
    int   hit = world && key && world_res && strcmp(world_res->key, key) == 0;
    /* not world (an asynchronous file, on a worker thread): the cache is not even looked at */
    int   has = world && world_res != NULL, busy = has && world_res->users > 0;
    int in[6] = {hit, -hit, has, -has, busy, -busy}, out[6];
    int code  = MPI_Allreduce(in, out, 6, MPI_INT, MPI_MIN, f->comm);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allreduce (engine resources)", code);
        free(key);
        return -1;
    }
    int same = out[0] == -out[1] && out[2] == -out[3] && out[4] == -out[5];
    res_t *r = NULL;
    if (same && hit) {
        r = world_res;
        free(key);
        if (e->topo) /* loaded at open; the cached one is the same file */
            tagg_topology_free(e->topo);
    }
    else {
        int cache = same && world && !busy;
        if (cache && has) { /* every rank frees the same window */
            res_free(world_res);
            world_res = NULL;
        }
        if (!(r = res_make(f, e, key)))
            return -1;
        if (cache) {
            if (world_keyval == MPI_KEYVAL_INVALID &&
                MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, res_finalize, &world_keyval, NULL) == MPI_SUCCESS) {
                tagg_engine_pin_library();
                MPI_Comm_set_attr(MPI_COMM_SELF, world_keyval, NULL);
            }
            r->cached = world_keyval != MPI_KEYVAL_INVALID; /* else freed at close like any other */
            if (r->cached)
                world_res = r;
        }
    }
    r->users++;
    if (f->cfg.verbose >= 2 && f->rank == 0) {
        printf("tagg: engine resources for file=%s: %s\n", f->path,
               r == world_res && same && hit ? "from the cache" : r->cached ? "made, cached" : "made, private");
        fflush(stdout);
    }
    e->res = r, e->topo = r->topo, e->buf = r->buf, e->win = r->buf.win, e->base = r->buf.base, e->tier = r->tier;
    memcpy(e->tier_text, r->tier_text, sizeof e->tier_text);
    return 0;
}

static void engine_free(tagg_engine_t *e)
{
    if (!e)
        return;
    if (e->res && --e->res->users == 0 && !e->res->cached)
        res_free(e->res);
    if (!e->res && e->topo) /* loaded at open, resources never made */
        tagg_topology_free(e->topo);
    free(e);
}

/* Local (the caller agrees): the resources come at the first collective call
 * (tagg_engine_ready). */
static int tapioca_open(tagg_file_t *f)
{
    tagg_engine_t *e = calloc(1, sizeof *e);
    if (!e) {
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        return -1;
    }
    e->win     = MPI_WIN_NULL;
    e->buf.win = MPI_WIN_NULL;
    e->bufsize = (uint64_t)f->cfg.buffer_size;
    e->nbuf    = f->cfg.buffers;
    if (f->cfg.tiers && *f->cfg.tiers) { /* measured figures (tagg-calibrate) */
        tagg_err_t err;
        if (tagg_tiers_load(f->cfg.tiers, &e->tiers, &err) < 0) {
            TAGG_ERR(TAGG_E_CONFIG, "tiers: %s", err.msg);
            free(e);
            return -1;
        }
    }
    else
        tagg_tiers_default(&e->tiers);
    tagg_model_opts_default(&e->opts);
    e->opts.n_buff   = e->nbuf;
    e->opts.s_buff   = e->bufsize;
    e->opts.fs_block = (uint64_t)f->cfg.block;
    e->opts.strategy = tagg_strategy_names[f->cfg.strategy];
    e->strategy      = tagg_strategy_find(e->opts.strategy);
    e->cost_based    = f->cfg.strategy == TAGG_STRATEGY_MEMORY_AWARE || f->cfg.strategy == TAGG_STRATEGY_TOPO_AWARE;
    if (!e->strategy) {
        TAGG_ERR(TAGG_E_CONFIG, "strategy '%s' is not in the model's registry", e->opts.strategy);
        free(e);
        return -1;
    }
    if (tagg_engine_plan_init() < 0) {
        free(e);
        return -1;
    }
    /* A topology file is read and checked here, so that a bad one fails the
     * file's open (local work; the caller agrees), not its first write. */
    if (f->cfg.topology && *f->cfg.topology) {
        tagg_err_t err;
        if (tagg_topology_load(f->cfg.topology, &e->topo, &err) < 0) {
            TAGG_ERR(TAGG_E_CONFIG, "topology: %s", err.msg);
            free(e);
            return -1;
        }
        if (tagg_topology_nranks(e->topo) < f->size) {
            TAGG_ERR(TAGG_E_CONFIG, "topology %s describes %d ranks, the file's communicator has %d",
                     f->cfg.topology, tagg_topology_nranks(e->topo), f->size);
            tagg_topology_free(e->topo);
            free(e);
            return -1;
        }
    }
    f->backend = e;
    return 0;
}

static int tapioca_close(tagg_file_t *f)
{
    engine_free(f->backend);
    f->backend = NULL;
    return 0;
}

static int move_one(tagg_file_t *f, const tagg_extents_t *x, tagg_dir_t dir);

/* Collective raw-data requests on a store whose stripes only some ranks may
 * reach (node-local subfiles): one domain per stripe, each aggregated on its
 * node, so one pass covers at most owner_window stripes; longer requests go
 * in consecutive windows of the address space, every rank taking part in each
 * (with what it has there, maybe nothing). */
static int move_windows(tagg_file_t *f, const tagg_extents_t *x, tagg_dir_t dir, int W)
{
    uint64_t S  = f->store_ops->stripe(f);
    /* range, and whether any rank holds metadata: a rank with nothing to move
     * does not know the kind of the call, so the path is agreed here */
    int64_t  in[3] = {x->n ? (int64_t)x->v[0].off : INT64_MAX, 0, -(int64_t)(x->n && x->meta)}, g[3];
    for (size_t i = 0; i < x->n; i++)
        if ((int64_t)(x->v[i].off + x->v[i].len) > in[1])
            in[1] = (int64_t)(x->v[i].off + x->v[i].len);
    in[1] = -in[1];
    int code = MPI_Allreduce(in, g, 3, MPI_INT64_T, MPI_MIN, f->comm);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allreduce (request range)", code);
        return -1;
    }
    if (g[0] == INT64_MAX)
        return 0; /* nothing anywhere */
    if (g[2]) { /* file metadata (to the metadata file, no aggregation) */
        f->io_meta = 1;
        return move_one(f, x, dir);
    }
    uint64_t lo = (uint64_t)g[0] / S * S, hi = (uint64_t)-g[1], span = (uint64_t)W * S;
    tagg_extents_t sub;
    tagg_extents_init(&sub);
    size_t i = 0;
    int    rc = 0;
    for (uint64_t w = lo; w < hi; w += span) {
        uint64_t wend = w + span;
        int      lrc  = 0;
        tagg_extents_reset(&sub);
        for (size_t j = i; j < x->n && x->v[j].off < wend; j++) { /* x is sorted by offset */
            uint64_t a = x->v[j].off > w ? x->v[j].off : w, b = x->v[j].off + x->v[j].len;
            b          = b < wend ? b : wend;
            if (b > a && tagg_extents_push(&sub, a, b - a, x->v[j].mem + (a - x->v[j].off)) < 0)
                TAGG_ERR(TAGG_E_NOMEM, "out of memory"), lrc = -1;
        }
        while (i < x->n && x->v[i].off + x->v[i].len <= wend)
            i++;
        if (lrc < 0)
            tagg_extents_reset(&sub); /* take part with nothing; the agreement fails every rank */
        sub.meta = 0;
        if (move_one(f, &sub, dir) < 0)
            lrc = -1;
        if ((rc = tagg_agree(f->comm, lrc, "moving a window of node-local stripes")) < 0)
            break;
    }
    tagg_extents_free(&sub);
    return rc;
}

static int move(tagg_file_t *f, const tagg_extents_t *x, bool collective, tagg_dir_t dir)
{
    if (!collective)
        return tagg_io_direct(f, x, dir);
    int W = f->store_ops->owner_window ? f->store_ops->owner_window(f) : 0;
    if (W > 0)
        return move_windows(f, x, dir, W);
    return move_one(f, x, dir);
}

static int move_one(tagg_file_t *f, const tagg_extents_t *x, tagg_dir_t dir)
{
    tagg_engine_t *e = f->backend;
    tagg_call_t    c;
    double t0 = MPI_Wtime();
    int    rc = tagg_engine_plan(f, e, x, &c), plan_rc = rc;
    double t1 = MPI_Wtime();
    if (rc == 1)
        rc = 0; /* nothing to move anywhere */
    else if (rc == 2)
        rc = tagg_io_direct(f, x, dir); /* no aggregation: each rank its own extents, in order */
    else if (rc == 0) {
        rc = dir == TAGG_WRITE ? tagg_engine_write(f, e, &c) : tagg_engine_read(f, e, &c);
        f->stats.aggr_calls[dir] += f->rank == 0;
    }
    if (f->cfg.verbose >= 2 && f->rank == 0 && (plan_rc == 1 || plan_rc == 2)) {
        printf("tagg: %s call not aggregated (%s) plan=%.6fs access=%.6fs\n", dir == TAGG_WRITE ? "write" : "read",
               plan_rc == 1 ? "nothing to move" : "direct", t1 - t0, MPI_Wtime() - t1);
        fflush(stdout);
    }
    if (f->cfg.verbose >= 2 && f->rank == 0 && plan_rc == 0 && c.aggr) {
        printf("tagg: %s call range=[%llu,%llu) domains=%d domain_size=%llu rounds=%d aggregators=", 
               dir == TAGG_WRITE ? "write" : "read", (unsigned long long)c.lo, (unsigned long long)c.hi, c.ndom,
               (unsigned long long)c.dsize, c.nrounds);
        for (int d = 0; d < c.ndom && d < 16; d++)
            printf("%s%d", d ? "," : "", c.aggr[d]);
        printf("%s per_node=%d throttle=%d plan=%.6fs move=%.6fs\n", c.ndom > 16 ? ",..." : "", c.per_node,
               c.throttle, t1 - t0, MPI_Wtime() - t1);
        fflush(stdout);
    }
    tagg_engine_call_free(&c);
    return rc;
}

static int tapioca_write(tagg_file_t *f, const tagg_extents_t *x, bool collective)
{
    return move(f, x, collective, TAGG_WRITE);
}

static int tapioca_read(tagg_file_t *f, const tagg_extents_t *x, bool collective)
{
    return move(f, x, collective, TAGG_READ);
}

static void tapioca_describe(const tagg_file_t *f, char *buf, size_t len)
{
    const tagg_engine_t *e = f->backend;
    snprintf(buf, len, "%s", e ? e->tier_text : "");
}

const tagg_backend_ops_t tagg_backend_tapioca = {
    .describe = tapioca_describe,
    .name  = "tapioca",
    .open  = tapioca_open,
    .close = tapioca_close,
    .write = tapioca_write,
    .read  = tapioca_read,
};
