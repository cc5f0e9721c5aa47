/* The tier of one node's aggregation buffers, chosen by the cost model
 * (MA-TAPIOCA section 3.2: min Cost_A + Cost_T over the tiers that meet the
 * capacity and persistency rules). Pure: no MPI, unit-tested in
 * tests/core/test_tier_choice.c. */
#include "tier.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(tagg_err_t *err, int code, const char *msg)
{
    if (err) {
        err->code = code;
        snprintf(err->msg, sizeof err->msg, "%s", msg);
    }
    return code;
}

int tagg_tier_choose(const tagg_topology_t *topo, const tagg_tiers_t *tiers, const tagg_model_opts_t *opts,
                     const tagg_node_tiers_t *node, int cand_rank, unsigned excluded, tagg_tier_choice_t *choice,
                     tagg_err_t *err)
{
    int    nranks = tagg_topology_nranks(topo), ranks = node->ranks > 0 ? node->ranks : 1;
    size_t used   = 0;
    memset(choice, 0, sizeof *choice);
    choice->tier = -1;
    if (nranks < 1 || cand_rank < 0 || cand_rank >= nranks)
        return fail(err, TAGG_EINVAL, "tier choice: candidate rank outside the topology");
    tagg_producer_t *prod = malloc((size_t)nranks * sizeof *prod);
    if (!prod)
        return fail(err, TAGG_ENOMEM, "out of memory");
    /* Nominal group: the aggregator's buffers filled once, by every rank. */
    uint64_t fill = (uint64_t)(opts->n_buff > 0 ? opts->n_buff : 1) * opts->s_buff;
    uint64_t each = fill / (uint64_t)nranks ? fill / (uint64_t)nranks : 1;
    for (int r = 0; r < nranks; r++)
        prod[r] = (tagg_producer_t){r, each};
    /* Capacity: every rank of the node holds N_buff x S_buff, so the rule
     * C_A >= N_buff x S_buff is applied to each rank's share of the node. */
    tagg_tiers_t t = *tiers;
    for (int i = 0; i < t.ntiers; i++)
        if (i != t.target)
            t.tier[i].capacity = node->capacity[i] / (uint64_t)ranks;
    double best = INFINITY;
    for (int i = 0; i < t.ntiers; i++) {
        tagg_cost_t c;
        const char *skip = NULL;
        char        note[96];
        if (i == t.target)
            continue;
        if (!node->usable[i])
            skip = "unavailable";
        else if (excluded & (1u << i))
            skip = "failed to allocate";
        else {
            int rc = tagg_candidate_cost(topo, &t, prod, (size_t)nranks, cand_rank, i, opts, &c, err);
            if (rc) {
                free(prod);
                return rc;
            }
            if (!c.persistency_ok)
                skip = "persistency";
            else if (!c.capacity_ok) {
                snprintf(note, sizeof note, "capacity %llu B < %llu B needed",
                         (unsigned long long)node->capacity[i], (unsigned long long)(c.need * (uint64_t)ranks));
                skip = note;
            }
            else if (c.total < best) {
                best = c.total, choice->tier = i, choice->cost = c;
            }
        }
        if (skip && used < sizeof choice->why) {
            int n = snprintf(choice->why + used, sizeof choice->why - used, "%s%s: %s", used ? "; " : "",
                             t.tier[i].name, skip);
            used = n > 0 ? used + (size_t)n : used;
            if (used > sizeof choice->why)
                used = sizeof choice->why;
        }
    }
    free(prod);
    return TAGG_OK;
}
