/* The engine's resources: which node each rank is on, which tier each node's
 * aggregation buffers live in, and the buffers themselves (MA-TAPIOCA section
 * 3.2, MA-TAPIOCA_AGGRTIER and MA-TAPIOCA_PERSISTENCY; seed 002).
 *
 * Made once per communicator (backend_tapioca.c caches them across files), as
 * cheaply as MPI allows:
 *   1. tagg_engine_machine_row: every rank measures what its node offers in
 *      each tier of the model's table (tier ops: free memory, memkind, statvfs
 *      of the NVR directory, capped by the table and hbm_capacity /
 *      dram_capacity / nvr_capacity) and hashes its host name; these rows ride
 *      in the describe gather of the file's first call (engine_plan.c: no
 *      gather of their own), and tagg_engine_machine makes of them the node of
 *      every rank (no MPI_Comm_split_type)
 *      and each node's figures (those of its first rank). Every rank then
 *      computes every node's tier alike: forced by aggr_tier (an error when
 *      unavailable or lacking the persistency), or the model's choice
 *      (tagg_tier_choose: min Cost_A + Cost_T over the tiers that meet the
 *      capacity rule for ranks x buffers x buffer_size and the persistency
 *      rule). A failure rides in the rows: every rank fails alike.
 *   2. tagg_engine_buffers, at the first call that aggregates: when every node
 *      uses DRAM, MPI_Alloc_mem + one MPI_Win_create (far cheaper than
 *      MPI_Win_allocate's shared-memory segment) and one agreement; otherwise
 *      the tier layer's collective memAlloc, and when a tier runs out of space
 *      (ENOSPC / no memory) on a node, and the tier was the model's choice,
 *      that node leaves the tier out and every node allocates again
 *      (next-best tier); forced, or no tier left: every rank fails that
 *      transfer with the reason. None of its data has moved yet. */
#include "dio.h"
#include "engine.h"
#include "error.h"
#include "mpi_wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REASON_LEN 160

/* Rough figures for the generic topology built from host names: 1 us per
 * hop, 10 GB/s links. Only ratios matter for the election. */
#define GENERIC_LATENCY 1e-6
#define GENERIC_BANDWIDTH 10e9

typedef tagg_engine_mrow_t node_row_t;

static uint64_t cap_of(const tagg_config_t *cfg, tagg_tier_kind_t k)
{
    int64_t c = k == TAGG_TIER_HBM ? cfg->hbm_capacity : k == TAGG_TIER_DRAM ? cfg->dram_capacity
              : k == TAGG_TIER_NVR ? cfg->nvr_capacity : 0;
    return c > 0 ? (uint64_t)c : UINT64_MAX;
}

static uint64_t umin(uint64_t a, uint64_t b) { return a < b ? a : b; }

static uint64_t hash_text(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h ? h : 1;
}

/* What this rank's node offers (every rank measures; the node's first rank's figures are used). */
static void measure(const tagg_file_t *f, const tagg_engine_t *e, node_row_t *n)
{
    char reason[REASON_LEN];
    for (int i = 0; i < e->tiers.ntiers; i++) {
        const tagg_tier_t     *t   = &e->tiers.tier[i];
        const tagg_tier_ops_t *ops = tagg_tier_for_kind(t->kind);
        if (i == e->tiers.target || !ops)
            continue;
        reason[0] = 0;
        if (ops->available(&f->cfg, reason, sizeof reason)) {
            n->usable |= 1u << i;
            n->capacity[i] = umin(umin(ops->capacity(&f->cfg), t->capacity), cap_of(&f->cfg, t->kind));
            if (!strncmp(reason, "emulated", 8))
                n->emulated |= 1u << i;
        }
    }
}

/* Availability only: the tiers cache what is slow to ask (memkind). The
 * capacities (free memory from /proc/meminfo, statvfs of the NVR directory)
 * change and are asked where they are used, at the tier choice; asking them
 * here cost every open a dozen system calls. */
void tagg_engine_probe_tiers(const tagg_file_t *f, const tagg_engine_t *e)
{
    char reason[REASON_LEN];
    for (int i = 0; i < e->tiers.ntiers; i++) {
        const tagg_tier_ops_t *ops = tagg_tier_for_kind(e->tiers.tier[i].kind);
        if (i != e->tiers.target && ops)
            (void)ops->available(&f->cfg, reason, sizeof reason);
    }
}

static const tagg_tier_ops_t *forced_ops(const tagg_file_t *f)
{
    return f->cfg.aggr_tier == TAGG_AGGR_TIER_AUTO ? NULL : tagg_tier_find(tagg_aggr_tier_names[f->cfg.aggr_tier]);
}

/* A forced tier: usable here with the persistency asked? (local) */
static int check_forced(tagg_file_t *f, tagg_engine_t *e, int *emulated)
{
    const tagg_tier_ops_t *forced = forced_ops(f);
    char                   reason[REASON_LEN] = "";
    if (!forced || !forced->available(&f->cfg, reason, sizeof reason)) {
        TAGG_ERR(TAGG_E_CONFIG, "aggr_tier=%s: the tier is not available: %s", tagg_aggr_tier_names[f->cfg.aggr_tier],
                 forced ? reason : "not in the registry");
        return -1;
    }
    if (forced->persistency() < e->opts.persistency) {
        TAGG_ERR(TAGG_E_CONFIG, "aggr_tier=%s: the tier keeps no data for the job (persistency=%s needs NVR)",
                 tagg_aggr_tier_names[f->cfg.aggr_tier], tagg_persistency_names[f->cfg.persistency]);
        return -1;
    }
    *emulated = forced->kind == TAGG_TIER_HBM && !strncmp(reason, "emulated", 8);
    return 0;
}

/* Every node's tier, from every node's figures: the same on every rank. */
static int choose_all(tagg_file_t *f, tagg_engine_t *e, const tagg_engine_node_t *nodes, int nn, int *node_tier)
{
    const tagg_tier_ops_t *forced = forced_ops(f);
    if (forced) {
        int idx = tagg_tiers_find(&e->tiers, tagg_tier_kind_name(forced->kind));
        for (int k = 0; k < nn; k++)
            node_tier[k] = idx >= 0 && idx != e->tiers.target ? idx : e->tiers.source;
        return 0;
    }
    for (int k = 0; k < nn; k++) {
        tagg_tier_choice_t ch;
        tagg_err_t         err;
        if (tagg_tier_choose(e->topo, &e->tiers, &e->opts, &nodes[k].t, nodes[k].leader, nodes[k].excluded, &ch,
                             &err) < 0) {
            TAGG_ERR(TAGG_E_CONFIG, "tier choice: %s", err.msg);
            return -1;
        }
        if (ch.tier < 0) {
            TAGG_ERR(TAGG_E_CONFIG,
                     "no memory tier can hold the aggregation buffers of this node (%d ranks x %d buffers x %llu "
                     "bytes, persistency=%s): %s",
                     nodes[k].t.ranks, e->nbuf, (unsigned long long)e->bufsize,
                     tagg_persistency_names[f->cfg.persistency], ch.why);
            return -1;
        }
        node_tier[k] = ch.tier;
        if (f->cfg.verbose >= 2 && f->rank == nodes[k].leader) {
            printf("tagg: tier choice on the node of rank %d: %s (Cost_A %.3g s + Cost_T %.3g s)%s%s\n", f->rank,
                   e->tiers.tier[ch.tier].name, ch.cost.cost_a, ch.cost.cost_t, ch.why[0] ? "; left out: " : "",
                   ch.why);
            fflush(stdout);
        }
    }
    return 0;
}

void tagg_engine_machine_row(tagg_file_t *f, tagg_engine_t *e, tagg_engine_mrow_t *mine)
{
    int  emulated = 0, hl = 0;
    char host[MPI_MAX_PROCESSOR_NAME + 1] = "";
    memset(mine, 0, sizeof *mine);
    e->opts.persistency = f->cfg.persistency == TAGG_PERSISTENCY_JOB ? TAGG_PERSIST_JOB : TAGG_PERSIST_NONE;
    MPI_Get_processor_name(host, &hl);
    mine->key = hash_text(host);
    measure(f, e, mine);
    if (forced_ops(f) || f->cfg.aggr_tier != TAGG_AGGR_TIER_AUTO)
        if (check_forced(f, e, &emulated) < 0)
            mine->failed = f->rank + 1;
    int hbm = tagg_tiers_find(&e->tiers, "HBM");
    if (emulated && hbm >= 0)
        mine->emulated |= 1u << hbm;
}

int tagg_engine_machine(tagg_file_t *f, tagg_engine_t *e, tagg_topology_t **r_topo, tagg_engine_node_t **r_nodes,
                        int **r_node_tier)
{
    int P = f->size, rc = 0, mine_failed = e->rows[f->rank].machine.failed;
    /* the rows came with the describe gather of this call */
#define rows(r) (e->rows[(r)].machine)
    for (int r = 0; r < P; r++)
        if (rows(r).failed) {
            if (!mine_failed)
                TAGG_ERR(TAGG_E_CONFIG, "choosing the aggregation tier failed on rank %d (see that rank's error stack)",
                         r);
            return -1;
        }
    /* ranks -> nodes: from the topology file when one is configured, else by host */
    tagg_topology_t *topo = NULL;
    if (!e->topo) {
        int       *rank_node = malloc((size_t)P * sizeof *rank_node);
        uint64_t  *keys      = malloc((size_t)P * sizeof *keys);
        int        nk        = 0;
        tagg_err_t err;
        if (!rank_node || !keys) {
            TAGG_ERR(TAGG_E_NOMEM, "out of memory");
            rc = -1;
        }
        for (int r = 0; r < P && rc == 0; r++) { /* node ids in order of first rank */
            int k = 0;
            while (k < nk && keys[k] != rows(r).key)
                k++;
            if (k == nk)
                keys[nk++] = rows(r).key;
            rank_node[r] = k;
        }
        if (rc == 0 && tagg_topology_generic_from_ranks(P, rank_node, 0, NULL, GENERIC_LATENCY, GENERIC_BANDWIDTH,
                                                        &topo, &err) < 0) {
            TAGG_ERR(TAGG_E_CONFIG, "topology: %s", err.msg);
            rc = -1;
        }
        free(rank_node), free(keys);
        if (rc < 0)
            return -1; /* deterministic (out of memory here: the call's agreement catches it) */
        e->topo = topo;
    }
    int                 nn        = tagg_topology_nnodes(e->topo);
    tagg_engine_node_t *nodes     = calloc((size_t)nn, sizeof *nodes);
    int                *node_tier = calloc((size_t)nn, sizeof *node_tier);
    if (!nodes || !node_tier) {
        TAGG_ERR(TAGG_E_NOMEM, "out of memory");
        rc = -1;
    }
    for (int k = 0; k < nn && rc == 0; k++)
        nodes[k].leader = -1;
    for (int r = 0; r < P && rc == 0; r++) {
        tagg_engine_node_t *n = &nodes[tagg_topology_rank_node(e->topo, r)];
        if (n->leader < 0) {
            n->leader   = r;
            n->emulated = rows(r).emulated;
            for (int i = 0; i < e->tiers.ntiers; i++) {
                n->t.usable[i]   = (rows(r).usable >> i) & 1u;
                n->t.capacity[i] = rows(r).capacity[i];
            }
        }
        n->t.ranks++;
    }
    for (int k = 0; k < nn && rc == 0; k++)
        if (nodes[k].leader < 0)
            nodes[k].leader = 0; /* a node of the topology file without ranks of this file */
    if (rc == 0)
        rc = choose_all(f, e, nodes, nn, node_tier);
    if (rc < 0) {
        free(nodes), free(node_tier);
        if (topo)
            tagg_topology_free(topo);
        e->topo = topo == e->topo ? NULL : e->topo;
        return -1;
    }
    *r_topo = topo, *r_nodes = nodes, *r_node_tier = node_tier;
    return 0;
#undef rows
}

/* "tier=DRAM", "tier=DRAM,NVR tier_fallback=NVR hbm=emulated" (from every node's choice). */
static void describe_tiers(tagg_file_t *f, tagg_engine_t *e, const tagg_engine_node_t *nodes, const int *node_tier,
                           char *text, size_t len)
{
    const tagg_tier_ops_t *forced = forced_ops(f);
    unsigned               used = 0, fell = 0;
    int                    em = 0, nn = tagg_topology_nnodes(e->topo);
    for (int k = 0; k < nn; k++) {
        const tagg_tier_ops_t *ops = forced ? forced : tagg_tier_for_kind(e->tiers.tier[node_tier[k]].kind);
        for (int i = 0; tagg_tier_registry[i]; i++)
            if (tagg_tier_registry[i] == ops)
                used |= 1u << i;
        em |= (nodes[k].emulated >> node_tier[k]) & 1u;
        for (int t = 0; t < e->tiers.ntiers; t++)
            if (nodes[k].excluded & (1u << t)) {
                const tagg_tier_ops_t *x = tagg_tier_for_kind(e->tiers.tier[t].kind);
                for (int i = 0; x && tagg_tier_registry[i]; i++)
                    if (tagg_tier_registry[i] == x)
                        fell |= 1u << i;
            }
    }
    char names[64] = "", fb[64] = "";
    for (int i = 0; tagg_tier_registry[i]; i++) {
        if (used & (1u << i))
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", names[0] ? "," : "",
                     tagg_tier_registry[i]->name);
        if (fell & (1u << i))
            snprintf(fb + strlen(fb), sizeof fb - strlen(fb), "%s%s", fb[0] ? "," : "", tagg_tier_registry[i]->name);
    }
    snprintf(text, len, "tier=%s%s%s%s", names, fb[0] ? " tier_fallback=" : "", fb, em ? " hbm=emulated" : "");
}

/* Every node DRAM: the tier's memory + MPI_Win_create, then one agreement. */
static int buffers_dram(tagg_file_t *f, const tagg_tier_ops_t *ops, size_t size, tagg_tier_buf_t *b)
{
    int rc = 0, code, enospc = 0;
    memset(b, 0, sizeof *b);
    b->ops = ops, b->win = MPI_WIN_NULL, b->size = size, b->rank = f->rank;
    if (ops->mem_alloc(b, &f->cfg, size, &enospc) < 0)
        b->base = NULL, rc = -1;
    code = MPI_Win_create(b->base, rc == 0 ? (MPI_Aint)size : 0, 1, MPI_INFO_NULL, f->comm, &b->win);
    if (code != MPI_SUCCESS) {
        TAGG_ERR_MPI("MPI_Win_create (aggregation buffers)", code);
        b->win = MPI_WIN_NULL;
        rc     = -1;
    }
    if (tagg_agree(f->comm, rc, "allocating the aggregation buffers") < 0) {
        if (b->win != MPI_WIN_NULL)
            MPI_Win_free(&b->win);
        if (b->base)
            ops->mem_free(b);
        memset(b, 0, sizeof *b);
        b->win = MPI_WIN_NULL;
        return -1;
    }
    return 0;
}

int tagg_engine_buffers(tagg_file_t *f, tagg_engine_t *e, tagg_engine_node_t *nodes, int *node_tier,
                        tagg_tier_buf_t *buf, char *tier_text, size_t len)
{
    const tagg_tier_ops_t *forced = forced_ops(f);
    size_t                 size   = (size_t)(e->bufsize * (uint64_t)e->nbuf) + TAGG_DIO_ALIGN; /* + a round's shift (engine_move.c) */
    int                    nn = tagg_topology_nnodes(e->topo), my_node = tagg_topology_rank_node(e->topo, f->rank);
    int                    all_dram = !forced || forced == &tagg_tier_dram;
    for (int k = 0; k < nn && all_dram; k++)
        all_dram = e->tiers.tier[node_tier[k]].kind == TAGG_TIER_DRAM;
    int rc = -1;
    if (all_dram)
        rc = buffers_dram(f, &tagg_tier_dram, size, buf);
    else
        for (int attempt = 0; attempt <= TAGG_MAX_TIERS; attempt++) {
            const tagg_tier_ops_t *ops    = forced ? forced : tagg_tier_for_kind(e->tiers.tier[node_tier[my_node]].kind);
            int                    enospc = 0;
            if ((rc = tagg_tier_alloc(ops, &f->cfg, f->comm, size, buf, &enospc)) == 0 || forced)
                break;
            /* Out of space on some node: that node leaves the tier out, all choose and try again. */
            int *all = malloc((size_t)f->size * sizeof *all), any = 0;
            int  code = all ? tagg_mpi_allgather(&enospc, 1, MPI_INT, all, 1, MPI_INT, f->comm) : MPI_ERR_NO_MEM;
            if (tagg_agree(f->comm, code == MPI_SUCCESS ? 0 : -1, "choosing the aggregation tier again") < 0) {
                free(all);
                break;
            }
            for (int r = 0; r < f->size; r++)
                if (all[r]) {
                    int k = tagg_topology_rank_node(e->topo, r);
                    nodes[k].excluded |= 1u << node_tier[k];
                    any = 1;
                }
            free(all);
            if (!any || choose_all(f, e, nodes, nn, node_tier) < 0)
                break;
        }
    if (rc < 0)
        return -1;
    e->tier = node_tier[my_node];
    describe_tiers(f, e, nodes, node_tier, tier_text, len);
    return 0;
}
