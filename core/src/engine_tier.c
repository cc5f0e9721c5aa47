/* The engine's aggregation memory: which tier each node's buffers live in,
 * and their allocation (MA-TAPIOCA section 3.2, MA-TAPIOCA_AGGRTIER and
 * MA-TAPIOCA_PERSISTENCY; seed 002).
 *
 * The window is made at the file's first collective transfer (backend_tapioca.c:
 * tagg_engine_ready), before that request is planned, so the choice is made
 * once per file and per node, for the configured footprint:
 *   1. the first rank of each node measures what the node has left in each tier
 *      of the model's table (tier ops: free memory, memkind, statvfs of the NVR
 *      directory), caps it by the table's capacity and by hbm_capacity /
 *      dram_capacity / nvr_capacity, and notes unavailable tiers with the
 *      reason; the node's ranks receive the same figures (MPI_Bcast);
 *   2. aggr_tier=dram|hbm|nvr|test forces the tier (an error when it is
 *      unavailable or lacks the required persistency); aggr_tier=auto lets the
 *      model choose (tagg_tier_choose: min Cost_A + Cost_T over the tiers that
 *      meet the capacity rule for ranks x buffers x buffer_size and the
 *      persistency rule). Every rank of a node computes the same choice from
 *      the same figures, so no further exchange is needed;
 *   3. the buffers are allocated collectively (tagg_tier_alloc). When a tier
 *      runs out of space while allocating (ENOSPC / no memory) on a rank, and
 *      the tier was the model's choice, that node leaves the tier out and every
 *      node allocates again (next-best tier); when it was forced, or no tier is
 *      left, every rank fails that transfer with the reason. None of its data
 *      has moved yet, so nothing acknowledged can be lost. */
#include "engine.h"
#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REASON_LEN 160

typedef struct {
    tagg_node_tiers_t t;
    char              reason[TAGG_MAX_TIERS][REASON_LEN]; /* why unusable, or a note (emulated) */
    int               leader; /* file rank of the node's first rank */
} node_info_t;

static uint64_t cap_of(const tagg_config_t *cfg, tagg_tier_kind_t k)
{
    int64_t c = k == TAGG_TIER_HBM ? cfg->hbm_capacity : k == TAGG_TIER_DRAM ? cfg->dram_capacity
              : k == TAGG_TIER_NVR ? cfg->nvr_capacity : 0;
    return c > 0 ? (uint64_t)c : UINT64_MAX;
}

static uint64_t umin(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* Step 1, on the node's first rank. */
static void measure(const tagg_file_t *f, const tagg_engine_t *e, node_info_t *n)
{
    for (int i = 0; i < e->tiers.ntiers; i++) {
        const tagg_tier_t     *t   = &e->tiers.tier[i];
        const tagg_tier_ops_t *ops = tagg_tier_for_kind(t->kind);
        if (i == e->tiers.target)
            continue;
        if (!ops) {
            snprintf(n->reason[i], REASON_LEN, "no tier implementation for kind %s", tagg_tier_kind_name(t->kind));
            continue;
        }
        n->t.usable[i] = ops->available(&f->cfg, n->reason[i], REASON_LEN);
        if (n->t.usable[i])
            n->t.capacity[i] = umin(umin(ops->capacity(&f->cfg), t->capacity), cap_of(&f->cfg, t->kind));
    }
}

static void describe_choice(tagg_engine_t *e, const char *names, const char *fallback, int emulated)
{
    snprintf(e->tier_text, sizeof e->tier_text, "tier=%s%s%s%s", names, fallback[0] ? " tier_fallback=" : "",
             fallback, emulated ? " hbm=emulated" : "");
}

/* Registry names of the tiers in use, over all ranks ("DRAM" or "DRAM,NVR"). */
static int tiers_in_use(tagg_file_t *f, tagg_engine_t *e, const char *fallback, int emulated)
{
    int mine = 0, all_mask = 0;
    for (int i = 0; tagg_tier_registry[i]; i++)
        if (tagg_tier_registry[i] == e->buf.ops)
            mine = 1 << i;
    int code = MPI_Allreduce(&mine, &all_mask, 1, MPI_INT, MPI_BOR, f->comm);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Allreduce (tiers in use)", code);
        return -1;
    }
    char names[64] = "";
    for (int i = 0; tagg_tier_registry[i]; i++)
        if (all_mask & (1 << i))
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", names[0] ? "," : "",
                     tagg_tier_registry[i]->name);
    int em = 0;
    MPI_Allreduce(&emulated, &em, 1, MPI_INT, MPI_MAX, f->comm);
    describe_choice(e, names, fallback, em);
    return 0;
}

int tagg_engine_tier_setup(tagg_file_t *f, tagg_engine_t *e, MPI_Comm node)
{
    node_info_t n;
    int         nrank = 0, nsize = 1, rc = 0;
    size_t      size = (size_t)(e->bufsize * (uint64_t)e->nbuf);
    char        fallback[64] = "";
    memset(&n, 0, sizeof n);
    e->tier = e->tiers.source;
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    if (nrank == 0) {
        measure(f, e, &n);
        n.leader = f->rank;
    }
    MPI_Bcast(&n, (int)sizeof n, MPI_BYTE, 0, node);
    n.t.ranks = nsize;

    /* persistency and forced tiers */
    e->opts.persistency = f->cfg.persistency == TAGG_PERSISTENCY_JOB ? TAGG_PERSIST_JOB : TAGG_PERSIST_NONE;
    const tagg_tier_ops_t *forced = NULL;
    int                    emulated = 0;
    if (f->cfg.aggr_tier != TAGG_AGGR_TIER_AUTO) {
        char reason[REASON_LEN] = "";
        forced                  = tagg_tier_find(tagg_aggr_tier_names[f->cfg.aggr_tier]);
        if (!forced || !forced->available(&f->cfg, reason, sizeof reason)) {
            TAGG_ERR(TAGG_E_CONFIG, "aggr_tier=%s: the tier is not available: %s", tagg_aggr_tier_names[f->cfg.aggr_tier],
                     forced ? reason : "not in the registry");
            rc = -1;
        }
        else if (forced->persistency() < e->opts.persistency) {
            TAGG_ERR(TAGG_E_CONFIG, "aggr_tier=%s: the tier keeps no data for the job (persistency=%s needs NVR)",
                     tagg_aggr_tier_names[f->cfg.aggr_tier], tagg_persistency_names[f->cfg.persistency]);
            rc = -1;
        }
        emulated = forced && forced->kind == TAGG_TIER_HBM && !strncmp(reason, "emulated", 8);
        int idx = forced ? tagg_tiers_find(&e->tiers, tagg_tier_kind_name(forced->kind)) : -1;
        e->tier = idx >= 0 && idx != e->tiers.target ? idx : e->tiers.source;
    }
    if (tagg_agree(f->comm, rc, "choosing the aggregation tier") < 0)
        return -1;

    unsigned excluded = 0;
    for (int attempt = 0;; attempt++) {
        const tagg_tier_ops_t *ops = forced;
        tagg_tier_choice_t     ch;
        tagg_err_t             err;
        rc = 0;
        if (!forced) {
            if (tagg_tier_choose(e->topo, &e->tiers, &e->opts, &n.t, n.leader, excluded, &ch, &err) < 0) {
                TAGG_ERR(TAGG_E_CONFIG, "tier choice: %s", err.msg);
                rc = -1;
            }
            else if (ch.tier < 0) {
                TAGG_ERR(TAGG_E_CONFIG,
                         "no memory tier can hold the aggregation buffers of this node (%d ranks x %d buffers x %llu "
                         "bytes, persistency=%s): %s",
                         nsize, e->nbuf, (unsigned long long)e->bufsize, tagg_persistency_names[f->cfg.persistency],
                         ch.why);
                rc = -1;
            }
            else {
                ops      = tagg_tier_for_kind(e->tiers.tier[ch.tier].kind);
                e->tier  = ch.tier;
                emulated = ops->kind == TAGG_TIER_HBM && !strncmp(n.reason[ch.tier], "emulated", 8);
            }
            if (f->cfg.verbose >= 2 && nrank == 0 && rc == 0) {
                printf("tagg: tier choice on the node of rank %d: %s (Cost_A %.3g s + Cost_T %.3g s)%s%s\n", f->rank,
                       e->tiers.tier[ch.tier].name, ch.cost.cost_a, ch.cost.cost_t, ch.why[0] ? "; left out: " : "",
                       ch.why);
                fflush(stdout);
            }
        }
        if (tagg_agree(f->comm, rc, "choosing the aggregation tier") < 0)
            break;
        int enospc = 0;
        rc         = tagg_tier_alloc(ops, &f->cfg, f->comm, size, &e->buf, &enospc);
        if (rc == 0) {
            e->win  = e->buf.win;
            e->base = e->buf.base;
            break;
        }
        /* Out of space on some node: that node leaves the tier out, all try again. */
        int node_full = 0, any_full = 0;
        MPI_Allreduce(&enospc, &node_full, 1, MPI_INT, MPI_MAX, node);
        MPI_Allreduce(&node_full, &any_full, 1, MPI_INT, MPI_MAX, f->comm);
        if (forced || !any_full || attempt >= TAGG_MAX_TIERS)
            break;
        if (node_full) {
            excluded |= 1u << e->tier;
            snprintf(fallback + strlen(fallback), sizeof fallback - strlen(fallback), "%s%s",
                     fallback[0] ? "," : "", ops->name);
        }
    }
    if (rc < 0)
        return -1;
    /* every rank knows the same fallback list only for its node: gather names */
    int nfb = fallback[0] != 0, anyfb = 0;
    MPI_Allreduce(&nfb, &anyfb, 1, MPI_INT, MPI_MAX, f->comm);
    if (anyfb && !fallback[0])
        snprintf(fallback, sizeof fallback, "other-node");
    if (tiers_in_use(f, e, fallback, emulated) < 0) {
        tagg_tier_free(&e->buf);
        return -1;
    }
    /* the election costs this rank's candidacy in its own node's tier */
    return 0;
}
