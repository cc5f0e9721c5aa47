/* Backend "tapioca": the aggregation engine (engine.h) behind the entry point.
 * Collective calls are planned and moved in rounds by elected aggregators;
 * independent calls go straight to the store. This file holds the per-file
 * engine state: the machine description for the cost model (tier figures from
 * the model's table or from a tier file, `tiers=`) and the aggregation
 * buffers, in the tier engine_tier.c chooses. */
#include "engine.h"
#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Figures for the real machine until calibration (issue 5) measures them:
 * 1 us per hop, 10 GB/s links. Only ratios matter for the election. */
#define GENERIC_LATENCY 1e-6
#define GENERIC_BANDWIDTH 10e9

/* Which node each rank is on: from the topology file when one is configured
 * (several virtual nodes on one host), else from the shared-memory split. */
static int machine(tagg_file_t *f, tagg_engine_t *e)
{
    tagg_err_t err;
    int        rc = 0;
    if (f->cfg.topology && *f->cfg.topology) {
        if (tagg_topology_load(f->cfg.topology, &e->topo, &err) < 0) {
            TAGG_ERR(TAGG_E_CONFIG, "topology: %s", err.msg);
            return -1;
        }
        if (tagg_topology_nranks(e->topo) < f->size) {
            TAGG_ERR(TAGG_E_CONFIG, "topology %s describes %d ranks, the file's communicator has %d",
                     f->cfg.topology, tagg_topology_nranks(e->topo), f->size);
            return -1;
        }
        return 0;
    }
    MPI_Comm node = MPI_COMM_NULL, leaders = MPI_COMM_NULL;
    int      lrank = 0, node_id = 0;
    int     *rank_node = malloc((size_t)f->size * sizeof *rank_node);
    if (MPI_Comm_split_type(f->comm, MPI_COMM_TYPE_SHARED, f->rank, MPI_INFO_NULL, &node) != MPI_SUCCESS) {
        TAGG_ERR(TAGG_E_MPI, "MPI_Comm_split_type failed");
        free(rank_node);
        return -1;
    }
    MPI_Comm_rank(node, &lrank);
    MPI_Comm_split(f->comm, lrank == 0 ? 0 : MPI_UNDEFINED, f->rank, &leaders);
    if (leaders != MPI_COMM_NULL) {
        MPI_Comm_rank(leaders, &node_id);
        MPI_Comm_free(&leaders);
    }
    MPI_Bcast(&node_id, 1, MPI_INT, 0, node);
    MPI_Comm_free(&node);
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

static void engine_free(tagg_engine_t *e)
{
    if (!e)
        return;
    tagg_tier_free(&e->buf); /* the window and the tier's memory */
    if (e->topo)
        tagg_topology_free(e->topo);
    free(e);
}

static int tapioca_open(tagg_file_t *f)
{
    tagg_engine_t *e  = calloc(1, sizeof *e);
    int            rc = 0;
    if (!e) {
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        rc = -1;
    }
    if (tagg_agree(f->comm, rc, "starting the engine") < 0) {
        free(e);
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
            rc = -1;
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
        rc = -1;
    }
    if (rc == 0)
        rc = machine(f, e);
    if (tagg_agree(f->comm, rc, "describing the machine") < 0 || tagg_engine_tier_setup(f, e) < 0) {
        engine_free(e);
        return -1;
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

static int move(tagg_file_t *f, const tagg_extents_t *x, bool collective, tagg_dir_t dir)
{
    tagg_engine_t *e = f->backend;
    tagg_call_t    c;
    if (!collective)
        return tagg_io_direct(f, x, dir);
    int rc = tagg_engine_plan(f, e, x, &c);
    if (rc == 1)
        rc = 0; /* nothing to move anywhere */
    else if (rc == 2)
        rc = tagg_io_direct(f, x, dir); /* self-overlapping pieces: in order, no aggregation */
    else if (rc == 0)
        rc = dir == TAGG_WRITE ? tagg_engine_write(f, e, &c) : tagg_engine_read(f, e, &c);
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
