/* Backend "tapioca": the aggregation engine (engine.h) behind the entry point.
 * Collective calls are planned and moved in rounds by elected aggregators;
 * independent calls go straight to the store. This file holds the per-file
 * engine state: the machine description for the cost model (tier figures from
 * the model's table or from a tier file, `tiers=`) and the aggregation
 * buffers, in the tier engine_tier.c chooses. */
#include "engine.h"
#include "error.h"
#include "io.h"
#include "iothread.h"
#include "mpi_wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
 * The cache holds up to TAGG_RES_SLOTS sets, one per key (buffers, topology,
 * tiers), the least recently used one given up for a new key: a process that
 * alternates files of two configurations (node-local subfiles and a shared
 * file, or two buffer sizes) makes each set once, not at every file (11 ms a
 * file for a 2 x 4 MiB window on this 2-core machine, session 23).
 * Decisions about the cache ride in the describe rows (a hit, or the set this
 * rank would give up), so a rank whose cache differs (a configuration that
 * differs between ranks) cannot desynchronise the collectives: the file then
 * gets private resources and no set is given up.
 * A consequence users see: a tier that cannot be allocated (out of space in
 * the NVR directory with a forced tier) fails the file's first collective
 * write or read, on every rank, not H5Fcreate. */
typedef struct tagg_engine_res {
    tagg_topology_t    *topo;
    tagg_engine_node_t *nodes;          /* [nnodes] what each node offers */
    int                *node_tier;      /* [nnodes] tier of each node's buffers */
    tagg_tier_buf_t     buf;            /* window and memory, made at the first aggregated call */
    char                tier_text[96];  /* for the summary */
    tagg_engine_mrow_t  row;            /* this rank's machine row they were made from */
    char               *key;            /* what it was made for (res_key) */
    uint64_t            hash;           /* of key */
    int                 users;     /* open files using it */
    int                 cached;    /* the world cache owns it */
} res_t;

#define TAGG_RES_SLOTS 4
static res_t *world_res[TAGG_RES_SLOTS]; /* cached sets, most recently used first; NULL: free */
static int    world_keyval = MPI_KEYVAL_INVALID;

static void res_free(res_t *r)
{
    if (!r)
        return;
    tagg_tier_free(&r->buf);
    if (r->topo)
        tagg_topology_free(r->topo);
    free(r->nodes), free(r->node_tier);
    free(r->key);
    free(r);
}

static uint64_t hash_text(const char *s)
{
    uint64_t h = tagg_tune_checksum(s, strlen(s)); /* the model's FNV-1a; 0 means none */
    return h ? h : 1;
}

static int res_finalize(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)value, (void)extra;
    for (int i = 0; i < TAGG_RES_SLOTS; i++)
        res_free(world_res[i]), world_res[i] = NULL;
    return MPI_SUCCESS;
}

/* Moves slot i to the front (most recently used); r into the front when i < 0. */
static void res_touch(int i, res_t *r)
{
    if (i >= 0)
        r = world_res[i];
    else
        i = TAGG_RES_SLOTS - 1; /* the caller emptied the last slot */
    memmove(&world_res[1], &world_res[0], (size_t)i * sizeof world_res[0]);
    world_res[0] = r;
}

/* The slot of the set made for key, -1 if none. */
static int res_find(const char *key)
{
    uint64_t h = key ? hash_text(key) : 0;
    for (int i = 0; key && i < TAGG_RES_SLOTS; i++)
        if (world_res[i] && world_res[i]->hash == h && !strcmp(world_res[i]->key, key))
            return i;
    return -1;
}

/* The slot a new set takes: the last one (free slots are the last ones) when
 * free, else the least recently used set no open file uses; -1 when every
 * set is in use. */
static int res_slot_for_new(void)
{
    for (int i = TAGG_RES_SLOTS - 1; i >= 0; i--)
        if (!world_res[i] || world_res[i]->users == 0)
            return i;
    return -1;
}

/* What a miss would give up for a new set (res_slot_for_new): 0 for a free
 * slot, else that set's hash, or TAGG_RES_FULL when every set is in use (the
 * new one then stays private). */
#define TAGG_RES_FULL UINT64_MAX
static uint64_t res_victim(void)
{
    int i = res_slot_for_new();
    return i < 0 ? TAGG_RES_FULL : world_res[i] ? world_res[i]->hash : 0;
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

/* Files on a communicator congruent to MPI_COMM_WORLD share the cached
 * resources. Asynchronous files run their rounds on worker threads,
 * concurrently with other files' calls: they get private resources. */
static int world_file(const tagg_file_t *f)
{
    int world = MPI_UNEQUAL;
    MPI_Comm_compare(f->comm, MPI_COMM_WORLD, &world);
    return (world == MPI_IDENT || world == MPI_CONGRUENT) && !f->cfg.async;
}

/* What rides in this rank's describe row about the cache (tagg_engine_describe):
 * the hash of the cached set made for this file's key (a hit), or, flagged
 * TAGG_RES_MISS, what a miss would give up (res_victim). A rank that hits
 * sends the machine row the set was made from instead of measuring again
 * (free memory, statvfs: a dozen system calls per file); it counts only when
 * another rank misses, and then describes this node as it was when the set
 * was made (a tier that has since run out of space is left out at
 * allocation, engine_tier.c). */
static void res_offer(tagg_file_t *f, tagg_engine_t *e, uint64_t *hash, uint32_t *flags,
                      const tagg_engine_mrow_t **known)
{
    *hash = 0, *flags = 0, *known = NULL;
    if (e->res)
        return;
    if (!e->res_key)
        e->res_key = res_key(f, e);
    if (!world_file(f)) {
        *flags = TAGG_RES_MISS, *hash = TAGG_RES_FULL; /* private resources */
        return;
    }
    int i = res_find(e->res_key);
    if (i >= 0)
        *hash = world_res[i]->hash, *known = &world_res[i]->row;
    else
        *flags = TAGG_RES_MISS, *hash = res_victim();
    *flags |= TAGG_RES_WORLD;
}

static void res_use(tagg_file_t *f, tagg_engine_t *e, res_t *r, const char *how)
{
    r->users++;
    if (f->cfg.verbose >= 2 && f->rank == 0) {
        printf("tagg: engine resources for file=%s: %s\n", f->path, how);
        fflush(stdout);
    }
    if (e->topo && e->topo != r->topo) /* loaded at open; the cached one is the same file */
        tagg_topology_free(e->topo);
    e->res = r, e->topo = r->topo, e->node_tier = r->node_tier;
    e->tier = r->node_tier[tagg_topology_rank_node(r->topo, f->rank)];
    memcpy(e->tier_text, r->tier_text, sizeof e->tier_text);
}

/* Collective, at a file's first collective raw-data call, after the describe
 * gather (whose rows say whether every rank holds the same cached resources):
 * the machine description, from the cache or made (engine_tier.c; *made 1). 0
 * or -1 on every rank. */
static int res_ready(tagg_file_t *f, tagg_engine_t *e, int *made)
{
    *made = 0;
    if (e->res)
        return 0;
    const tagg_engine_row_t *rows = e->rows;
    uint64_t h = rows[0].res_hash;
    uint32_t fl = rows[0].res_flags;
    int      same = 1; /* every rank sent the same word: the same hit, or the same set to give up */
    for (int r = 1; r < f->size; r++)
        same &= rows[r].res_hash == h && rows[r].res_flags == fl;
    int world = (fl & TAGG_RES_WORLD) != 0;
    if (same && world && !(fl & TAGG_RES_MISS)) {
        int i = res_find(e->res_key); /* every rank holds it: it offered it */
        res_use(f, e, world_res[i], "from the cache");
        res_touch(i, NULL);
        return 0;
    }
    /* cached only when every rank agrees on the slot it takes */
    int cache = same && world && (fl & TAGG_RES_MISS) && h != TAGG_RES_FULL;
    if (cache && h != 0) { /* every rank frees the set it named in res_offer, the same one, so the same window */
        int i = res_slot_for_new();
        if (i >= 0 && world_res[i] && world_res[i]->hash == h) { /* nothing ran in between: it is */
            res_free(world_res[i]);
            memmove(&world_res[i], &world_res[i + 1], (size_t)(TAGG_RES_SLOTS - 1 - i) * sizeof world_res[0]);
            world_res[TAGG_RES_SLOTS - 1] = NULL;
        }
    }
    res_t *r = calloc(1, sizeof *r);
    if (!r || !e->res_key) { /* takes part in the machine step's gather and agreement with nothing */
        free(r);
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        tagg_topology_t    *t = NULL;
        tagg_engine_node_t *n = NULL;
        int                *nt = NULL;
        if (tagg_engine_machine(f, e, &t, &n, &nt) == 0) {
            if (t)
                tagg_topology_free(t), e->topo = e->topo == t ? NULL : e->topo;
            free(n), free(nt);
        }
        return tagg_agree(f->comm, -1, "describing the machine") < 0 ? -1 : -1;
    }
    r->buf.win = MPI_WIN_NULL;
    /* the machine step fails alike everywhere, except for memory; one agreement, once per communicator */
    int mrc = tagg_engine_machine(f, e, &r->topo, &r->nodes, &r->node_tier);
    if (tagg_agree(f->comm, mrc, "describing the machine") < 0) {
        if (mrc == 0) {
            if (r->topo)
                tagg_topology_free(r->topo), e->topo = e->topo == r->topo ? NULL : e->topo;
            free(r->nodes), free(r->node_tier);
        }
        free(r);
        return -1;
    }
    if (!r->topo) /* from the topology file loaded at open: the resources own it now */
        r->topo = e->topo;
    r->row = e->rows[f->rank].machine;
    r->key = strdup(e->res_key), r->hash = hash_text(e->res_key);
    if (cache && r->key) {
        r->cached = tagg_at_finalize(res_finalize, &world_keyval) == 0; /* else freed at close like any other */
        if (r->cached)
            res_touch(-1, r); /* the last slot is free: given up above, or never used */
    }
    snprintf(r->tier_text, sizeof r->tier_text, "tier=%s", e->tiers.tier[r->node_tier[tagg_topology_rank_node(r->topo, f->rank)]].name);
    res_use(f, e, r, r->cached ? "made, cached" : "made, private");
    *made = 1;
    return 0;
}

/* Collective, at the first call that aggregates: the aggregation buffers. */
static int res_buffers(tagg_file_t *f, tagg_engine_t *e)
{
    res_t *r = e->res;
    if (r->buf.win == MPI_WIN_NULL &&
        tagg_engine_buffers(f, e, r->nodes, r->node_tier, &r->buf, r->tier_text, sizeof r->tier_text) < 0)
        return -1;
    e->buf = r->buf, e->win = r->buf.win, e->base = r->buf.base;
    e->tier = r->node_tier[tagg_topology_rank_node(r->topo, f->rank)];
    memcpy(e->tier_text, r->tier_text, sizeof e->tier_text);
    return 0;
}

static void engine_free(tagg_engine_t *e)
{
    if (!e)
        return;
    free(e->rows), free(e->req), free(e->prev_rows), free(e->res_key);
    tagg_call_plan_free(&e->prev_plan);
    tagg_engine_tune_close(e);
    tagg_iothread_free(e->io);
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
    e->rec_fd  = -1;
    e->bufsize = (uint64_t)f->cfg.buffer_size;
    e->nbuf    = f->cfg.buffers;
    if (f->cfg.tiers && *f->cfg.tiers) { /* measured figures (tagg-calibrate) */
        tagg_err_t err;
        if (tagg_tiers_load(f->cfg.tiers, &e->tiers, &err) < 0) {
            TAGG_ERR(TAGG_E_CONFIG, "tiers: %s", err.msg);
            free(e);
            return -1;
        }
        if (tagg_fs_perf_load(f->cfg.tiers, &e->fs, &err) < 0 ||
            tagg_fs_read_perf_load(f->cfg.tiers, &e->fs_read, &err) < 0) {
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
    tagg_engine_probe_tiers(f, e);
    e->rows      = malloc((size_t)f->size * sizeof *e->rows);
    e->req       = malloc((size_t)f->size * sizeof *e->req);
    e->prev_rows = malloc((size_t)f->size * sizeof *e->prev_rows);
    if (!e->rows || !e->req || !e->prev_rows) {
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        engine_free(e);
        return -1;
    }
    /* A topology file is read and checked here, so that a bad one fails the
     * file's open (local work; the caller agrees), not its first write. */
    if (f->cfg.topology && *f->cfg.topology) {
        tagg_err_t err;
        if (tagg_topology_load(f->cfg.topology, &e->topo, &err) < 0) {
            TAGG_ERR(TAGG_E_CONFIG, "topology: %s", err.msg);
            e->topo = NULL;
            engine_free(e); /* the rows above too */
            return -1;
        }
        if (tagg_topology_nranks(e->topo) < f->size) {
            TAGG_ERR(TAGG_E_CONFIG, "topology %s describes %d ranks, the file's communicator has %d",
                     f->cfg.topology, tagg_topology_nranks(e->topo), f->size);
            engine_free(e); /* frees the topology (no resources yet) */
            return -1;
        }
    }
    if (tagg_engine_tune_open(f, e) < 0) { /* local; the caller agrees (the model: tapioca_open_shared) */
        engine_free(e);
        return -1;
    }
    f->backend = e;
    return 0;
}

static int tapioca_open_shared(tagg_file_t *f, int ok)
{
    return tagg_engine_tune_share(f, ok ? f->backend : NULL);
}

static int tapioca_close(tagg_file_t *f)
{
    tagg_engine_check_close(f, f->backend); /* the measured check's last window of this file */
    engine_free(f->backend);
    f->backend = NULL;
    return 0;
}

static int move_one(tagg_file_t *f, const tagg_extents_t *x, tagg_dir_t dir);

/* ---- speculative direct access (tagg/callplan.h: tagg_spec_*) --------------
 * The shapes a rank guesses direct outlive a file on MPI_COMM_WORLD (an
 * application writes the same decomposition into one file per step): one set
 * per resource key, layout, way of reading (read_unit), file system as this
 * rank sees it and whether the file's writes and reads bypass the page cache
 * (direct_io), in the process: what a shape costs depends on all of them (a
 * subfiled file's reads aggregate where a shared file's go direct; a
 * checkpoint on the parallel file system, an analysis file on local disk; a
 * process's first file on a rotational local disk is written buffered, its
 * later synced ones direct, which take turns: session 41).
 * Files on other communicators, and asynchronous ones (their calls run on
 * worker threads), keep their own. */
#define TAGG_SPEC_SLOTS 4
static struct {
    uint64_t    key;
    tagg_spec_t s;
} world_spec[TAGG_SPEC_SLOTS];
static int world_spec_next;

static tagg_spec_t *spec_of(tagg_file_t *f, tagg_engine_t *e)
{
    if (!world_file(f) || !e->res_key)
        return &e->spec;
    if (!e->spec_key) {
        char     text[4200];
        uint64_t ru = f->store_ops->read_unit ? f->store_ops->read_unit(f) : 0;
        int      dw = f->store_ops->dio_block && f->store_ops->dio_block(f, 1) != 0;
        int      dr = f->store_ops->dio_block && f->store_ops->dio_block(f, 0) != 0;
        snprintf(text, sizeof text, "%s|%s|%llu|%u|%d%d", e->res_key, f->store_ops->name, (unsigned long long)ru,
                 tagg_file_fs_view(f), dw, dr);
        e->spec_key = hash_text(text);
    }
    uint64_t h = e->spec_key;
    for (int i = 0; i < TAGG_SPEC_SLOTS; i++)
        if (world_spec[i].key == h)
            return &world_spec[i].s;
    int i = world_spec_next;
    world_spec_next = (i + 1) % TAGG_SPEC_SLOTS;
    memset(&world_spec[i], 0, sizeof world_spec[i]);
    world_spec[i].key = h;
    return &world_spec[i].s;
}

/* Whether this file's calls may be accessed before their plan: the model
 * decides them (aggregate=auto, no aggregator count, no tuning model) or they
 * are all direct (aggregate=never), and no layout constraint sends stripes to
 * their nodes' aggregators. */
static int spec_allowed(const tagg_file_t *f, const tagg_engine_t *e)
{
    if (!f->cfg.speculate || (f->store_ops->owner && f->store_ops->owner(f, 0, 0) >= 0))
        return 0;
    return f->cfg.aggregate == TAGG_AGGREGATE_NEVER ||
           (f->cfg.aggregate == TAGG_AGGREGATE_AUTO && f->cfg.aggregators <= 0 && !e->tune);
}

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
    int code = tagg_mpi_allreduce(in, g, 3, MPI_INT64_T, MPI_MIN, f->comm);
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
    tagg_engine_t *e = f->backend; /* record=: the call's start, its file-system seconds */
    e->rec_t0 = MPI_Wtime(), e->t_fs = 0, e->rec_pending = 0;
    int W = f->store_ops->owner_window ? f->store_ops->owner_window(f) : 0;
    if (W > 0)
        return move_windows(f, x, dir, W);
    return move_one(f, x, dir);
}

/* One collective call: describe + gather, resources when first needed, the
 * model's plan, then direct access or the round loop. */
static int move_one(tagg_file_t *f, const tagg_extents_t *x, tagg_dir_t dir)
{
    tagg_engine_t *e = f->backend;
    tagg_call_t    c;
    uint64_t       h;
    uint32_t       fl;
    const tagg_engine_mrow_t *known;
    static const tagg_extents_t none = {0};
    memset(&c, 0, sizeof c);
    tagg_engine_tune_probe(f, e, x); /* before any access of this call */
    res_offer(f, e, &h, &fl, &known);
    /* speculative direct access: this rank's runs first, when it guesses the
     * plan will send them direct; its row then says they are done (or failed) */
    tagg_spec_t    *sp = spec_allowed(f, e) ? spec_of(f, e) : NULL;
    tagg_req_desc_t mine;
    int             spec = 0;
    double          tspec = MPI_Wtime();
    if (sp) {
        tagg_engine_row_of(x, &mine);
        spec = x->n && !f->io_failed &&
               (f->cfg.aggregate == TAGG_AGGREGATE_NEVER || tagg_spec_guess(sp, dir == TAGG_READ, &mine));
    }
    uint32_t rflags = 0;
    if (spec)
        rflags = TAGG_REQ_DONE | (tagg_io_direct(f, x, dir) < 0 ? TAGG_REQ_FAILED : 0u);
    tspec = MPI_Wtime() - tspec;
    e->spec_early += spec;
    e->t_fs += spec ? tspec : 0;
    double t0 = MPI_Wtime();
    if (tagg_engine_describe(f, e, x, dir, rflags, h, fl, known) < 0)
        return -1;
    tagg_engine_tune_note(f, e, dir);
    int raw = 0, failed = 0;
    for (int r = 0; r < f->size; r++)
        raw |= e->rows[r].req.bytes && (e->rows[r].req.flags & TAGG_REQ_RAW), failed |= (e->rows[r].req.flags & TAGG_REQ_FAILED) != 0;
    double tr = MPI_Wtime();
    int    made = 0;
    if (raw && !failed && res_ready(f, e, &made) < 0) /* the machine and the tiers, once per communicator */
        return -1;
    tr = MPI_Wtime() - tr;
    /* what this call makes (records, tuning): the same on every rank, the
     * resources' decision being agreed and the buffers made once per resources */
    e->setup = made ? 2 : e->res && e->res->buf.win == MPI_WIN_NULL ? 1 : 0;
    double tb = 0;
    int rc = tagg_engine_plan(f, e, &c, dir);
    double t1 = MPI_Wtime();
    if (spec)
        x = &none; /* accessed: nothing of this rank's is left to move */
    if (sp && (c.plan.action == TAGG_CALL_DIRECT || c.plan.action == TAGG_CALL_AGGREGATE))
        tagg_spec_learn(sp, dir == TAGG_READ, &mine, &c.plan);
    if (c.plan.action == TAGG_CALL_FAILED || (rc == 0 && c.plan.all_done))
        f->io_agreed = 1; /* every rank saw every rank's outcome in the rows: no agreement after */
    e->spec_calls += rc == 0 && c.plan.all_done && f->rank == 0;
    if (rc == 0 && c.plan.action == TAGG_CALL_DIRECT && !c.plan.all_done) {
        rc = tagg_io_direct(f, x, dir); /* each rank its own extents, in order */
        e->t_fs += MPI_Wtime() - t1;     /* all of it is file-system calls */
    }
    else if (rc == 0 && c.plan.action == TAGG_CALL_AGGREGATE) {
        tb     = MPI_Wtime();
        int br = res_buffers(f, e); /* agreed */
        tb     = MPI_Wtime() - tb;
        if (br < 0)
            rc = -1;
        else {
            tagg_engine_pieces(f, e, x, &c);
            rc = dir == TAGG_WRITE ? tagg_engine_write(f, e, &c) : tagg_engine_read(f, e, &c);
            f->stats.aggr_calls[dir] += f->rank == 0;
        }
    }
    if (f->rank == 0 && c.plan.action == TAGG_CALL_DIRECT && c.plan.by_cost)
        e->direct_calls++;
    if (f->cfg.verbose >= 2 && f->rank == 0 && c.plan.action != TAGG_CALL_AGGREGATE) {
        printf("tagg: %s call not aggregated (%s) cost_direct=%.3gs cost_aggregated=%.3gs plan=%.6fs access=%.6fs\n",
               dir == TAGG_WRITE ? "write" : "read", c.plan.why ? c.plan.why : "failed", c.plan.cost_direct,
               c.plan.cost_aggr, t1 - t0, MPI_Wtime() - t1 + (spec ? tspec : 0));
        fflush(stdout);
    }
    if (f->cfg.verbose >= 2 && f->rank == 0 && c.plan.action == TAGG_CALL_AGGREGATE && c.aggr) {
        printf("tagg: %s call range=[%llu,%llu) domains=%d domain_size=%llu rounds=%d aggregators=",
               dir == TAGG_WRITE ? "write" : "read", (unsigned long long)c.lo, (unsigned long long)c.hi, c.ndom,
               (unsigned long long)c.dsize, c.nrounds);
        for (int d = 0; d < c.ndom && d < 16; d++)
            printf("%s%d", d ? "," : "", c.aggr[d]);
        printf("%s per_node=%d throttle=%d why=\"%s\" cost_direct=%.3gs cost_aggregated=%.3gs plan=%s%s "
               "plan=%.6fs (resources %.6fs) move=%.6fs (buffers %.6fs)\n",
               c.ndom > 16 ? ",..." : "", c.per_node, c.throttle, c.plan.why, c.plan.cost_direct, c.plan.cost_aggr,
               c.reused ? "reused" : "new", c.plan.exact ? "" : ",coverage-exchange", t1 - t0, tr, MPI_Wtime() - t1, tb);
        fflush(stdout);
    }
    if (rc == 0 && f->rank == 0 && f->cfg.record && *f->cfg.record) /* appended after the agreement */
        tagg_engine_record(f, e, &c, dir, t1 - t0, MPI_Wtime() - t1 + (spec ? tspec : 0));
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

static void tapioca_done(tagg_file_t *f, tagg_dir_t dir, int rc)
{
    if (f->backend) {
        tagg_engine_record_done(f, f->backend, dir, rc);
        tagg_engine_check_done(f, f->backend, dir, rc);
    }
}

static void tapioca_synced(tagg_file_t *f, double seconds, int rc)
{
    tagg_engine_check_synced(f, f->backend, seconds, rc);
}

static void tapioca_describe(const tagg_file_t *f, char *buf, size_t len)
{
    const tagg_engine_t *e = f->backend;
    if (!e) {
        snprintf(buf, len, "%s", "");
        return;
    }
    /* rank 0's counts: every rank makes the same choices */
    int n = snprintf(buf, len, "%s%saggregate=%s direct_by_model=%llu plans_reused=%llu speculated=%llu accessed_early=%llu",
                     e->tier_text, e->tier_text[0] ? " " : "", tagg_aggregate_names[f->cfg.aggregate],
                     (unsigned long long)e->direct_calls, (unsigned long long)e->reused,
                     (unsigned long long)e->spec_calls, (unsigned long long)e->spec_early);
    if (e->tune && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n,
                 " tuned_calls=%llu tuning_kept=%llu tuning_outside=%llu tuning_trials=%llu tuning_overruled=%llu",
                 (unsigned long long)e->tune_calls, (unsigned long long)e->tune_kept,
                 (unsigned long long)e->tune_outside, (unsigned long long)e->tune_trials,
                 (unsigned long long)e->tune_overruled);
}

const tagg_backend_ops_t tagg_backend_tapioca = {
    .describe = tapioca_describe,
    .name  = "tapioca",
    .open  = tapioca_open,
    .open_shared = tapioca_open_shared,
    .close = tapioca_close,
    .write = tapioca_write,
    .read  = tapioca_read,
    .done  = tapioca_done,
    .synced = tapioca_synced,
};
